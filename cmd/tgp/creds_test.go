package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// tgpEnv is tgp with more environment variables.
func tgpEnv(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, append([]string{"HOME=" + t.TempDir()}, env...))
	return code, out.String(), errb.String()
}

// noSecretIn fails if secret is in any of the outputs or in any file
// under dir.
func noSecretIn(t *testing.T, secret, dir string, outputs ...string) {
	t.Helper()
	for _, o := range outputs {
		if strings.Contains(o, secret) {
			t.Errorf("output prints the password:\n%s", o)
		}
	}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the password", p)
			}
		}
		return nil
	})
}

// TestInitRefusesPasswordInRemote: `tgp init --remote
// http://user:SECRET@host/r.git` wrote the password into tgp.config.yaml
// and .tgp/.git/config and printed it ("checking remote ..."), and boot
// and status printed it ("fetching main from ..."). init now refuses it
// before writing anything and says to use git.token_env; a password that
// reaches the kernel anyway (TGP_GIT_REMOTE, a hand-edited file) is sent
// as auth and written or printed nowhere.
func TestInitRefusesPasswordInRemote(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"tools/seed.ts": "/** Seed. */\nexport default () => 1;\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "SECRET")
	plain := srv.URL(filepath.Base(bare))
	withPass := strings.Replace(plain, "http://", "http://u:SECRET@", 1)
	dir := t.TempDir()

	code, out, errOut := tgpEnv(t, dir, nil, "init", "--remote", withPass)
	if code == 0 || !strings.Contains(errOut, "git.token_env") || !strings.Contains(errOut, "TGP_GIT_TOKEN") {
		t.Fatalf("init with a password in --remote: %d\n%s\n%s", code, out, errOut)
	}
	noSecretIn(t, "SECRET", dir, out, errOut)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a refused init left %d entries", len(ents))
	}

	// The way the message says: the token in the environment.
	code, out, errOut = tgpEnv(t, dir, []string{"TGP_GIT_TOKEN=SECRET"}, "init", "--remote", plain, "--branch", "main")
	if code != 0 {
		t.Fatalf("init with the token in TGP_GIT_TOKEN: %d\n%s\n%s", code, out, errOut)
	}
	noSecretIn(t, "SECRET", dir, out, errOut)

	// The password reaching the kernel from the environment, then from a
	// hand-edited configuration.
	env := []string{"TGP_GIT_REMOTE=" + withPass}
	for _, cmd := range [][]string{{"boot"}, {"status"}, {"status", "--json"}, {"call", "write_file", `{"path":"tools/a.ts","content":"/** A. */\nexport default () => 1;\n"}`}} {
		code, out, errOut = tgpEnv(t, dir, env, cmd...)
		if code != 0 {
			t.Fatalf("tgp %s with the password in TGP_GIT_REMOTE: %d\n%s\n%s", cmd, code, out, errOut)
		}
		noSecretIn(t, "SECRET", dir, out, errOut)
	}
	if got := gittest.Git(t, bare, "show", "main:tools/a.ts"); !strings.Contains(got, "A.") {
		t.Fatalf("the write with the password as auth is not on the remote: %q", got)
	}
	cfg := filepath.Join(dir, "tgp.config.yaml")
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, bytes.Replace(b, []byte(plain), []byte(withPass), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = tgpEnv(t, dir, nil, "status")
	if code != 0 {
		t.Fatalf("status with the password in tgp.config.yaml: %d\n%s\n%s", code, out, errOut)
	}
	noSecretIn(t, "SECRET", filepath.Join(dir, ".tgp"), out, errOut)
}

// TestInitBadRemoteFailsAtOnce: init with a remote that can never work (a
// control character, a bad escape, git's ext:: and fd:: helpers) fails on
// its first try with the cause, instead of retrying for about 15 s and,
// for ext::/fd::, blaming the SSH agent.
func TestInitBadRemoteFailsAtOnce(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"http://host/r\x01.git", "invalid remote URL"},
		// The kind, not only the parser's words: before, the same words
		// came after 15 s of retries.
		{"http://host/r%zz.git", `invalid remote URL http://host/r%zz.git: invalid URL escape "%zz"`},
		{"ext::sh -c touch% /tmp/pwned", `unsupported transport "ext::"`},
		{"fd::3", `unsupported transport "fd::"`},
	} {
		dir := t.TempDir()
		code, out, errOut := tgpEnv(t, dir, nil, "init", "--remote", c.remote)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "SSH agent") {
			t.Errorf("init --remote %q: %d, want the cause %q:\n%s\n%s", c.remote, code, c.want, out, errOut)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("init --remote %q left %d entries", c.remote, len(ents))
		}
	}
}
