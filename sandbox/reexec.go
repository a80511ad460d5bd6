package sandbox

// init serves a sandbox worker when this process was started as one
// (first argument [WorkerSubcommand]), before any main runs: a worker is
// the program that embeds the kernel re-executed, and a host that did not
// call [ServeWorkerIfRequested] first in main would otherwise run its own
// main again in every worker. Any program that can start a worker links
// this package, so its initialisation always comes first.
func init() { ServeWorkerIfRequested() }
