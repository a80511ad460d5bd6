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
// A tool may narrow that with `export const permissions = {...}` (read
// statically, see Permissions): the run gets the intersection with the
// runner's configuration. Secrets are brokered: tgp.secret(name) is a
// per-run placeholder that the host (never the worker) swaps for the value
// in a fetch to the secret's URLs, and swaps back out of what returns.
//
// Limits: a wall-clock deadline enforced with Runtime.Interrupt (which no
// try/catch/finally can swallow, also after an await), a call-stack depth,
// caps on the array built-ins that amplify memory in one native call
// (Array(n), Array.prototype.fill, Array.from), a per-run budget that
// everything a script can allocate at once is charged against before it
// is allocated, and a regexp2 match timeout. Charged: ArrayBuffer, every
// typed array, JSON.parse, and every string however it is made: the
// compiled programs' `+`, `+=` and template literals are rewritten to call
// a charging helper (strcap.go), and repeat, padStart/padEnd, join,
// concat, String.raw, replace, replaceAll and JSON.stringify are wrapped.
// So a hostile `new Float64Array(2e8)` or `s = s + s` ends in memory_limit
// deterministically, before the allocation (Go maps large allocations
// lazily, so a watchdog alone would see them late or never). A watchdog
// reads the Go heap through runtime/metrics and interrupts a run whose
// heap growth passes the memory limit (maps and objects built in JS
// loops). It sees the whole process heap, so concurrent executions share
// that part of the budget; process isolation gives each run a worker
// process under RLIMIT_DATA and RLIMIT_AS as the hard cap.
package sandbox
