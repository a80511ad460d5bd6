package shell

// init serves the Landlock helper when this process was started as one
// (first argument [ExecSubcommand]), before any main runs. The helper is
// the program that embeds the kernel re-executed: were it left to main to
// call [ServeExecIfRequested], a host that does not would run its own
// main again in every helper (its side effects included) while the kernel
// waited for an answer. Package initialisation runs before main in every
// program that can start a helper, since starting one needs this package.
func init() { ServeExecIfRequested() }
