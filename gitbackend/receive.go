package gitbackend

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/fsck"
	"github.com/tgp-go/tgp/internal/gitconfig"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// This file is the receiving side of a push to a local remote: what git's
// receive-pack (builtin/receive-pack.c) does after the objects arrive, so
// that a shared repository's own policy holds whoever pushes to it. The
// kernel pushes to a path in process (no git binary), so without this a
// pre-receive hook, receive.fsckObjects or receive.denyNonFastForwards that
// the git CLI obeys would be skipped.
//
// The order is git's: fsck the incoming objects (receive.fsckObjects /
// transfer.fsckObjects), keep them in a quarantine directory, refuse hidden
// refs (receive.hideRefs), run pre-receive, then for the ref:
// denyCurrentBranch, denyDeletes, denyDeleteCurrent, denyNonFastForwards,
// the update hook, the work tree for denyCurrentBranch=updateInstead
// (push-to-checkout, or git's own push_to_deploy steps); move the objects
// into the store (with core.sharedRepository's permissions); move the ref;
// run post-receive and post-update.
// One deliberate difference: git migrates the objects before the update
// hook, so a refusal by that hook leaves them in the store (unreachable);
// here the update hook also sees the quarantine, and a refusal by it
// leaves nothing behind either.
//
// Hooks git would ignore because they are not executable, or that cannot
// be started on this platform, refuse the push: a policy that cannot run is
// not skipped.

// ErrDeclined matches every *PushRejectedError: the remote's own policy
// refused the push. It is permanent: pushing the same commits again is
// refused again, so the persist loop does not retry it.
var ErrDeclined = errors.New("push declined by the remote's policy")

// PushRejectedError is a push the remote refused, as git reports it:
// `! [remote rejected] <ref> (<reason>)` after the lines the remote printed
// (its hooks' stdout and stderr, receive-pack's own errors), which git
// shows prefixed with "remote: ".
type PushRejectedError struct {
	Ref    string
	Reason string
	Output []string
}

func (e *PushRejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[remote rejected] %s (%s)", e.Ref, e.Reason)
	for _, l := range e.Output {
		b.WriteString("\nremote: ")
		b.WriteString(l)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrDeclined) true.
func (e *PushRejectedError) Is(t error) bool { return t == ErrDeclined }

type denyAction int

const (
	denyUnconfigured denyAction = iota
	denyIgnore
	denyWarn
	denyRefuse
	denyUpdateInstead
)

// receivePolicy is the remote's receive.* configuration and hooks.
type receivePolicy struct {
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

// loadReceivePolicy reads the configuration git's receive-pack would read
// for the remote (git's grammar, internal/gitconfig; later files and
// later lines win, as in git). A file that cannot be parsed refuses the push:
// git dies on a bad config line too.
func loadReceivePolicy(gitdir string) (*receivePolicy, error) {
	c := &receiveConfig{p: &receivePolicy{gitdir: gitdir, fsckOpts: fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}}}}
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
	p                             *receivePolicy
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
func (c *receiveConfig) policy() (*receivePolicy, error) {
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
func (p *receivePolicy) hidden(ref string) bool {
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
func (p *receivePolicy) needsQuarantine() bool {
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
func (p *receivePolicy) procReceive(u refUpdate) bool {
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

func (p *receivePolicy) readSkipList(path string) error {
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

// hookMustRun finds a hook: "" when there is none. A hook file that exists
// but cannot be executed is an error: git would skip it with a hint; a
// policy that cannot run must not be skipped silently.
func (p *receivePolicy) hookMustRun(name string) (string, error) {
	path := filepath.Join(p.hooksDir, name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("hook %s: %w", path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("hook %s is a directory", path)
	}
	if fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("the '%s' hook at %s is not executable: refusing the push rather than skipping the remote's policy (git would ignore it; make it executable or remove it)", name, path)
	}
	return path, nil
}

// localRepoEnv are the variables git unsets before it starts receive-pack
// for a local push (local_repo_env): the pusher's repository must not leak
// into the remote's hooks.
var localRepoEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_COMMON_DIR", "GIT_QUARANTINE_PATH", "GIT_PUSH_OPTION_COUNT",
}

func hookEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := strings.HasPrefix(name, "GIT_PUSH_OPTION_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
		for _, v := range localRepoEnv {
			drop = drop || name == v
		}
		if !drop {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_DIR=.")
	return append(env, extra...)
}

// hookOutputLimit bounds what is kept of a hook's output.
const hookOutputLimit = 64 << 10

// hookWaitDelay is how long a finished hook's descendants may keep its
// output open (a post-receive that starts a CI job in the background).
const hookWaitDelay = 5 * time.Second

type cappedBuffer struct {
	buf       bytes.Buffer
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := hookOutputLimit - c.buf.Len(); room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// runHook runs a hook in $GIT_DIR with its stdout and stderr interleaved
// in one stream, as receive-pack relays them. ran is false when there is
// no such hook; err is set when it could not run or exited non-zero.
func (p *receivePolicy) runHook(ctx context.Context, name string, args []string, stdin string, env []string) (out []string, ran bool, err error) {
	path, err := p.hookMustRun(name)
	if err != nil {
		return nil, true, err
	}
	if path == "" {
		return nil, false, nil
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = p.gitdir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var buf cappedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = hookWaitDelay
	runErr := cmd.Run()
	out = splitLines(buf.buf.String())
	if buf.truncated {
		out = append(out, fmt.Sprintf("(hook output cut at %d bytes)", hookOutputLimit))
	}
	if errors.Is(runErr, exec.ErrWaitDelay) {
		runErr = nil
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return out, true, fmt.Errorf("hook %s: %w", name, runErr)
		}
		// Not started: no interpreter, not a format this platform runs.
		return out, true, fmt.Errorf("cannot run the '%s' hook %s (refusing the push rather than skipping the remote's policy): %w", name, path, runErr)
	}
	return out, true, nil
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// refUpdate is one command of a push: move Ref from Old to New (New zero:
// delete it; Old zero: create it).
type refUpdate struct {
	Ref      string
	Old, New plumbing.Hash
}

func (u refUpdate) line() string {
	return u.Old.String() + " " + u.New.String() + " " + u.Ref + "\n"
}

// receive applies u to the remote as git's receive-pack would. lk holds
// the ref's lock and the ref is known to be at u.Old. On a refusal nothing
// the push brought stays on the remote. seg, when it completes u.Old..u.New,
// is what the push brings, already packed. src is where the pushed
// objects are read (nil: the local store).
func (l *localRemote) receive(ctx context.Context, rs *filesystem.Storage, lk *refLock, u refUpdate, seg *segment, src storer.EncodedObjectStorer) error {
	if src == nil {
		src = l.local
	}
	pol, err := l.policy()
	if err != nil {
		return err
	}
	var out []string
	reject := func(reason string) error {
		return &PushRejectedError{Ref: u.Ref, Reason: reason, Output: out}
	}
	var q *quarantine
	defer func() { q.remove() }()
	var shallow, direct []plumbing.Hash
	if seg != nil && (seg.base != u.Old || seg.head != u.New || u.Old.IsZero()) {
		seg = nil
	}
	if !u.New.IsZero() {
		var missing []plumbing.Hash
		if seg != nil {
			// The remote has u.Old's closure; the pack has the rest.
			missing = seg.pack.Hashes
		} else if missing, shallow, err = collectMissing(ctx, src, rs, u.New, 0); err != nil {
			return err
		}
		if pol.fsck {
			lines, failed, err := fsck.Objects(src, missing, &pol.fsckOpts)
			if err != nil {
				return err
			}
			out = append(out, lines...)
			if failed {
				out = append(out, "fatal: fsck error in packed object")
				return reject("unpacker error")
			}
		}
		if len(shallow) > 0 && !pol.shallowUpdate {
			return reject("shallow update not allowed")
		}
		// The quarantine is for whoever looks at the objects before the
		// ref moves: the pre-receive and update hooks, git's work-tree
		// update, the group permissions of a shared repository. With none
		// of them the checks below need only our own store, and the
		// objects go straight into the remote's once they passed (on a
		// slow filesystem the quarantine's directories cost more than the
		// rest of the push).
		if pol.needsQuarantine() {
			if q, err = newQuarantine(l.path, pol.shared); err != nil {
				return err
			}
			if err := q.write(ctx, src, missing, len(missing) >= pol.unpackLimit); err != nil {
				return err
			}
		} else {
			direct = missing
		}
	}
	var qenv []string
	if q != nil {
		qenv = q.env()
	}

	if pol.hidden(u.Ref) {
		if u.New.IsZero() {
			return reject("deny deleting a hidden ref")
		}
		return reject("deny updating a hidden ref")
	}

	if pol.procReceive(u) {
		// The refs a proc-receive hook takes over (code review systems);
		// its protocol is not spoken here, and skipping it would be worse.
		out = append(out, "error: receive.procReceiveRefs names "+u.Ref+": the in-process push cannot run the proc-receive hook")
		return reject("fail to run proc-receive hook")
	}

	hookOut, _, err := pol.runHook(ctx, "pre-receive", nil, u.line(), hookEnv(append([]string{"GIT_PUSH_OPTION_COUNT=0"}, qenv...)...))
	out = append(out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped, not refused: nothing permanent about it.
			return fmt.Errorf("pre-receive hook of %s: %w", l.path, ctx.Err())
		}
		if !isExit(err) {
			out = append(out, "error: "+err.Error())
		}
		return reject("pre-receive hook declined")
	}

	reason, lines, updateWorktree := pol.check(ctx, src, rs, u)
	out = append(out, lines...)
	if reason != "" {
		return reject(reason)
	}

	hookOut, _, err = pol.runHook(ctx, "update", []string{u.Ref, u.Old.String(), u.New.String()}, "", hookEnv(qenv...))
	out = append(out, hookOut...)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("update hook of %s: %w", l.path, ctx.Err())
		}
		if !isExit(err) {
			out = append(out, "error: "+err.Error())
		}
		out = append(out, "error: hook declined to update "+u.Ref)
		return reject("hook declined")
	}

	if updateWorktree {
		lines, reason := pol.updateWorktree(ctx, u.New, qenv)
		out = append(out, lines...)
		if reason != "" {
			return reject(reason)
		}
	}

	if len(direct) > 0 {
		// One pack, whatever receive.unpackLimit says: the objects are the
		// same either way, and a file per object is what makes a push slow.
		p := (*packfile.Packed)(nil)
		if seg != nil {
			p = seg.pack
		} else if p, err = l.enc.Encode(src, direct); err != nil {
			return fmt.Errorf("push %s to %s: %w", u.Ref, l.path, err)
		}
		if err := packfile.WriteFiles(l.path, p, nil); err != nil {
			return fmt.Errorf("push %s to %s: %w", u.Ref, l.path, err)
		}
	}
	if q != nil {
		// git's "unable to migrate objects to permanent storage": a
		// failure of the store (a full disk), not of the policy, so not
		// a permanent refusal.
		if err := q.migrate(); err != nil {
			return fmt.Errorf("unable to migrate objects to permanent storage in %s: %w", l.path, err)
		}
		q = nil
	}
	if len(shallow) > 0 {
		// receive.shallowUpdate allowed it: the remote's history now ends
		// where ours does (before the ref points into it).
		old, _ := rs.Shallow()
		if err := rs.SetShallow(append(old, shallow...)); err != nil {
			return fmt.Errorf("update shallow of %s: %w", l.path, err)
		}
	}
	// Still under the ref's lock, so that the writers queued on it never
	// read the packs while they are merged.
	l.consolidate(pol.shared)
	if u.New.IsZero() {
		err = lk.deleteRef()
	} else {
		err = lk.commit(u.New, func(p string) error { return adjustSharedPerm(p, pol.shared) })
	}
	if err != nil {
		return fmt.Errorf("update %s in %s: %w", u.Ref, l.path, err)
	}
	for _, d := range lk.newDirs {
		_ = adjustSharedPerm(d, pol.shared) // best effort: the ref is written
	}

	// After the ref moved: their exit status does not matter (git ignores
	// it too), but one that cannot run is reported.
	hookOut, _, err = pol.runHook(ctx, "post-receive", nil, u.line(), hookEnv("GIT_PUSH_OPTION_COUNT=0"))
	out = append(out, hookOut...)
	if err != nil && !isExit(err) {
		out = append(out, "error: "+err.Error())
	}
	hookOut, _, err = pol.runHook(ctx, "post-update", []string{u.Ref}, "", hookEnv())
	out = append(out, hookOut...)
	if err != nil && !isExit(err) {
		out = append(out, "error: "+err.Error())
	}
	if l.progress != nil {
		for _, line := range out {
			l.progress("remote: " + line)
		}
	}
	return nil
}

// consolidate merges the remote's small packs once there are many (one
// arrives per push). A failure leaves the packs as they were: still valid.
func (l *localRemote) consolidate(shared int) {
	// Counting names costs no stat per file; most pushes stop here.
	ents, err := os.ReadDir(filepath.Join(l.path, "objects", "pack"))
	if err != nil {
		return
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			n++
		}
	}
	if n <= maxSmallPacks {
		return
	}
	src := l.open()
	defer src.Close()
	_, err = consolidatePacks(osfs.New(l.path), src, &l.enc, func(p *packfile.Packed) error {
		return packfile.WriteFiles(l.path, p, func(f string) error { return adjustSharedPerm(f, shared) })
	})
	if err != nil && l.progress != nil {
		l.progress("warning: " + err.Error())
	}
}

func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

const refuseUnconfiguredDenyMsg = `By default, updating the current branch in a non-bare repository
is denied, because it will make the index and work tree inconsistent
with what you pushed, and will require 'git reset --hard' to match
the work tree to HEAD.

You can set the 'receive.denyCurrentBranch' configuration variable
to 'ignore' or 'warn' in the remote repository to allow pushing into
its current branch; however, this is not recommended unless you
arranged to update its work tree to match what you pushed in some
other way.

To squelch this message and still keep the default behaviour, set
'receive.denyCurrentBranch' configuration variable to 'refuse'.`

const refuseUnconfiguredDenyDeleteCurrentMsg = `By default, deleting the current branch is denied, because the next
'git clone' won't result in any file checked out, causing confusion.

You can set 'receive.denyDeleteCurrent' configuration variable to
'warn' or 'ignore' in the remote repository to allow deleting the
current branch, with or without a warning message.

To squelch this message, you can set it to 'refuse'.`

func rpError(msg string) []string {
	lines := strings.Split(msg, "\n")
	lines[0] = "error: " + lines[0]
	return lines
}

// checkedOut reports whether ref is what a work tree of the remote has
// checked out (find_shared_symref over the main and the linked work
// trees), and whether ref is the remote's HEAD.
func (p *receivePolicy) checkedOut(ref string) (inWorktree, isHead bool) {
	headOf := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			return ""
		}
		t, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
		if !ok {
			return ""
		}
		return strings.TrimSpace(t)
	}
	isHead = headOf(filepath.Join(p.gitdir, "HEAD")) == ref
	inWorktree = !p.bare && isHead
	if wts, err := os.ReadDir(filepath.Join(p.gitdir, "worktrees")); err == nil {
		for _, wt := range wts {
			if headOf(filepath.Join(p.gitdir, "worktrees", wt.Name(), "HEAD")) == ref {
				inWorktree = true
			}
		}
	}
	return inWorktree, isHead
}

// check is the policy part of receive-pack's update(): it returns the
// reason the ref may not move ("" if it may) and the lines git prints.
func (p *receivePolicy) check(ctx context.Context, local, remote storer.EncodedObjectStorer, u refUpdate) (reason string, out []string, updateWorktree bool) {
	reason, out = p.check1(ctx, local, remote, u)
	if reason == "" && p.denyCurrent == denyUpdateInstead {
		updateWorktree, _ = p.checkedOut(u.Ref)
	}
	return reason, out, updateWorktree
}

func (p *receivePolicy) check1(ctx context.Context, local, remote storer.EncodedObjectStorer, u refUpdate) (string, []string) {
	var out []string
	name := strings.TrimPrefix(u.Ref, "refs/")
	if !strings.HasPrefix(u.Ref, "refs/") || plumbing.ReferenceName(u.Ref).Validate() != nil || name == "" {
		return "funny refname", rpError(fmt.Sprintf("refusing to update funny ref '%s' remotely", u.Ref))
	}
	inWorktree, isHead := p.checkedOut(u.Ref)
	if inWorktree {
		switch p.denyCurrent {
		case denyIgnore:
		case denyWarn:
			out = append(out, "warning: updating the current branch")
		case denyRefuse, denyUnconfigured:
			out = append(out, rpError("refusing to update checked out branch: "+u.Ref)...)
			if p.denyCurrent == denyUnconfigured {
				out = append(out, rpError(refuseUnconfiguredDenyMsg)...)
			}
			return "branch is currently checked out", out
		case denyUpdateInstead:
			// Let the other checks speak first; the work tree is updated
			// after the update hook (updateWorktree).
		}
	}
	if !u.Old.IsZero() && u.New.IsZero() {
		if p.denyDeletes && strings.HasPrefix(u.Ref, "refs/heads/") {
			out = append(out, rpError("denying ref deletion for "+u.Ref)...)
			return "deletion prohibited", out
		}
		if inWorktree || isHead {
			switch p.denyDeleteCurrent {
			case denyIgnore:
			case denyWarn:
				out = append(out, "warning: deleting the current branch")
			default:
				if p.denyDeleteCurrent == denyUnconfigured {
					out = append(out, rpError(refuseUnconfiguredDenyDeleteCurrentMsg)...)
				}
				out = append(out, rpError("refusing to delete the current branch: "+u.Ref)...)
				return "deletion of the current branch prohibited", out
			}
		}
	}
	if p.denyNonFF && !u.New.IsZero() && !u.Old.IsZero() && strings.HasPrefix(u.Ref, "refs/heads/") {
		ok, err := isAncestor(ctx, u.Old, u.New, local, remote)
		if err != nil {
			return "bad ref", append(out, "error: bad sha1 objects for "+u.Ref+": "+err.Error())
		}
		if !ok {
			out = append(out, rpError(fmt.Sprintf("denying non-fast-forward %s (you should pull first)", u.Ref))...)
			return "non-fast-forward", out
		}
	}
	return "", out
}

// isAncestor reports whether old is reachable from new, reading commits
// from the pusher's store first and the remote's second.
func isAncestor(ctx context.Context, old, new plumbing.Hash, stores ...storer.EncodedObjectStorer) (bool, error) {
	get := func(h plumbing.Hash) (*object.Commit, error) {
		var lastErr error
		for _, s := range stores {
			c, err := object.GetCommit(s, h)
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		return nil, fmt.Errorf("commit %s: %w", h, lastErr)
	}
	if _, err := get(old); err != nil {
		return false, err
	}
	seen := map[plumbing.Hash]bool{new: true}
	queue := []plumbing.Hash{new}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		h := queue[0]
		queue = queue[1:]
		if h == old {
			return true, nil
		}
		c, err := get(h)
		if err != nil {
			return false, err
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// updateWorktree is receive-pack's update_worktree for
// receive.denyCurrentBranch=updateInstead: the push-to-checkout hook when
// there is one, else push_to_deploy, which receive-pack itself does by
// running git (update-index --refresh, diff-files, diff-index, read-tree
// -u -m). Without a git binary the push is refused: the work tree could
// not be brought to what was pushed. It returns git's lines and the reason
// for a refusal ("" when the work tree was updated).
func (p *receivePolicy) updateWorktree(ctx context.Context, newHash plumbing.Hash, qenv []string) ([]string, string) {
	if p.bare || p.worktree == "" {
		return nil, "denyCurrentBranch = updateInstead needs a worktree"
	}
	gitdir, _ := filepath.Abs(p.gitdir)
	worktree, _ := filepath.Abs(p.worktree)
	env := append(hookEnv(qenv...), "GIT_DIR="+gitdir)
	out, ran, err := p.runHook(ctx, "push-to-checkout", []string{newHash.String()}, "", append(env, "GIT_WORK_TREE="+worktree))
	if ran {
		if err != nil {
			if !isExit(err) {
				out = append(out, "error: "+err.Error())
			}
			return out, "push-to-checkout hook declined"
		}
		return out, ""
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return rpError("receive.denyCurrentBranch=updateInstead: no git binary to update the work tree with"), "Could not update working tree to new HEAD"
	}
	run := func(dir string, args ...string) ([]string, bool) {
		cmd := exec.CommandContext(ctx, gitBin, args...)
		cmd.Dir, cmd.Env = dir, env
		var buf cappedBuffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		return splitLines(buf.buf.String()), err == nil
	}
	var lines []string
	step := func(dir, failure string, args ...string) string {
		l, ok := run(dir, args...)
		lines = append(lines, l...)
		if !ok {
			return failure
		}
		return ""
	}
	head := "HEAD"
	if _, ok := run(worktree, "rev-parse", "--verify", "-q", "HEAD"); !ok {
		head = "4b825dc642cb6eb9a060e54bf8d69288fbee4904" // the empty tree
	}
	for _, s := range []struct {
		dir, failure string
		args         []string
	}{
		{worktree, "Up-to-date check failed", []string{"update-index", "-q", "--ignore-submodules", "--refresh"}},
		{worktree, "Working directory has unstaged changes", []string{"diff-files", "--quiet", "--ignore-submodules", "--"}},
		{gitdir, "Working directory has staged changes", []string{"diff-index", "--quiet", "--cached", "--ignore-submodules", head, "--"}},
		{worktree, "Could not update working tree to new HEAD", []string{"read-tree", "-u", "-m", newHash.String()}},
	} {
		if reason := step(s.dir, s.failure, s.args...); reason != "" {
			return lines, reason
		}
	}
	return lines, ""
}

// policyCache is the remote's receive policy as last read, with the stat
// data of every file it came from: a push reads the configuration again
// only when one of them changed (git config rewrites a file through a
// lock and a rename, so a new inode at least).
type policyCache struct {
	key    string
	pol    *receivePolicy
	stamps []sourceStamp
}

type sourceStamp struct {
	exists bool
	size   int64
	mtime  time.Time
	ino    uint64
}

func stampSource(path string) sourceStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return sourceStamp{}
	}
	return sourceStamp{exists: true, size: fi.Size(), mtime: fi.ModTime(), ino: inodeOf(fi)}
}

// policy returns the receive policy, read again when its files changed.
func (l *localRemote) policy() (*receivePolicy, error) {
	key := strings.Join(gitConfigFiles(l.path), "\x00")
	if c := l.pol; c != nil && c.key == key {
		fresh := true
		for i, src := range c.pol.sources {
			if stampSource(src) != c.stamps[i] {
				fresh = false
				break
			}
		}
		if fresh {
			return c.pol, nil
		}
	}
	l.pol = nil
	pol, err := loadReceivePolicy(l.path)
	if err != nil {
		return nil, err
	}
	stamps := make([]sourceStamp, len(pol.sources))
	racy := time.Now().Add(-100 * time.Millisecond)
	for i, src := range pol.sources {
		stamps[i] = stampSource(src)
		if stamps[i].exists && stamps[i].mtime.After(racy) {
			// Changed moments ago (perhaps while it was read, within
			// the file clock's resolution): not cached, as git treats a
			// racily clean index entry.
			return pol, nil
		}
	}
	l.pol = &policyCache{key: key, pol: pol, stamps: stamps}
	return pol, nil
}
