// Command minimal is the smallest host of TGP: the file tools, the git
// tools and persistence, nothing else (no sandbox, no shell, no SQL, no
// code host's SDK, no telemetry SDK). It clones or pulls REMOTE into ROOT,
// writes tools/hello.ts through write_file (committed and pushed, as an
// agent's write is), and prints the commit.
//
//	go run ./examples/minimal REMOTE ROOT
//
// It builds the kernel with two toolsets only (kernel.WithToolsets:
// files and git): the kernel package links no sandbox, shell, SQL driver,
// journal or code host's SDK, and a serverless host pays for every
// package it links on each cold start. examples/minimal's test keeps the
// heavy packages out (go list -deps).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/kernel/toolsets/files"
	"github.com/tgp-go/tgp/kernel/toolsets/git"
	"github.com/tgp-go/tgp/tools"
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
	k, err := kernel.New(ctx,
		kernel.WithToolsets(files.Toolset(), git.Toolset()),
		kernel.WithRoot(root),
		kernel.WithSetting("git.remote", remote),
		// A fixed identity: the example must not depend on the machine's.
		kernel.WithSetting("git.author.name", "minimal"),
		kernel.WithSetting("git.author.email", "minimal@example.com"),
		kernel.WithSetting("git.lock_dir", "off"),
	)
	if err != nil {
		return "", err
	}
	defer k.Shutdown(ctx)
	if err := k.Boot(ctx); err != nil {
		return "", err
	}
	args, err := json.Marshal(map[string]string{"path": "tools/hello.ts", "content": hello})
	if err != nil {
		return "", err
	}
	res, err := k.Call(ctx, "write_file", args)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	if w, ok := res.Value.(tools.WriteResult); ok && w.Persisted != nil && w.Commit != "" {
		return w.Commit, nil
	}
	// Nothing to commit: the remote has this tools/hello.ts already, in
	// the commit the root is at.
	st, err := k.Status(ctx)
	if err != nil || st.Head == "" {
		return "", fmt.Errorf("write_file persisted nothing (%+v): %v", res.Value, err)
	}
	return st.Head, nil
}
