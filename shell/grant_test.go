package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func runWith(t *testing.T, r *Runner, g Grant, line string) (*Result, error) {
	t.Helper()
	return runIn(t, r, g, ".", line)
}

func runIn(t *testing.T, r *Runner, g Grant, dir, line string) (*Result, error) {
	t.Helper()
	ctx := WithGrant(context.Background(), g)
	return r.Run(ctx, Request{Command: line, Workdir: dir, Timeout: 20 * time.Second})
}

// A Grant widens one line: an unlisted command runs in the category it was
// granted, and the next line without the grant is refused again.
func TestGrantAllowsCommandForOneLine(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	if _, err := runLine(t, r, "printf x | md5sum | rev"); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	var v *Violation
	if _, err := runLine(t, r, "id -u"); !errors.As(err, &v) || v.Reason != ReasonNotAllowed {
		t.Fatalf("id without grant: %v", err)
	}
	res, err := runWith(t, r, Grant{Commands: map[string]Category{"id": ReadOnly}}, "id -u")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("id with grant: %v %+v", err, res)
	}
	if _, err := runLine(t, r, "id -u"); !errors.As(err, &v) || v.Reason != ReasonNotAllowed {
		t.Fatalf("id after the grant: %v", err)
	}
	// Deny wins over a grant.
	if _, err := runWith(t, r, Grant{Commands: map[string]Category{"curl": ReadOnly}}, "curl -V"); !errors.As(err, &v) || v.Reason != ReasonDenied {
		t.Fatalf("curl with grant: %v", err)
	}
}

// A dangerous command granted once runs once: a second rm in the same line
// is asked about (and refused without an approver), and so is the next
// line.
func TestGrantOnceRunsDangerousOnce(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	once := Grant{Once: []string{"rm"}}
	var ae *ApprovalError
	// Two literal rm in one line: the grant covers one, so the line is
	// refused before anything runs.
	if _, err := runWith(t, r, once, "rm notes/n.txt; rm docs/d.md"); !errors.As(err, &ae) {
		t.Fatalf("two rm with one grant: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); err != nil {
		t.Fatal("the line ran before it was refused")
	}
	// A loop finds its rm at run time: the first runs, the second is
	// refused.
	_, err := runWith(t, r, once, "for f in notes/n.txt docs/d.md; do rm $f; done")
	if !errors.As(err, &ae) {
		t.Fatalf("loop with one grant: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/n.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("first rm did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "docs/d.md")); err != nil {
		t.Fatalf("second rm ran: %v", err)
	}
	if _, err := runLine(t, r, "rm docs/d.md"); !errors.As(err, &ae) {
		t.Fatalf("rm after the grant: %v", err)
	}
}

// Granted paths widen the path scopes for one line; paths.deny still wins.
func TestGrantPaths(t *testing.T) {
	root := testRoot(t)
	cfg := DefaultConfig()
	cfg.Paths.Read, cfg.Paths.Write = []string{"docs"}, []string{"docs"}
	r := newRunner(t, root, cfg)
	var v *Violation
	none := Grant{}
	if _, err := runIn(t, r, none, "docs", "cat ../notes/n.txt"); !errors.As(err, &v) {
		t.Fatalf("cat outside read scope: %v", err)
	}
	if res, err := runIn(t, r, Grant{Read: []string{"notes/**"}}, "docs", "cat ../notes/n.txt"); err != nil || res.Stdout != "note\n" {
		t.Fatalf("cat with read grant: %v %+v", err, res)
	}
	if _, err := runIn(t, r, Grant{Read: []string{"notes/**"}}, "docs", "touch ../notes/new"); !errors.As(err, &v) {
		t.Fatalf("touch with a read grant: %v", err)
	}
	if res, err := runIn(t, r, Grant{Write: []string{"notes"}}, "docs", "touch ../notes/new"); err != nil || len(res.Changed) != 1 {
		t.Fatalf("touch with write grant: %v %+v", err, res)
	}
	if _, err := runWith(t, r, Grant{Write: []string{"**"}}, "cat .git/config"); !errors.As(err, &v) {
		t.Fatalf(".git with a grant: %v", err)
	}
	if _, err := runIn(t, r, Grant{Read: []string{"../x"}}, "docs", "true"); err == nil {
		t.Fatal("a grant climbing out of the root was taken")
	}
}

// SetConfig changes the scope of the lines started afterwards.
func TestSetConfig(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	cfg := DefaultConfig()
	cfg.Categories.ReadOnly = append(cfg.Categories.ReadOnly, "id")
	if err := r.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := runLine(t, r, "id -u"); err != nil {
		t.Fatalf("id after SetConfig: %v", err)
	}
	cfg.Categories.SafeWrite = append(cfg.Categories.SafeWrite, "id")
	if err := r.SetConfig(cfg); err == nil {
		t.Fatal("SetConfig took a command in two categories")
	}
}
