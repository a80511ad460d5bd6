// Package sandbox runs agent-written TypeScript tools on goja.
//
// A tool is compiled in process with esbuild (TypeScript → CommonJS,
// ES2022, inline source map, so stack traces show TS line:col) and the goja
// program is cached by content hash. Every execution gets a fresh Runtime
// (about a microsecond) that is locked down before the tool sees it: no
// eval, no Function constructor (also through .constructor on plain, async
// and generator functions), no process, no host environment. What a tool
// can reach is the `tgp` bridge (jailed files, allow-listed fetch, SQL) and
// `require` of other tools and allow-listed modules.
//
// Limits: a wall-clock deadline enforced with Runtime.Interrupt (which no
// try/catch/finally can swallow, also after an await), a call-stack depth,
// caps on the built-ins that amplify memory in one native call
// (String.prototype.repeat, padStart/padEnd, Array(n), Array.prototype.fill,
// Array.prototype.join), a per-run budget that ArrayBuffer, every typed
// array and JSON.parse are charged against before they allocate (so a
// hostile `new Float64Array(2e8)` ends in memory_limit deterministically,
// touched or not; Go maps such pages lazily, so the watchdog alone would
// see it late or never), a regexp2 match timeout, and a watchdog that reads
// the Go heap through runtime/metrics and interrupts a run whose heap growth
// passes the memory limit (maps, strings, objects built in JS loops). The
// watchdog sees the whole process heap, so concurrent executions share that
// part of the budget; a hard per-run cap needs a worker process with
// RLIMIT_AS, which this package does not do yet.
package sandbox
