// Package kernel wires TGP together: configuration (koanf), the jailed VFS,
// the git backend (hydrate on Boot, persist on every change), the tool
// registry (meta.json), the sandbox, the database and the forge, behind one
// small API for host programs:
//
//	k, err := kernel.New(ctx, kernel.WithConfigFile("tgp.config.yaml"))
//	if err := k.Boot(ctx); err != nil { ... }
//	res, err := k.Call(ctx, "write_file", json.RawMessage(`{"path":"tools/x.ts","content":"..."}`))
//	defer k.Shutdown(ctx)
//
// Data flows one way: cmd/tgp → kernel → tools → (vfs, gitbackend, sandbox,
// forge); nothing below imports the kernel.
package kernel
