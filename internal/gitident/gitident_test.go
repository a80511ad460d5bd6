package gitident

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestResolveMatchesGitCommit drives the resolver and `git commit` (the
// oracle: the identities it records) with the same
// generated configuration: every scope, includes, the GIT_CONFIG_*
// variables, the identity variables, EMAIL and awkward values. Where git
// would have to guess (nothing configured for a part), the resolver must
// say it fell back to the bot.
func TestResolveMatchesGitCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	seeds := 150
	if testing.Short() {
		seeds = 60
	}
	compared := 0
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkSeed(t, int64(seed), &compared)
		})
	}
	// Most generated setups must configure a full identity, or the
	// comparison would pass by skipping.
	if compared < seeds/2 {
		t.Fatalf("only %d of %d identities compared with git", compared, 2*seeds)
	}
	t.Logf("%d identities compared with git byte for byte", compared)
}

var keys = []string{"user.name", "user.email", "author.name", "author.email", "committer.name", "committer.email"}

func genValue(rng *rand.Rand, key, scope string) string {
	v := strings.ReplaceAll(key, ".", "-") + "-" + scope
	switch rng.Intn(8) {
	case 0:
		v = "  " + v + " ." // crud at the ends, as git strips
	case 1:
		v = "Ünï " + v
	case 2:
		v = v + " with spaces"
	case 3:
		v = "<" + v + ">"
	}
	return v
}

// quote writes a value as a git config value.
func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func genFile(rng *rand.Rand, scope string, includes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n[core]\n\tbare = false\n", scope)
	for _, k := range keys {
		if rng.Intn(3) != 0 {
			continue
		}
		sec, name, _ := strings.Cut(k, ".")
		if rng.Intn(4) == 0 {
			sec = strings.ToUpper(sec)
		}
		if rng.Intn(4) == 0 {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		fmt.Fprintf(&b, "[%s]\n\t%s = %s\n", sec, name, quote(genValue(rng, k, scope)))
	}
	for _, inc := range includes {
		fmt.Fprintf(&b, "[include]\n\tpath = %s\n", inc)
		// A setting after the include wins over the included file.
		if rng.Intn(3) == 0 {
			fmt.Fprintf(&b, "[user]\n\tname = %s\n", quote(genValue(rng, "user.name", scope+"-after")))
		}
	}
	if rng.Intn(15) == 0 {
		b.WriteString("[user]\n\tuseConfigOnly = true\n")
	}
	if rng.Intn(8) == 0 {
		b.WriteString("[includeIf \"gitdir:/nowhere/\"]\n\tpath = /nowhere/config\n")
	}
	return b.String()
}

func checkSeed(t *testing.T, seed int64, compared *int) {
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	repo := filepath.Join(dir, "repo")
	for _, d := range []string{home, filepath.Join(home, ".config", "git"), filepath.Join(dir, "xdg", "git"), filepath.Join(dir, "inc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	maybeInclude := func(scope string) []string {
		if rng.Intn(3) != 0 {
			return nil
		}
		name := scope + ".inc"
		write(filepath.Join(dir, "inc", name), genFile(rng, scope+"-inc", nil))
		switch rng.Intn(2) {
		case 0:
			return []string{filepath.Join(dir, "inc", name)}
		default:
			rel, _ := filepath.Rel(home, filepath.Join(dir, "inc", name))
			return []string{rel}
		}
	}
	if rng.Intn(2) == 0 {
		p := filepath.Join(dir, "system")
		write(p, genFile(rng, "system", nil))
		env = append(without(env, "GIT_CONFIG_NOSYSTEM=1"), "GIT_CONFIG_SYSTEM="+p)
	}
	xdgHome := filepath.Join(home, ".config")
	if rng.Intn(3) == 0 {
		xdgHome = filepath.Join(dir, "xdg")
		env = append(env, "XDG_CONFIG_HOME="+xdgHome)
	}
	if rng.Intn(2) == 0 {
		write(filepath.Join(xdgHome, "git", "config"), genFile(rng, "xdg", nil))
	}
	if rng.Intn(2) == 0 {
		// Relative includes in ~/.gitconfig are relative to home.
		write(filepath.Join(home, ".gitconfig"), genFile(rng, "global", maybeInclude("global")))
	}
	if rng.Intn(6) == 0 {
		p := filepath.Join(dir, "explicit-global")
		write(p, genFile(rng, "explicitglobal", nil))
		env = append(env, "GIT_CONFIG_GLOBAL="+p)
	}
	var repoCfg []byte
	if rng.Intn(2) == 0 {
		p := filepath.Join(repo, ".git", "config")
		old, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		repoCfg = append(old, genFile(rng, "repo", nil)...)
		write(p, string(repoCfg))
	} else {
		repoCfg, _ = os.ReadFile(filepath.Join(repo, ".git", "config"))
	}
	if rng.Intn(4) == 0 {
		k := keys[rng.Intn(len(keys))]
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0="+k, "GIT_CONFIG_VALUE_0="+genValue(rng, k, "cmdline"))
	}
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		if rng.Intn(5) == 0 {
			env = append(env, v+"="+genValue(rng, strings.ToLower(v), "env"))
		}
	}
	var configured Person
	if rng.Intn(8) == 0 {
		configured = Person{Name: "Configured Name", Email: "configured@example.com"}
	}

	author, committer, err := Resolve(Sources{Configured: configured, Environ: env, RepoConfig: repoCfg}, time.Unix(1700000000, 0))
	var dump strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !strings.Contains(p, "/.git/") || strings.HasSuffix(p, "/.git/config") {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(&dump, "--- %s\n%s", p, b)
		}
		return nil
	})
	// The oracle is a real commit (git's strict identity rules), read back.
	cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "x")
	cmd.Dir = repo
	cmd.Env = env
	if configured.Name != "" {
		// git.author is the kernel's own setting: for git it is the
		// identity variables.
		cmd.Env = append(append([]string{}, env...), "GIT_AUTHOR_NAME="+configured.Name, "GIT_AUTHOR_EMAIL="+configured.Email,
			"GIT_COMMITTER_NAME="+configured.Name, "GIT_COMMITTER_EMAIL="+configured.Email)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	gitErr := cmd.Run()
	if gitErr != nil && err == nil && !author.Fallback && !committer.Fallback {
		t.Fatalf("git commit refused (%v: %s), resolver gave %+v / %+v\nenv %q\n%s", gitErr, stderr.String(), author.Person, committer.Person, env, dump.String())
	}
	outs := map[string][]byte{}
	if gitErr == nil {
		show := exec.Command("git", "log", "-1", "--format=%an <%ae>%n%cn <%ce>")
		show.Dir = repo
		b, err := show.Output()
		if err != nil {
			t.Fatal(err)
		}
		a, c, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		outs["AUTHOR"], outs["COMMITTER"] = []byte(a), []byte(c)
	}
	if err != nil {
		if !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("resolve: %v", err)
		}
		// Refused where git refuses, or where git would commit an empty
		// name or email (useConfigOnly with another role's key set).
		if gitErr == nil && !strings.Contains(string(outs["AUTHOR"])+string(outs["COMMITTER"]), "<>") {
			t.Fatalf("resolver refused (%v), git committed %q\nenv %q\n%s", err, outs, env, dump.String())
		}
		return
	}
	if gitErr != nil {
		return // one role fell back to the bot where git refuses: checked above
	}
	for role, got := range map[string]Signature{"AUTHOR": author, "COMMITTER": committer} {
		out := outs[role]
		if got.Fallback {
			// git guesses from passwd and the hostname, or refuses; either
			// way nothing was configured for one part.
			continue
		}
		want := string(out)
		*compared++
		if have := got.Name + " <" + got.Email + ">"; have != want {
			t.Fatalf("%s: resolver %q, git %q\nenv %q\n%s", role, have, want, env, dump.String())
		}
	}
}

func without(env []string, drop string) []string {
	out := env[:0:0]
	for _, e := range env {
		if e != drop {
			out = append(out, e)
		}
	}
	return out
}

// TestResolveFallsBackToBot: nothing configured anywhere is a commit by
// the bot, not a failure; useConfigOnly turns that into ErrNoIdentity.
func TestResolveFallsBackToBot(t *testing.T) {
	env := []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
	a, c, err := Resolve(Sources{Environ: env}, time.Now())
	if err != nil || a.Person != Bot || c.Person != Bot || !a.Fallback || !c.Fallback {
		t.Fatalf("%+v %+v %v", a, c, err)
	}
	_, _, err = Resolve(Sources{Environ: env, RepoConfig: []byte("[user]\n\tuseConfigOnly = true\n")}, time.Now())
	if !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("useConfigOnly: %v", err)
	}
}

// TestResolveDates: GIT_*_DATE set each role's time.
func TestResolveDates(t *testing.T) {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE=1600000000 +0200", "GIT_COMMITTER_DATE=@1600000001"}
	a, c, err := Resolve(Sources{Environ: env, Configured: Person{Name: "n", Email: "e"}}, time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if a.When.Unix() != 1600000000 || a.When.Format("-0700") != "+0200" || c.When.Unix() != 1600000001 {
		t.Fatalf("%v %v", a.When, c.When)
	}
}

// TestNoHeaderInjection: a value cannot end a commit header or forge one.
func TestNoHeaderInjection(t *testing.T) {
	a, _, err := Resolve(Sources{Environ: []string{"GIT_CONFIG_NOSYSTEM=1"}, Configured: Person{Name: "x>\ncommitter evil <e@x> 1 +0000\n", Email: "<a@b>\n"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{a.Name, a.Email} {
		if strings.ContainsAny(s, "<>\n") {
			t.Fatalf("unsafe identity %q", s)
		}
	}
}
