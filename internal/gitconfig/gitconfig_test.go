package gitconfig

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadMatchesGitConfig generates configuration scopes (system, global
// via XDG and ~/.gitconfig, the repository, GIT_CONFIG_COUNT, includes,
// mixed-case sections and names, subsections) and compares every key's
// value with `git config --get`.
func TestLoadMatchesGitConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	keys := []string{"core.quotepath", "diff.noprefix", "log.date", "Diff.Context", "branch.Main.remote", "user.name", "status.showUntrackedFiles"}
	values := []string{"true", "false", "0", "yes", "iso", "format:%Y", "5", "two words", "Main"}
	n := 60
	if testing.Short() {
		n = 15
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		r := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		home := filepath.Join(dir, "home")
		repo := filepath.Join(dir, "repo")
		for _, d := range []string{home, filepath.Join(home, ".config", "git"), repo} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		file := func() string {
			var b strings.Builder
			for i := r.Intn(4); i > 0; i-- {
				k := keys[r.Intn(len(keys))]
				sec, name := k[:strings.IndexByte(k, '.')], k[strings.LastIndexByte(k, '.')+1:]
				if sub := k[strings.IndexByte(k, '.')+1 : strings.LastIndexByte(k, '.')+1]; sub != "" {
					fmt.Fprintf(&b, "[%s \"%s\"]\n", sec, strings.TrimSuffix(sub, "."))
				} else {
					if r.Intn(2) == 0 {
						sec = strings.ToUpper(sec)
					}
					fmt.Fprintf(&b, "[%s]\n", sec)
				}
				fmt.Fprintf(&b, "\t%s = %s\n", name, values[r.Intn(len(values))])
			}
			return b.String()
		}
		sys := filepath.Join(dir, "system")
		write := func(p, s string) {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(sys, file())
		write(filepath.Join(home, ".config", "git", "config"), file())
		inc := filepath.Join(dir, "inc")
		write(inc, file())
		global := file()
		if r.Intn(2) == 0 {
			global += "[include]\n\tpath = " + inc + "\n" + file()
		}
		write(filepath.Join(home, ".gitconfig"), global)
		repoCfg, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
		if err != nil {
			t.Fatal(err)
		}
		repoCfg = append(repoCfg, file()...)
		write(filepath.Join(repo, ".git", "config"), string(repoCfg))
		env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_SYSTEM=" + sys}
		if r.Intn(2) == 0 {
			env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0="+keys[r.Intn(len(keys))], "GIT_CONFIG_VALUE_0=from-env")
		}
		c := Load(env, repoCfg, filepath.Join(repo, ".git"))
		for _, k := range keys {
			cmd := exec.Command("git", "config", "--get", k)
			cmd.Dir, cmd.Env = repo, env
			out, err := cmd.Output()
			want, wantOK := strings.TrimSuffix(string(out), "\n"), err == nil
			got, gotOK := c.Get(k)
			if got != want || gotOK != wantOK {
				t.Errorf("seed %d: %s = %q (set %v), git says %q (set %v)", seed, k, got, gotOK, want, wantOK)
			}
		}
	}
}

func TestParseBoolAndInt(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "Yes": true, "on": true, "1": true, "2": true, "false": false, "no": false, "off": false, "0": false, "": false} {
		if got, ok := ParseBool(v); !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", v, got, ok, want)
		}
	}
	if _, ok := ParseBool("maybe"); ok {
		t.Error("ParseBool(maybe) accepted")
	}
	for v, want := range map[string]int{"3": 3, "1k": 1024, "2m": 2 << 20, " 7 ": 7} {
		if got, ok := ParseInt(v); !ok || got != want {
			t.Errorf("ParseInt(%q) = %v, %v; want %v", v, got, ok, want)
		}
	}
	if got := Key("Branch.Main.Remote"); got != "branch.Main.remote" {
		t.Errorf("Key = %q", got)
	}
}
