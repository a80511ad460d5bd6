package gitconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReaderAsGitConfigList reads a repository's configuration through
// Files and Reader and compares every variable, in order (each file's
// variables are named after it), with `git config --list`: the scopes git
// reads (each way of naming or turning off the system and global files),
// include.path relative, absolute and from "~/", includeIf "gitdir:" and
// "gitdir/i:" that hold and that do not, a key with no '='.
func TestReaderAsGitConfigList(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	repo := filepath.Join(dir, "Repo")
	gitdir := filepath.Join(repo, ".git")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sys := filepath.Join(dir, "etc", "gitconfig")
	write(sys, "[sys]\n\tv = 1\n[include]\n\tpath = sys.inc\n")
	write(filepath.Join(dir, "etc", "sys.inc"), "[sys]\n\tinc = 1\n")
	write(filepath.Join(home, ".config", "git", "config"), "[xdg]\n\tv = 1\n")
	write(filepath.Join(home, ".gitconfig"), "[home]\n\tv = 1\n\tbare\n[include]\n\tpath = ~/more.inc\n"+
		"[includeIf \"gitdir:"+repo+"/\"]\n\tpath = yes.inc\n"+
		"[includeIf \"gitdir/i:"+strings.ToLower(repo)+"/\"]\n\tpath = "+filepath.Join(home, "fold.inc")+"\n"+
		"[includeIf \"gitdir:/nowhere/\"]\n\tpath = no.inc\n"+
		"[includeIf \"onbranch:main\"]\n\tpath = no.inc\n")
	write(filepath.Join(home, "more.inc"), "[more]\n\tv = 1\n")
	write(filepath.Join(home, "yes.inc"), "[yes]\n\tv = 1\n")
	write(filepath.Join(home, "fold.inc"), "[fold]\n\tv = 1\n")
	write(filepath.Join(home, "no.inc"), "[no]\n\tv = 1\n")
	global := filepath.Join(dir, "global")
	write(global, "[global]\n\tv = 1\n")
	own, err := os.ReadFile(filepath.Join(gitdir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(gitdir, "config"), string(own)+"[repo]\n\tv = 1\n[include]\n\tpath = ../repo.inc\n")
	write(filepath.Join(repo, "repo.inc"), "[repo]\n\tinc = 1\n")

	for _, scope := range [][]string{
		{"GIT_CONFIG_SYSTEM=" + sys},
		{"GIT_CONFIG_SYSTEM=" + sys, "GIT_CONFIG_NOSYSTEM=1"},
		{"GIT_CONFIG_SYSTEM=" + sys, "GIT_CONFIG_NOSYSTEM="},
		{"GIT_CONFIG_SYSTEM="},
		{"GIT_CONFIG_SYSTEM=" + sys, "GIT_CONFIG_GLOBAL=" + global},
		{"GIT_CONFIG_SYSTEM=" + sys, "GIT_CONFIG_GLOBAL="},
		{"GIT_CONFIG_SYSTEM=" + sys, "XDG_CONFIG_HOME=" + filepath.Join(dir, "noxdg")},
	} {
		t.Run(strings.Join(scope, " "), func(t *testing.T) {
			environ := append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}, scope...)
			cmd := exec.Command("git", "config", "--list")
			cmd.Dir, cmd.Env = repo, environ
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("git config: %v", err)
			}
			var got []string
			env := Environ(environ)
			r := &Reader{Env: env, GitDir: gitdir}
			for _, f := range Files(env, gitdir) {
				if err := r.ReadFile(f, func(key string, value *string) {
					if value == nil {
						got = append(got, key) // git lists a bare key alone
						return
					}
					got = append(got, key+"="+*value)
				}); err != nil {
					t.Fatal(err)
				}
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSuffix(string(out), "\n"); g != w {
				t.Errorf("read:\n%s\ngit config --list:\n%s", g, w)
			}
		})
	}
}
