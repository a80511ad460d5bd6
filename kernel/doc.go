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
// the tools on it: the file tools, check_tool / exec_tool / exec_sql on the
// sandbox and the database, the git tools, the shell tools and find_tools.
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
// Imports go one way: cmd/tgp → kernel → (toolbox, tools, sandbox, sqldb,
// shell, forge, vfs); toolbox → (gitbackend, registry, forge, tools for its
// types); nothing below imports the kernel.
package kernel
