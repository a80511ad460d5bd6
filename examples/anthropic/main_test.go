package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/examples/internal/replay"
)

// TestAgentLoopOnRecordedExchange runs the example's agent loop with the
// real SDK against the recorded exchange: every request passes the API's
// checks, every recorded turn sees the kernel's real tool results, and the
// forged tool is on the remote's main branch afterwards.
func TestAgentLoopOnRecordedExchange(t *testing.T) {
	steps, err := replay.Load(recording)
	if err != nil {
		t.Fatal(err)
	}
	srv := replay.Start(replay.Anthropic, steps)
	defer srv.Close()
	work := t.TempDir()
	var out bytes.Buffer
	final, err := run(context.Background(), &out, work, "claude-sonnet-5-5", replayOptions(srv.URL)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if err := srv.Err(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(final, "2 + 3 = 5") {
		t.Fatalf("final answer %q", final)
	}
	repo, err := git.PlainOpen(work + "/toolbox.git")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.File("tools/math/add.ts")
	if err != nil {
		t.Fatalf("the forged tool is not on the remote: %v", err)
	}
	if body, _ := f.Contents(); !strings.Contains(body, "args.a + args.b") {
		t.Fatalf("remote tools/math/add.ts: %q", body)
	}
}
