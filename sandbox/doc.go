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
// Array.prototype.join), a regexp2 match timeout, and a watchdog that reads
// the Go heap through runtime/metrics and interrupts a run whose heap growth
// passes the memory limit. The watchdog sees the whole process heap, so
// concurrent executions share the budget; a hard per-run cap needs a worker
// process with RLIMIT_AS, which this package does not do.
package sandbox
