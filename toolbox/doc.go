// Package toolbox owns an agent's toolbox: the root's git repository
// (gitbackend.Repo), the tool registry it carries (meta.json) and the write
// strategy that publishes a change (direct push, or a pull-request branch).
// A [Box] is the one owner of persistence:
//
//   - it implements tools.Persister: every tool that changes the toolbox
//     (write_file, patch_file, apply_patch, delete_file, git_commit, shell,
//     exec_command / write_stdin, and exec_tool for what a run wrote)
//     hands its change to [Box.Persist];
//   - its catalog (registry + meta.json) is the only gitbackend hook: during
//     a replay gitbackend asks it to regenerate meta.json from the merged
//     tree, and the catalog touches nothing but the registry and the root;
//   - [Box.SandboxFS] is the sandbox bridge's filesystem (tgp.read_file,
//     tgp.write_file, tgp.list_files), under the file tools' jail policy;
//   - it keeps the root fresh ([Box.Refresh]) and the pull-request session
//     ([Box.SessionPR], [Box.EndSession]).
//
// Calls go down the layers and never back up: nothing here calls the
// kernel, a tool or the tool set (package tools is used for the framework's
// value types — Change, Persisted, Error — and its jail policy,
// tools.AgentPath, a pure function).
//
// write_file:
//
//	Kernel.Call → tools.Set.Call (schema, approval, events)
//	  → write_file (tools: jail, vfs write)
//	  → tools.Persister = Box.Persist
//	  → catalog.record (registry, meta.json written to the root)
//	  → gitbackend.Repo.Persist (commit, push) or PersistBranch (pr) → PROpener
//	      replay: gitbackend → catalog.RegenerateChanged (registry, root)
//
// exec_tool:
//
//	Kernel.Call → tools.Set.Call → exec_tool (tools)
//	  → sandbox.Runner.Exec → tgp.write_file
//	  → Box.SandboxFS().WriteFile (tools.AgentPath, vfs write)
//	  run ends: exec_tool → Box.Persist → (as write_file)
//
// The repository is opened by [Box.Open] (the kernel's Boot), not by [New]:
// building a Box, and the tools on it, touches neither the disk nor the
// remote, so listing tools and schemas works anywhere.
package toolbox
