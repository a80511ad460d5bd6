package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// With no identity configured anywhere, init says that commits will name
// the bot, once per root: the boot and the status after it do not say it
// again, a new root does; with an identity configured nothing is said.
func TestBotIdentityIsAnnounced(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	for _, c := range []struct {
		name   string
		env    []string
		notice bool
	}{
		{"nothing configured", nil, true},
		{"git.author", []string{"TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com"}, false},
		{"GIT_AUTHOR_*", []string{"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := append([]string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}, c.env...)
			other := t.TempDir()
			for i, args := range [][]string{{"init", "--remote", remote}, {"boot"}, {"status"}, {"boot", "--root", other}, {"boot", "--root", other}} {
				var out, errb bytes.Buffer
				code := inDir(t, dir, func() int {
					return run(context.Background(), args, strings.NewReader(""), &out, &errb, env)
				})
				if code != 0 {
					t.Fatalf("%v: %d %s %s", args, code, out.String(), errb.String())
				}
				got := strings.Count(errb.String(), "commits will be made as tgp-bot[bot] <tgp-bot@users.noreply.github.com>")
				want := 0
				if c.notice && (i == 0 || i == 3) { // init, and the first boot of another root
					want = 1
				}
				if got != want {
					t.Fatalf("%v: notice %d times, want %d:\n%s", args, got, want, errb.String())
				}
			}
		})
	}
}

// inDir runs f with dir as the working directory.
func inDir(t *testing.T, dir string, f func() int) int {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	return f()
}
