// Command minimal is the smallest host of TGP: the file tools, the git
// tools and persistence, nothing else (no sandbox, no shell, no SQL, no
// code host's SDK, no telemetry SDK). It clones or pulls REMOTE into ROOT,
// writes tools/hello.ts through write_file (committed and pushed, as an
// agent's write is), and prints the commit.
//
//	go run ./examples/minimal REMOTE ROOT
//
// It wires the layers the kernel wires (vfs, toolbox, tools, gittools)
// itself: kernel.New still links the sandbox, the shell and the SQL
// drivers (issue #44's named toolsets are what takes them out), and a
// serverless host pays for every package it links on each cold start.
// examples/minimal's test keeps the heavy packages out (go list -deps).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/toolbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/gittools"
	"github.com/tgp-go/tgp/vfs"
)

const hello = "/** Says hello. */\nexport default (a: { name: string }) => `hello, ${a.name}`;\n"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: minimal REMOTE ROOT")
		os.Exit(2)
	}
	commit, err := run(context.Background(), os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "minimal:", err)
		os.Exit(1)
	}
	fmt.Println(commit)
}

// run boots the root from remote, writes tools/hello.ts and returns the
// commit that persisted it.
func run(ctx context.Context, remote, root string) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("root: %w", err)
	}
	fsys, err := vfs.NewOS(root)
	if err != nil {
		return "", fmt.Errorf("root: %w", err)
	}
	box := toolbox.New(fsys, toolbox.Config{Git: gitbackend.Config{Remote: remote,
		// A fixed identity: the example must not depend on the machine's.
		Author: gitbackend.Identity{Name: "minimal", Email: "minimal@example.com"}}})
	if err := box.Open(ctx); err != nil {
		return "", fmt.Errorf("boot: %w", err)
	}
	defer box.Close(ctx)
	set := tools.NewSet()
	if err := set.Add(tools.FileTools(fsys, box, tools.FileToolsConfig{})...); err != nil {
		return "", err
	}
	if err := set.Add(gittools.Tools(gittools.Deps{FS: fsys, Repo: box.Repo, Persister: box})...); err != nil {
		return "", err
	}
	args, err := json.Marshal(map[string]string{"path": "tools/hello.ts", "content": hello})
	if err != nil {
		return "", err
	}
	res, err := set.Call(ctx, "write_file", args)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	if w, ok := res.Value.(tools.WriteResult); ok && w.Persisted != nil && w.Commit != "" {
		return w.Commit, nil
	}
	// Nothing to commit: the remote has this tools/hello.ts already, in
	// the commit the root is at.
	st, err := box.Status(ctx)
	if err != nil || st.Head == "" {
		return "", fmt.Errorf("write_file persisted nothing (%+v): %v", res.Value, err)
	}
	return st.Head, nil
}
