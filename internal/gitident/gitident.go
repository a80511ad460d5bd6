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
// The configuration scopes are read by internal/gitconfig, as the git
// tools read their settings.
package gitident

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tgp-go/tgp/internal/gitconfig"
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
	env := gitconfig.Environ(src.Environ)
	conf := gitconfig.Load(src.Environ, src.RepoConfig, "")
	cfg := func(key string) string { return conf.String(key, "") }
	one := func(role string) (Signature, error) {
		lower := strings.ToLower(role)
		s := Signature{When: now}
		s.Name = withoutCrud(first(src.Configured.Name, env["GIT_"+role+"_NAME"], cfg(lower+".name"), cfg("user.name")))
		// git reads EMAIL only when no *.email is configured at all (then
		// a role without its own email gets an empty one: the bot's here).
		emailEnv := env["EMAIL"]
		if cfg("user.email") != "" || cfg("author.email") != "" || cfg("committer.email") != "" {
			emailEnv = ""
		}
		s.Email = withoutCrud(first(src.Configured.Email, env["GIT_"+role+"_EMAIL"], cfg(lower+".email"), cfg("user.email"), emailEnv))
		if s.Name == "" || s.Email == "" {
			if conf.Bool("user.useConfigOnly", false) {
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

func first(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
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
