// Package gitident resolves the author and committer of a commit the way
// git does, for every layer of the kernel that writes commits (the
// persistence of the file tools in gitbackend, git_commit and git_stash in
// the git tools), so they never disagree.
//
// The order, highest first:
//   - git.author from the kernel's configuration (both roles);
//   - GIT_AUTHOR_NAME/EMAIL for the author, GIT_COMMITTER_NAME/EMAIL for
//     the committer;
//   - the git configuration: author.* (committer.*) then user.*, read with
//     git's precedence: GIT_CONFIG_COUNT/KEY_n/VALUE_n > the repository >
//     global ($GIT_CONFIG_GLOBAL, or ~/.gitconfig over
//     $XDG_CONFIG_HOME/git/config) > system ($GIT_CONFIG_SYSTEM or
//     /etc/gitconfig, unless GIT_CONFIG_NOSYSTEM), following include.path;
//   - EMAIL for the email, as git does;
//   - a bot identity (tgp-bot[bot]), so a host with no git identity at all
//     (a minimal MCP environment, a serverless function) still commits,
//     under a name that says what made the commit. user.useConfigOnly=true
//     turns that fallback into ErrNoIdentity, as it turns off git's own
//     guessing.
//
// GIT_AUTHOR_DATE and GIT_COMMITTER_DATE set the times.
//
// Written by hand because go-git reads only the repository's own config
// for commits and its global loader ignores includes, XDG and the
// GIT_CONFIG_* variables; the file syntax itself is parsed by go-git's
// gcfg.
package gitident

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/gcfg"
)

// Bot is the identity used when nothing is configured anywhere: the
// TypeScript original's defaults (tgp-bot[bot], tgp-bot@users.noreply.github.com).
var Bot = Person{Name: "tgp-bot[bot]", Email: "tgp-bot@users.noreply.github.com"}

// ErrNoIdentity: user.useConfigOnly is set and no identity is configured.
var ErrNoIdentity = errors.New("no commit identity configured")

// Person is a name and an email.
type Person struct{ Name, Email string }

// Sources is what the resolver reads.
type Sources struct {
	// Configured is git.author from the kernel's configuration.
	Configured Person
	// Environ is the environment (nil: os.Environ()).
	Environ []string
	// RepoConfig is the repository's config file, raw (nil: none).
	RepoConfig []byte
}

// Signature is one role's resolved identity and time.
type Signature struct {
	Person
	When time.Time
	// Fallback is true when the bot identity filled a missing part.
	Fallback bool
}

// Resolve returns the author and committer for a commit made at now.
func Resolve(src Sources, now time.Time) (author, committer Signature, err error) {
	env := environ(src.Environ)
	cfg := loadConfig(env, src.RepoConfig)
	one := func(role string) (Signature, error) {
		lower := strings.ToLower(role)
		s := Signature{When: now}
		s.Name = withoutCrud(first(src.Configured.Name, env["GIT_"+role+"_NAME"], cfg[lower+".name"], cfg["user.name"]))
		// git reads EMAIL only when no *.email is configured at all (then
		// a role without its own email gets an empty one: the bot's here).
		emailEnv := env["EMAIL"]
		if cfg["user.email"] != "" || cfg["author.email"] != "" || cfg["committer.email"] != "" {
			emailEnv = ""
		}
		s.Email = withoutCrud(first(src.Configured.Email, env["GIT_"+role+"_EMAIL"], cfg[lower+".email"], cfg["user.email"], emailEnv))
		if s.Name == "" || s.Email == "" {
			if truthy(cfg["user.useconfigonly"]) {
				return s, fmt.Errorf("%w: user.useConfigOnly is set and %s has no %s (set git.author.name and git.author.email in tgp.config.yaml, or user.name and user.email with git config)",
					ErrNoIdentity, lower, missing(s.Person))
			}
			s.Fallback = true
			if s.Name == "" {
				s.Name = Bot.Name
			}
			if s.Email == "" {
				s.Email = Bot.Email
			}
		}
		if t, ok := ParseDate(env["GIT_"+role+"_DATE"]); ok {
			s.When = t
		}
		return s, nil
	}
	if author, err = one("AUTHOR"); err != nil {
		return author, committer, err
	}
	committer, err = one("COMMITTER")
	return author, committer, err
}

// crud is what git strips from both ends of a name or an email.
func crud(c byte) bool {
	return c <= 32 || strings.IndexByte(".,:;<>\"\\'", c) >= 0
}

// withoutCrud is git's strbuf_addstr_without_crud: crud off both ends,
// and the delimiters of an identity line ('<', '>', newline) dropped
// inside, so no value can end a header early or forge another.
func withoutCrud(s string) string {
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '<' || r == '>' {
			return -1
		}
		return r
	}, s)
}

func missing(p Person) string {
	switch {
	case p.Name == "" && p.Email == "":
		return "name or email"
	case p.Name == "":
		return "name"
	}
	return "email"
}

func environ(kv []string) map[string]string {
	if kv == nil {
		kv = os.Environ()
	}
	m := make(map[string]string, len(kv))
	for _, e := range kv {
		if k, v, ok := strings.Cut(e, "="); ok {
			m[k] = v
		}
	}
	return m
}

func first(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// maxIncludeDepth is git's own limit on nested include.path.
const maxIncludeDepth = 10

// configKeys are the keys the resolver reads (lower case, section.key).
var configKeys = map[string]bool{
	"user.name": true, "user.email": true, "user.useconfigonly": true,
	"author.name": true, "author.email": true, "committer.name": true, "committer.email": true,
}

// loadConfig reads the identity keys from every scope, later scopes
// overriding earlier ones, as git's config does.
func loadConfig(env map[string]string, repo []byte) map[string]string {
	out := map[string]string{}
	if !truthy(env["GIT_CONFIG_NOSYSTEM"]) {
		sys := env["GIT_CONFIG_SYSTEM"]
		if _, set := env["GIT_CONFIG_SYSTEM"]; !set {
			sys = "/etc/gitconfig"
		}
		readFile(out, env, sys, 0)
	}
	if g, set := env["GIT_CONFIG_GLOBAL"]; set {
		readFile(out, env, g, 0)
	} else {
		home := env["HOME"]
		xdg := env["XDG_CONFIG_HOME"]
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			readFile(out, env, filepath.Join(xdg, "git", "config"), 0)
		}
		if home != "" {
			readFile(out, env, filepath.Join(home, ".gitconfig"), 0)
		}
	}
	if repo != nil {
		// The repository's includes are relative to its .git, which may be
		// in memory: they are not followed.
		parse(out, env, repo, "", 0)
	}
	if n, err := strconv.Atoi(env["GIT_CONFIG_COUNT"]); err == nil {
		for i := 0; i < n; i++ {
			k := strings.ToLower(env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)])
			if configKeys[k] {
				out[k] = env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]
			}
		}
	}
	return out
}

func readFile(out, env map[string]string, path string, depth int) {
	if path == "" || depth > maxIncludeDepth {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		// A missing or unreadable file is a scope that is not there, as
		// for git.
		return
	}
	parse(out, env, b, filepath.Dir(path), depth)
}

// parse applies one file's settings in order, an include.path where it
// appears (a path relative to dir; "~/" is the home directory).
func parse(out, env map[string]string, b []byte, dir string, depth int) {
	type entry struct {
		key, val string
		include  bool
	}
	var order []entry
	err := gcfg.ReadWithCallback(bytes.NewReader(b), func(s, ss, k, v string, blank bool) error {
		if k == "" || ss != "" {
			return nil // section headers; includeIf and other subsections are not followed
		}
		key := strings.ToLower(s) + "." + strings.ToLower(k)
		if blank {
			v = "true"
		}
		switch {
		case key == "include.path":
			order = append(order, entry{val: v, include: true})
		case configKeys[key]:
			order = append(order, entry{key: key, val: v})
		}
		return nil
	})
	// A file gcfg stops reading (git would refuse it) still gives what
	// came before the bad line: a commit under the user's name beats one
	// under the bot's.
	_ = err
	for _, e := range order {
		if !e.include {
			out[e.key] = e.val
			continue
		}
		p := e.val
		switch {
		case dir == "":
			continue
		case strings.HasPrefix(p, "~/"):
			if env["HOME"] == "" {
				continue
			}
			p = filepath.Join(env["HOME"], p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(dir, p)
		}
		readFile(out, env, p, depth+1)
	}
}

// ParseDate reads the date forms git accepts in GIT_*_DATE that tools
// write: "<unix> <tz>", "@<unix> [<tz>]" and RFC 3339.
func ParseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	secs, tz, _ := strings.Cut(strings.TrimPrefix(s, "@"), " ")
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	loc := time.UTC
	if len(tz) == 5 && (tz[0] == '+' || tz[0] == '-') {
		if hh, err1 := strconv.Atoi(tz[1:3]); err1 == nil {
			if mm, err2 := strconv.Atoi(tz[3:5]); err2 == nil {
				off := hh*3600 + mm*60
				if tz[0] == '-' {
					off = -off
				}
				loc = time.FixedZone("", off)
			}
		}
	}
	return time.Unix(n, 0).In(loc), true
}
