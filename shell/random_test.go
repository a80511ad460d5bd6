package shell

import (
	"context"
	"errors"
	"flag"
	"math/rand"
	"strings"
	"testing"
	"time"
)

var shellSeed = flag.Int64("shell.seed", 1, "seed of TestRandomCommandLinesHold")

// TestRandomCommandLinesHold generates command lines from hostile pieces
// (denied, dangerous, unknown and allowed commands; paths out of the
// root, through symlinks, into .git; pipes, lists, substitutions,
// wrappers, redirections) and checks the invariants on each: nothing
// outside the root or in .git changes, no secret is printed, every error
// is one of the typed refusals, and a line naming a denied command
// literally is refused. Reproduce a failure with -shell.seed.
func TestRandomCommandLinesHold(t *testing.T) {
	e := newHostileEnv(t)
	rng := rand.New(rand.NewSource(*shellSeed))
	cmds := []string{"ls", "cat", "grep x", "wc -l", "head -1", "sort", "touch", "mkdir -p", "cp docs/d.md", "mv", "echo", "rm -rf", "curl", "wget -q",
		"python3", "awk 1", "env", "xargs cat", "xargs touch", "nice cat", "timeout 1 cat", "find . -name x -exec cat {} ;", "sh -c 'cat $1' _", "tee", "printenv"}
	paths := []string{"notes/a", "docs/d.md", "tools", "../outside/secret.txt", "link/secret.txt", "link/new", ".git/config", ".git/hooks/x",
		"/etc/passwd", "/tmp/tgp-rand", "~/.ssh/id_rsa", ".env", "notes", "$(echo ../outside/x)", "/proc/self/environ", "$TGP_GIT_TOKEN"}
	ops := []string{" | ", " && ", "; ", " || "}
	piece := func() string {
		c := cmds[rng.Intn(len(cmds))]
		s := c + " " + paths[rng.Intn(len(paths))]
		switch rng.Intn(6) {
		case 0:
			s += " > " + paths[rng.Intn(len(paths))]
		case 1:
			s += " < " + paths[rng.Intn(len(paths))]
		case 2:
			s = "echo " + paths[rng.Intn(len(paths))] + " | " + s
		case 3:
			s = "$(echo " + strings.Fields(c)[0] + ") " + strings.Join(strings.Fields(s)[1:], " ")
		}
		return s
	}
	outside := treeHash(t, e.outside)
	git := treeHash(t, e.root+"/.git")
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := 0; i < n; i++ {
		line := piece()
		for j := rng.Intn(3); j > 0; j-- {
			line += ops[rng.Intn(len(ops))] + piece()
		}
		res, err := e.r.Run(context.Background(), Request{Command: line, Timeout: 5 * time.Second})
		var te *TimeoutError
		var se *SyntaxError
		switch {
		case err == nil, errors.Is(err, ErrViolation), errors.Is(err, ErrApproval), errors.Is(err, ErrBudget), errors.As(err, &te), errors.As(err, &se):
		default:
			t.Fatalf("seed %d line %d %q: untyped error %v", *shellSeed, i, line, err)
		}
		if (strings.HasPrefix(line, "curl") || strings.HasPrefix(line, "wget")) && !errors.Is(err, ErrViolation) {
			t.Fatalf("seed %d %q: a literal denied command was not refused: %v", *shellSeed, line, err)
		}
		if res != nil && strings.Contains(res.Stdout+res.Stderr, secretValue) {
			t.Fatalf("seed %d %q: the secret leaked", *shellSeed, line)
		}
		if treeHash(t, e.outside) != outside || treeHash(t, e.root+"/.git") != git {
			t.Fatalf("seed %d %q: outside the root or .git changed", *shellSeed, line)
		}
	}
}
