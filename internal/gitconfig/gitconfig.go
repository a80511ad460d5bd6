// Package gitconfig is git's configuration reader (config.c): the file
// grammar (Parse: git_parse_source), the files a repository's
// configuration is read from and their order (Files:
// do_git_config_sequence), include.path and includeIf "gitdir:" followed
// where they stand (Reader: git_config_include), and the merged view with
// git's value types (Load, Config: git_config_bool, git_config_int).
// Every reader of configuration in the module goes through it: the git
// tools' settings, the commit identity (internal/gitident), the receive
// policy (internal/receive), a pushed .gitmodules (internal/fsck), so a
// file git reads one way is not read another way here.
//
// The order, lowest first: system ($GIT_CONFIG_SYSTEM or /etc/gitconfig,
// unless GIT_CONFIG_NOSYSTEM), global ($GIT_CONFIG_GLOBAL, else
// $XDG_CONFIG_HOME/git/config then ~/.gitconfig), the repository's own
// config, then GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n.
//
// Written by hand because go-git reads only the repository's own file for
// most purposes and its global loader ignores includes, XDG and the
// GIT_CONFIG_* variables.
package gitconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Config is the merged configuration. The zero value and nil are empty.
type Config struct {
	vals map[string]string
}

// maxIncludeDepth is git's own limit on nested include.path.
const maxIncludeDepth = 10

// Load reads every scope. environ is the process environment (nil:
// os.Environ()); repo is the repository's config file (nil: none);
// repoDir is the directory its relative includes are read from ("" when
// the repository is not on disk: its includes are not followed).
func Load(environ []string, repo []byte, repoDir string) *Config {
	env := Environ(environ)
	c := &Config{vals: map[string]string{}}
	// What git would die on (a bad line, an include it cannot follow)
	// ends that file here: what came before it is all there is.
	r := &Reader{Env: env, GitDir: repoDir, OnError: func(string, error) error { return nil }}
	set := func(key string, value *string) {
		v := "true" // a key with no '=' is a boolean true
		if value != nil {
			v = *value
		}
		c.vals[key] = v
	}
	for _, f := range Files(env, "") {
		_ = r.ReadFile(f, set)
	}
	if repo != nil {
		path := ""
		if repoDir != "" {
			path = filepath.Join(repoDir, "config")
		}
		_ = r.Read(repo, path, set)
	}
	if n, err := strconv.Atoi(env["GIT_CONFIG_COUNT"]); err == nil {
		for i := 0; i < n; i++ {
			if k := Key(env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)]); k != "" {
				c.vals[k] = env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]
			}
		}
	}
	return c
}

// Environ turns KEY=VALUE pairs into a map (nil: os.Environ()).
func Environ(kv []string) map[string]string {
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

// Key normalises a dotted key as git compares them: the section and the
// variable name are case-insensitive, a subsection is not.
func Key(k string) string {
	first := strings.IndexByte(k, '.')
	last := strings.LastIndexByte(k, '.')
	if first <= 0 || last == len(k)-1 {
		return ""
	}
	if first == last {
		return strings.ToLower(k)
	}
	return strings.ToLower(k[:first]) + k[first:last] + strings.ToLower(k[last:])
}

// Get returns the last value set for key, and whether it is set at all.
func (c *Config) Get(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	v, ok := c.vals[Key(key)]
	return v, ok
}

// String returns key's value, or def when it is not set.
func (c *Config) String(key, def string) string {
	if v, ok := c.Get(key); ok {
		return v
	}
	return def
}

// Bool returns key as git's boolean, or def when it is unset or not a
// boolean.
func (c *Config) Bool(key string, def bool) bool {
	v, ok := c.Get(key)
	if !ok {
		return def
	}
	if b, ok := ParseBool(v); ok {
		return b
	}
	return def
}

// Int returns key as git's integer (k, m, g suffixes), or def when it is
// unset or not a number.
func (c *Config) Int(key string, def int) int {
	v, ok := c.Get(key)
	if !ok {
		return def
	}
	if n, ok := ParseInt(v); ok {
		return n
	}
	return def
}

// ParseBool is git_parse_maybe_bool: true/yes/on/1 (or a bare key, read
// as "true"), false/no/off/0 and the empty string; other integers are true.
func ParseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	if n, ok := ParseInt(v); ok {
		return n != 0, true
	}
	return false, false
}

// ParseInt reads git's integers: decimal with an optional k, m or g.
func ParseInt(v string) (int, bool) {
	v = strings.TrimSpace(v)
	mul := 1
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mul = 1 << 10
		case 'm', 'M':
			mul = 1 << 20
		case 'g', 'G':
			mul = 1 << 30
		}
		if mul != 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	return n * mul, true
}

func isTrue(v string) bool {
	b, _ := ParseBool(v)
	return b && strings.TrimSpace(v) != ""
}
