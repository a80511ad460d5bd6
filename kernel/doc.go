// Package kernel wires TGP together and loads its configuration (koanf:
// defaults < tgp.config.yaml < TGP_* < Go options), behind one small API
// for host programs:
//
//	k, err := kernel.New(ctx, kernel.WithConfigFile("tgp.config.yaml"))
//	if err := k.Boot(ctx); err != nil { ... }
//	res, err := k.Call(ctx, "write_file", json.RawMessage(`{"path":"tools/x.ts","content":"..."}`))
//	defer k.Shutdown(ctx)
//
// New builds, in this order, the jailed root (vfs), the toolbox
// (toolbox.Box: the repository, the registry and the write strategy), and
// the toolsets on it (WithToolsets, else the registered ones: every one
// in a program that imports kernel/all): files, sandbox (check_tool /
// exec_tool / exec_sql on the sandbox and the database), git, shell; then
// its own find_tools and request_scope_expansion. The kernel package
// links no engine: a toolset's heavy dependencies come with its package.
// Boot opens the toolbox (clone or pull, load the registry). The kernel
// holds no persistence logic of its own: a change goes down the layers and
// nothing below calls back up into the kernel.
//
// write_file:
//
//	Kernel.Call → tools.Set.Call → write_file (jail, vfs write)
//	  → toolbox.Box.Persist → registry / meta.json → gitbackend → remote
//
// exec_tool:
//
//	Kernel.Call → tools.Set.Call → exec_tool → sandbox.Runner
//	  → tgp.write_file → toolbox.Box.SandboxFS (jail, vfs write)
//	  run ends: exec_tool → toolbox.Box.Persist → (as write_file)
//
// Before a call that reads the toolbox, a long-lived kernel asks the
// toolbox to check the remote (git.refresh_interval, Box.MaybeRefresh).
//
// request_scope_expansion (scope.go):
//
//	Kernel.Call → tools.Set.Call → request_scope_expansion → Kernel.expandScope
//	  → tools.Set.Ask (the host's Approver, or the call's: MCP elicitation)
//	  allow_once: a shell.Grant the session's next Kernel.Call carries
//	  add_to_scope: the configuration file's list (configlist.go), then the shell
//
// Host functions (WithSandboxFunc) are sandbox.HostFuncs the runner
// installs as tgp.<name>; Scaffold declares them in tools/tgp-env.d.ts.
//
// Imports go one way: cmd/tgp → kernel/all → kernel/toolsets/* →
// kernel/toolset → (toolbox, tools, vfs); kernel → (kernel/toolset,
// toolbox, tools, forge, vfs); toolbox → (gitbackend, registry, tools for
// its types); nothing below imports the kernel.
package kernel
