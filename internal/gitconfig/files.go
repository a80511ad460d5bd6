package gitconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// Files is the configuration files git reads for a repository, lowest
// priority first, as config.c's do_git_config_sequence lists them: the
// system file ($GIT_CONFIG_SYSTEM, else /etc/gitconfig; none when
// GIT_CONFIG_NOSYSTEM is true), the global files ($GIT_CONFIG_GLOBAL,
// else $XDG_CONFIG_HOME/git/config, by default ~/.config/git/config, then
// ~/.gitconfig), then the repository's gitdir/config (none when gitdir is
// ""). A variable set to the empty string names no file, as it makes git
// read none. env is the environment as Environ returns it.
func Files(env map[string]string, gitdir string) []string {
	var files []string
	if !isTrue(env["GIT_CONFIG_NOSYSTEM"]) {
		sys, set := env["GIT_CONFIG_SYSTEM"]
		if !set {
			sys = "/etc/gitconfig"
		}
		if sys != "" {
			files = append(files, sys)
		}
	}
	if g, set := env["GIT_CONFIG_GLOBAL"]; set {
		if g != "" {
			files = append(files, g)
		}
	} else {
		home := env["HOME"]
		xdg := env["XDG_CONFIG_HOME"]
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	if gitdir != "" {
		files = append(files, filepath.Join(gitdir, "config"))
	}
	return files
}

// Reader reads configuration files as git_config_from_file does with
// includes on: each variable in order (include lines too), include.path,
// and includeIf
// "gitdir:" / "gitdir/i:" whose condition holds, followed where they
// stand (config.c's git_config_include), up to git's depth of 10.
type Reader struct {
	// Env is the environment (Environ): HOME expands "~/".
	Env map[string]string
	// GitDir is the repository's git directory, which includeIf
	// "gitdir:" patterns are matched against; "" holds no condition.
	GitDir string
	// Visit, when set, is told every file read or looked for (a missing
	// one too), for a caller that reads again when one changes.
	Visit func(path string)
	// OnError decides about a file that cannot be read (not a missing
	// one: that is a file with no variables, as for git), a bad line,
	// an include git cannot follow: nil goes on with the rest, as if
	// the file ended there; an error stops the read and is returned.
	// Unset, every error stops it.
	OnError func(path string, err error) error
}

// ReadFile reads the file at path, fn getting each variable as Parse
// gives it.
func (r *Reader) ReadFile(path string, fn func(key string, value *string)) error {
	return r.readFile(path, 0, fn)
}

// Read reads buf, the content of the file at path ("" when it is not on
// disk: then a relative include cannot be followed).
func (r *Reader) Read(buf []byte, path string, fn func(key string, value *string)) error {
	return r.read(buf, path, 0, fn)
}

func (r *Reader) fail(path string, err error) error {
	if r.OnError == nil {
		return err
	}
	return r.OnError(path, err)
}

func (r *Reader) readFile(path string, depth int, fn func(key string, value *string)) error {
	if r.Visit != nil {
		r.Visit(path)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // access_error_is_ok
	}
	if err != nil {
		return r.fail(path, fmt.Errorf("read config %s: %w", path, err))
	}
	return r.read(b, path, depth, fn)
}

func (r *Reader) read(buf []byte, path string, depth int, fn func(key string, value *string)) error {
	var stop error
	perr := Parse(buf, func(key string, value *string) {
		if stop != nil {
			return
		}
		// As git_config_include: the variable first, an include
		// line too, then the file it includes.
		fn(key, value)
		if !r.isInclude(key, path) {
			return
		}
		inc, err := r.includePath(value, path)
		if err == nil && depth+1 > maxIncludeDepth {
			err = fmt.Errorf("config %s: includes nested deeper than %d", path, maxIncludeDepth)
		}
		if err != nil {
			stop = r.fail(path, err)
			return
		}
		stop = r.readFile(inc, depth+1, fn)
	})
	if stop != nil {
		return stop
	}
	if perr != nil {
		name := path
		if name == "" {
			name = "(blob)"
		}
		return r.fail(path, fmt.Errorf("bad config file %s: %w", name, perr))
	}
	return nil
}

// isInclude reports whether key includes a file: include.path, or an
// includeIf.<condition>.path whose condition holds.
func (r *Reader) isInclude(key, path string) bool {
	if key == "include.path" {
		return true
	}
	cond, ok := strings.CutPrefix(key, "includeif.")
	if !ok {
		return false
	}
	cond, ok = strings.CutSuffix(cond, ".path")
	return ok && r.GitDir != "" && includeByGitdir(cond, r.GitDir, path, r.Env["HOME"])
}

// includePath is handle_path_include's name: "~/" from HOME, a relative
// name from the including file's directory.
func (r *Reader) includePath(value *string, from string) (string, error) {
	if value == nil {
		return "", fmt.Errorf("config %s: include path has no value", from)
	}
	p := *value
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home := r.Env["HOME"]
		if home == "" {
			return "", fmt.Errorf("config %s: cannot expand include path %q", from, p)
		}
		return filepath.Join(home, rest), nil
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	if from == "" {
		return "", fmt.Errorf("relative config includes must come from files: %q", p)
	}
	return filepath.Join(filepath.Dir(from), p), nil
}

// includeByGitdir is include_by_gitdir: the "gitdir:" or "gitdir/i:"
// condition for a git directory, from the file at path; other
// conditions (onbranch, hasconfig) do not hold here.
func includeByGitdir(cond, gitdir, path, home string) bool {
	pat, fold := "", false
	switch {
	case strings.HasPrefix(cond, "gitdir:"):
		pat = strings.TrimPrefix(cond, "gitdir:")
	case strings.HasPrefix(cond, "gitdir/i:"):
		pat, fold = strings.TrimPrefix(cond, "gitdir/i:"), true
	default:
		return false
	}
	if rest, ok := strings.CutPrefix(pat, "~/"); ok && home != "" {
		pat = filepath.Join(home, rest)
	}
	if strings.HasPrefix(pat, "./") {
		pat = filepath.Join(filepath.Dir(path), pat[2:])
	} else if !filepath.IsAbs(pat) {
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	dir, _ := filepath.Abs(gitdir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if fold {
		pat, dir = strings.ToLower(pat), strings.ToLower(dir)
	}
	return globMatch(pat, filepath.ToSlash(dir))
}

// globMatch is wildmatch with WM_PATHNAME: "*" and "?" stop at '/',
// "**/" spans directories.
func globMatch(pat, s string) bool {
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case pat[i:] == "/**":
			re.WriteString("(?:/.*)?") // "dir/" matches dir itself too
			i += 2
		case strings.HasPrefix(pat[i:], "**/"):
			re.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pat[i:], "**"):
			re.WriteString(".*")
			i++
		case c == '*':
			re.WriteString("[^/]*")
		case c == '?':
			re.WriteString("[^/]")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	m, err := regexp.MatchString(re.String(), s)
	return err == nil && m
}
