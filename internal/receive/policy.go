package receive

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/fsck"
	"github.com/tgp-go/tgp/internal/gitconfig"
)

type denyAction int

const (
	denyUnconfigured denyAction = iota
	denyIgnore
	denyWarn
	denyRefuse
	denyUpdateInstead
)

// Policy is a repository's receive.* configuration and hooks: what
// receive-pack reads before it accepts a push.
type Policy struct {
	gitdir            string
	bare              bool
	worktree          string // non-bare: the work tree
	fsck              bool
	fsckOpts          fsck.Options
	denyDeletes       bool
	denyNonFF         bool
	denyCurrent       denyAction
	denyDeleteCurrent denyAction
	shallowUpdate     bool
	hooksDir          string
	shared            int      // core.sharedRepository
	hideRefs          []string // transfer.hideRefs and receive.hideRefs, in order
	procReceiveRefs   []string // receive.procReceiveRefs
	unpackLimit       int      // below it objects arrive loose, else as a pack
	// sources are the files the policy was read from (cachedPolicy).
	sources []string
}

// gitConfigFiles lists the configuration files git reads for a
// repository, lowest priority first: system, global (XDG, then
// ~/.gitconfig), the repository's own.
func gitConfigFiles(gitdir string) []string {
	var files []string
	if !gitBool(os.Getenv("GIT_CONFIG_NOSYSTEM"), false) {
		if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
			files = append(files, p)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if p, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		if p != "" {
			files = append(files, p)
		}
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
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
	return append(files, filepath.Join(gitdir, "config"))
}

// gitBool is git_config_bool: a key with no value is true.
func gitBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on":
		return true
	case "false", "no", "off":
		return false
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return n != 0
	}
	return def
}

func parseDeny(v string) denyAction {
	switch strings.ToLower(v) {
	case "ignore":
		return denyIgnore
	case "warn":
		return denyWarn
	case "refuse":
		return denyRefuse
	case "updateinstead":
		return denyUpdateInstead
	}
	if gitBool(v, false) {
		return denyRefuse
	}
	return denyIgnore
}

// expandPath is git_config_pathname's "~/" expansion.
func expandPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// LoadPolicy reads the configuration git's receive-pack would read
// for the repository gitdir (git's grammar, internal/gitconfig; later files and
// later lines win, as in git). A file that cannot be parsed refuses the push:
// git dies on a bad config line too.
func LoadPolicy(gitdir string) (*Policy, error) {
	c := &receiveConfig{p: &Policy{gitdir: gitdir, fsckOpts: fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}}}}
	for _, file := range gitConfigFiles(gitdir) {
		if err := c.read(file, 0); err != nil {
			return nil, err
		}
	}
	return c.policy()
}

// receiveConfig is the receive policy while its configuration is read:
// the values that decide only once every file has been read (a later
// file overrides, receive.* wins over transfer.*) wait here as text.
type receiveConfig struct {
	p                             *Policy
	receiveFsck, transferFsck     string
	receiveUnpack, transferUnpack string
	bare, worktree                string
	skipLists                     []string
}

// read reads one file, following include.path and includeIf "gitdir:"
// where they stand (git's config includes: a shared repository may keep
// its policy in an included file). Each line counts in order, as git
// reads them: later lines win.
func (c *receiveConfig) read(file string, depth int) error {
	if depth > 10 {
		return fmt.Errorf("config %s: includes nested too deep", file)
	}
	gitdir := c.p.gitdir
	c.p.sources = append(c.p.sources, file)
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) && file != filepath.Join(gitdir, "config") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read config %s: %w", file, err)
	}
	include := func(v string) error {
		inc := expandPath(v)
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(file), inc)
		}
		return c.read(inc, depth+1)
	}
	var incErr error
	perr := gitconfig.Parse(b, func(key string, value *string) {
		if incErr != nil {
			return
		}
		v := "" // a key with no '=' (gitBool reads "" as true)
		if value != nil {
			v = *value
		}
		switch {
		case key == "include.path":
			incErr = include(v)
		case strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"):
			if includeIfGitdir(key[len("includeif."):len(key)-len(".path")], gitdir, file) {
				incErr = include(v)
			}
		default:
			c.set(key, v)
		}
	})
	if incErr != nil {
		return incErr
	}
	if perr != nil {
		return fmt.Errorf("bad config file %s: %w", file, perr)
	}
	return nil
}

// set takes one variable of the policy's.
func (c *receiveConfig) set(key, v string) {
	p := c.p
	if id, ok := strings.CutPrefix(key, "receive.fsck."); ok {
		// receive.fsck.<msg-id>, and the skip list.
		if id == "skiplist" {
			c.skipLists = append(c.skipLists, expandPath(v))
			return
		}
		switch strings.ToLower(v) {
		case "error":
			p.fsckOpts.Severity[id] = fsck.Error
		case "warn":
			p.fsckOpts.Severity[id] = fsck.Warn
		case "ignore":
			p.fsckOpts.Severity[id] = fsck.Ignore
		}
		return
	}
	switch key {
	case "receive.fsckobjects":
		c.receiveFsck = v
	case "transfer.fsckobjects":
		c.transferFsck = v
	case "receive.denydeletes":
		p.denyDeletes = gitBool(v, false)
	case "receive.denynonfastforwards":
		p.denyNonFF = gitBool(v, false)
	case "receive.denycurrentbranch":
		p.denyCurrent = parseDeny(v)
	case "receive.denydeletecurrent":
		p.denyDeleteCurrent = parseDeny(v)
	case "receive.shallowupdate":
		p.shallowUpdate = gitBool(v, false)
	case "core.hookspath":
		p.hooksDir = expandPath(v)
	case "core.bare":
		c.bare = v
	case "core.sharedrepository":
		p.shared = parseSharedRepository(v)
	case "receive.hiderefs", "transfer.hiderefs":
		p.hideRefs = append(p.hideRefs, strings.TrimRight(v, "/"))
	case "receive.procreceiverefs":
		p.procReceiveRefs = append(p.procReceiveRefs, v)
	case "receive.unpacklimit":
		c.receiveUnpack = v
	case "transfer.unpacklimit":
		c.transferUnpack = v
	case "core.worktree":
		c.worktree = v
	}
}

// policy decides what waited for every file: fsck, the unpack limit, the
// skip lists, bareness, the worktree and the hooks directory.
func (c *receiveConfig) policy() (*Policy, error) {
	p, gitdir := c.p, c.p.gitdir
	// receive.fsckObjects wins; transfer.fsckObjects is the fallback.
	switch {
	case c.receiveFsck != "":
		p.fsck = gitBool(c.receiveFsck, false)
	case c.transferFsck != "":
		p.fsck = gitBool(c.transferFsck, false)
	}
	p.unpackLimit = 100
	for _, v := range []string{c.transferUnpack, c.receiveUnpack} {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			p.unpackLimit = n
		}
	}
	for _, sl := range c.skipLists {
		if err := p.readSkipList(sl); err != nil {
			return nil, err
		}
	}
	// git takes a repository found as "<dir>/.git" as non-bare unless
	// core.bare says otherwise.
	if c.bare != "" {
		p.bare = gitBool(c.bare, true)
	} else {
		p.bare = filepath.Base(gitdir) != ".git"
	}
	if !p.bare {
		p.worktree = filepath.Dir(gitdir)
		if c.worktree != "" {
			p.worktree = c.worktree
			if !filepath.IsAbs(c.worktree) {
				p.worktree = filepath.Join(gitdir, c.worktree)
			}
		}
	}
	if p.hooksDir == "" {
		p.hooksDir = filepath.Join(gitdir, "hooks")
	} else if !filepath.IsAbs(p.hooksDir) {
		// Push hooks run in $GIT_DIR, where a relative hooksPath resolves.
		p.hooksDir = filepath.Join(gitdir, p.hooksDir)
	}
	return p, nil
}

// hidden is git's ref_is_hidden: the last matching transfer.hideRefs /
// receive.hideRefs pattern decides ("!" negates, "^" names the full ref:
// the same thing without namespaces).
func (p *Policy) hidden(ref string) bool {
	for i := len(p.hideRefs) - 1; i >= 0; i-- {
		match, neg := p.hideRefs[i], false
		if m, ok := strings.CutPrefix(match, "!"); ok {
			match, neg = m, true
		}
		match = strings.TrimPrefix(match, "^")
		if rest, ok := strings.CutPrefix(ref, match); ok && (rest == "" || rest[0] == '/') {
			return !neg
		}
	}
	return false
}

// needsQuarantine reports whether anything will look at a push's objects
// before the ref moves: a pre-receive or update hook (runnable or not: one
// that is not is refused later), the work tree of updateInstead, or a
// shared repository's permissions, which the quarantine's migration sets.
func (p *Policy) needsQuarantine() bool {
	if p.denyCurrent == denyUpdateInstead || p.shared != permUmask {
		return true
	}
	for _, h := range []string{"pre-receive", "update"} {
		if _, err := os.Lstat(filepath.Join(p.hooksDir, h)); err == nil {
			return true
		}
	}
	return false
}

// procReceive is proc_receive_ref_matches: "[a][d][m][!]:prefix" or a
// bare prefix, matched at a '/' boundary.
func (p *Policy) procReceive(u Update) bool {
	for _, v := range p.procReceiveRefs {
		add, del, mod, neg := true, true, true, false
		if mods, prefix, ok := strings.Cut(v, ":"); ok {
			add, del, mod = strings.Contains(mods, "a"), strings.Contains(mods, "d"), strings.Contains(mods, "m")
			neg = strings.Contains(mods, "!")
			v = prefix
		}
		switch {
		case !add && u.Old.IsZero(), !del && u.New.IsZero(), !mod && !u.Old.IsZero() && !u.New.IsZero():
			continue
		}
		prefix := strings.TrimRight(v, "/")
		rest, ok := strings.CutPrefix(u.Ref, prefix)
		if matched := ok && (rest == "" || rest[0] == '/'); matched != neg {
			return true
		}
	}
	return false
}

// includeIfGitdir is includeIf's "gitdir:" / "gitdir/i:" condition
// for the remote's git directory; other conditions (onbranch, hasconfig)
// do not hold for a push, as for receive-pack.
func includeIfGitdir(cond, gitdir, file string) bool {
	pat, fold := "", false
	switch {
	case strings.HasPrefix(cond, "gitdir:"):
		pat = strings.TrimPrefix(cond, "gitdir:")
	case strings.HasPrefix(cond, "gitdir/i:"):
		pat, fold = strings.TrimPrefix(cond, "gitdir/i:"), true
	default:
		return false
	}
	pat = expandPath(pat)
	if strings.HasPrefix(pat, "./") {
		pat = filepath.Join(filepath.Dir(file), pat[2:])
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

func (p *Policy) readSkipList(path string) error {
	p.sources = append(p.sources, path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("receive.fsck.skipList %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if !plumbing.IsHash(line) {
			return fmt.Errorf("receive.fsck.skipList %s: invalid object name %q", path, line)
		}
		p.fsckOpts.Skip[plumbing.NewHash(line)] = true
	}
	return sc.Err()
}

// AdjustPerm gives a file or directory the repository writes the
// permissions core.sharedRepository asks for (git's adjust_shared_perm).
func (p *Policy) AdjustPerm(path string) error { return adjustSharedPerm(path, p.shared) }

// PolicyCache is a repository's receive policy as last read, with the
// stat data of every file it came from: a push reads the configuration
// again only when one of them changed (git config rewrites a file through
// a lock and a rename, so a new inode at least). The zero PolicyCache is
// empty and ready; it is not safe for concurrent use.
type PolicyCache struct {
	c *cachedPolicy
}

type cachedPolicy struct {
	key    string
	pol    *Policy
	stamps []sourceStamp
}

// sourceStamp is a file's stat data (fi nil: there is no such file).
type sourceStamp struct {
	fi fs.FileInfo
}

func stampSource(path string) sourceStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return sourceStamp{}
	}
	return sourceStamp{fi: fi}
}

func (s sourceStamp) exists() bool { return s.fi != nil }

// same reports whether both stamps are of the same file, unchanged.
func (s sourceStamp) same(t sourceStamp) bool {
	if s.fi == nil || t.fi == nil {
		return s.fi == nil && t.fi == nil
	}
	return s.fi.Size() == t.fi.Size() && s.fi.ModTime().Equal(t.fi.ModTime()) && os.SameFile(s.fi, t.fi)
}

// Load returns the receive policy of gitdir, read again when its files
// changed.
func (pc *PolicyCache) Load(gitdir string) (*Policy, error) {
	key := strings.Join(gitConfigFiles(gitdir), "\x00")
	if c := pc.c; c != nil && c.key == key {
		fresh := true
		for i, src := range c.pol.sources {
			if !stampSource(src).same(c.stamps[i]) {
				fresh = false
				break
			}
		}
		if fresh {
			return c.pol, nil
		}
	}
	pc.c = nil
	pol, err := LoadPolicy(gitdir)
	if err != nil {
		return nil, err
	}
	stamps := make([]sourceStamp, len(pol.sources))
	racy := time.Now().Add(-100 * time.Millisecond)
	for i, src := range pol.sources {
		stamps[i] = stampSource(src)
		if stamps[i].exists() && stamps[i].fi.ModTime().After(racy) {
			// Changed moments ago (perhaps while it was read, within
			// the file clock's resolution): not cached, as git treats a
			// racily clean index entry.
			return pol, nil
		}
	}
	pc.c = &cachedPolicy{key: key, pol: pol, stamps: stamps}
	return pol, nil
}
