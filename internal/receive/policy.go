package receive

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// gitBool is git_config_bool: a key with no '=' (nil) is true, the
// empty string false; a value that is no boolean (git dies on it) is
// false.
func gitBool(value *string) bool {
	if value == nil {
		return true
	}
	b, _ := gitconfig.ParseBool(*value)
	return b
}

func parseDeny(value *string) denyAction {
	v := ""
	if value != nil {
		v = *value
	}
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
	if gitBool(value) {
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
// for the repository gitdir (internal/gitconfig: its files, includes and
// grammar; later files and later lines win, as in git). A file that
// cannot be parsed refuses the push: git dies on a bad config line too.
func LoadPolicy(gitdir string) (*Policy, error) {
	c := &receiveConfig{p: &Policy{gitdir: gitdir, fsckOpts: fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}}}}
	env := gitconfig.Environ(nil)
	own := filepath.Join(gitdir, "config")
	r := &gitconfig.Reader{
		Env: env, GitDir: gitdir,
		Visit: func(path string) { c.p.sources = append(c.p.sources, path) },
		OnError: func(path string, err error) error {
			// A system, global or included file this user may not read
			// is passed over (access_or_die's ACCESS_EACCES_OK); the
			// repository's own is not.
			if errors.Is(err, fs.ErrPermission) && path != own {
				return nil
			}
			return err
		},
	}
	for _, file := range gitconfig.Files(env, gitdir) {
		if err := r.ReadFile(file, c.set); err != nil {
			return nil, err
		}
	}
	return c.policy()
}

// receiveConfig is the receive policy while its configuration is read:
// the values that decide only once every file has been read (a later
// file overrides, receive.* wins over transfer.*) wait here (nil: not
// set).
type receiveConfig struct {
	p                             *Policy
	receiveFsck, transferFsck     *bool
	receiveUnpack, transferUnpack string
	bare                          *bool
	worktree                      string
	skipLists                     []string
}

// set takes one variable of the policy's (value nil: a key with no '=').
func (c *receiveConfig) set(key string, value *string) {
	p := c.p
	v := ""
	if value != nil {
		v = *value
	}
	flag := func() *bool { b := gitBool(value); return &b }
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
		c.receiveFsck = flag()
	case "transfer.fsckobjects":
		c.transferFsck = flag()
	case "receive.denydeletes":
		p.denyDeletes = gitBool(value)
	case "receive.denynonfastforwards":
		p.denyNonFF = gitBool(value)
	case "receive.denycurrentbranch":
		p.denyCurrent = parseDeny(value)
	case "receive.denydeletecurrent":
		p.denyDeleteCurrent = parseDeny(value)
	case "receive.shallowupdate":
		p.shallowUpdate = gitBool(value)
	case "core.hookspath":
		p.hooksDir = expandPath(v)
	case "core.bare":
		c.bare = flag()
	case "core.sharedrepository":
		p.shared = parseSharedRepository(value)
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
	case c.receiveFsck != nil:
		p.fsck = *c.receiveFsck
	case c.transferFsck != nil:
		p.fsck = *c.transferFsck
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
	if c.bare != nil {
		p.bare = *c.bare
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
	key := strings.Join(gitconfig.Files(gitconfig.Environ(nil), gitdir), "\x00")
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
