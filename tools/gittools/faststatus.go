package gittools

import (
	"bufio"
	"bytes"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/gitattr"
)

// fastStatusIgnored computes what go-git's Worktree.Status computes, the way git
// does it: HEAD against the index by hash, reading only the HEAD subtrees
// whose hash differs from the tree the index directory would make
// (gitbackend.DiffIndex, git's cache-tree shortcut); the index against the worktree by
// stat data (size and mtime, and the racy-git rule: an entry not older
// than the index is compared by content), hashing only files whose stat
// changed; untracked files from one walk that reads each .gitignore as it
// enters a directory. go-git's Status hashes every file and walks ignored
// trees, which is 7-11x slower than git on a 10,000-file repository.
//
// The walk lists each directory once and stats only the files the index
// holds (git's lstat per entry); on a root on disk it reads directories
// by file descriptor (getdents, fstatat relative to the directory: no
// path resolution from the root per file) on as many threads as there
// are CPUs, as git's preload-index does. The index comes from the
// repository's warm state when it has one.
//
// fastStatusIgnored also returns the index it read
// (the repository's shared one: read it, never change it) and the ignored
// untracked files (git add refuses to add them by name). With
// underIndexFiles, untracked files inside a directory that replaced an
// indexed file are listed too: git status hides them, git add -A adds them.
func fastStatusIgnored(r *git.Repository, s *settings, untracked, underIndexFiles bool) (git.Status, *index.Index, ignoredPaths, error) {
	return scanStatus(r, s, statusScan{untracked: untracked, underIndexFiles: underIndexFiles, ignored: true})
}

// statusScan says what a status walk must find.
type statusScan struct {
	untracked, underIndexFiles bool
	// ignored: list the ignored untracked files too (walking ignored
	// directories); git status needs only the others.
	ignored bool
	// lookAtFlagged: compare the assume-unchanged and skip-worktree
	// entries with their files too, as the checks before a switch or a
	// merge do (unpack-trees' verify_uptodate ignores both flags).
	lookAtFlagged bool
}

// ignoredPaths are the ignored untracked paths a walk found: every file
// (files), and the top-most ignored entries (top): a directory an ignore
// rule excludes as a whole, or a file outside such a directory, as git's
// fill_directory meets them (it does not enter an excluded directory).
type ignoredPaths struct {
	files, top map[string]bool
}

// scanStatus is git status's comparison: the index with HEAD's tree
// (staged changes), each index entry with its file (stagingStatus,
// entryCompare.worktreeStatus) and, with o.untracked, the files the index
// lacks. Entries found unchanged with new stat data are written back to
// the index, as git status refreshes it.
func scanStatus(r *git.Repository, s *settings, o statusScan) (git.Status, *index.Index, ignoredPaths, error) {
	w, err := worktreeOf(r)
	if err != nil {
		return nil, nil, ignoredPaths{}, err
	}
	// The index as the repository keeps it decoded (shared: read only; a
	// refresh below writes a copy).
	idx, shared, err := gitbackend.IndexView(r.Storer)
	if err != nil {
		return nil, nil, ignoredPaths{}, err
	}
	if !slices.IsSortedFunc(idx.Entries, cmpEntry) {
		if shared {
			idx, shared = gitbackend.CloneIndex(idx), false
		}
		slices.SortStableFunc(idx.Entries, cmpEntry)
	}
	ents := idx.Entries
	tree, _, err := headTreeHash(r)
	if err != nil {
		return nil, nil, ignoredPaths{}, err
	}
	// HEAD's entry at each index path; HEAD's paths the index lacks.
	headAt, deleted, err := gitbackend.DiffIndex(r.Storer, tree, ents)
	if err != nil {
		return nil, nil, ignoredPaths{}, err
	}
	var patterns []gitignore.Pattern
	if dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		patterns = append(patterns, readIgnore(dot.Filesystem(), "info/exclude", nil)...)
	}
	cmp := &entryCompare{s: s, o: o, fs: w.Filesystem, valid: gitbackend.AssumeUnchangedIn(r.Storer), indexTime: idx.ModTime}
	sc := &scanner{src: newDirSource(w.Filesystem), ents: ents, stats: make([]wstat, len(ents)), o: o,
		stale: cmp.read, ignored: map[string]bool{}, ignoredTop: map[string]bool{}, content: map[int]worktreeFile{}}
	sc.walk(patterns)

	st := git.Status{}
	set := func(p string, staging, worktree git.StatusCode) {
		fs := st.File(p)
		if staging != 0 {
			fs.Staging = staging
		}
		if worktree != 0 {
			fs.Worktree = worktree
		}
	}
	cmp.eol = newEOLConverter(r, s)
	gitlinks := map[string]bool{}
	// refreshed are the entries whose content matched with new stat data.
	var refreshed []int
	for _, d := range deleted {
		set(d.Path, git.Deleted, git.Unmodified)
		// a path deleted from the index but present in the worktree is
		// also untracked, as git reports it
	}
	for i, e := range ents {
		staging := stagingStatus(headAt[i], e)
		worktree, gitlink, fresh := cmp.worktreeStatus(e, &sc.stats[i], sc.content, i)
		if gitlink {
			gitlinks[e.Name] = true
		}
		if fresh {
			refreshed = append(refreshed, i)
		}
		if staging != git.Unmodified || worktree != git.Unmodified {
			set(e.Name, staging, worktree)
		}
	}
	if len(refreshed) > 0 {
		if shared {
			idx, shared = gitbackend.CloneIndex(idx), false
		}
		for _, i := range refreshed {
			st := &sc.stats[i]
			idx.Entries[i].ModifiedAt, idx.Entries[i].Size = time.Unix(st.sec, st.nsec), uint32(st.size)
		}
		_ = gitbackend.RefreshIndex(r.Storer, idx) // a cache refresh; status is right either way
	}
	if !o.untracked {
		return st, idx, ignoredPaths{files: sc.ignored, top: sc.ignoredTop}, nil
	}
	for _, p := range sc.files {
		if ancestorIn(p, gitlinks) || (!o.underIndexFiles && sc.ancestorInIndex(p)) {
			continue
		}
		if fs, ok := st[p]; ok && fs.Staging == git.Deleted {
			st[p] = &git.FileStatus{Staging: git.Deleted, Worktree: git.Untracked}
			continue
		}
		set(p, git.Untracked, git.Untracked)
	}
	return st, idx, ignoredPaths{files: sc.ignored, top: sc.ignoredTop}, nil
}

// stagingStatus is e's staged change against h, HEAD's entry at its path
// (Mode 0: none).
func stagingStatus(h gitbackend.FlatEntry, e *index.Entry) git.StatusCode {
	staging := git.Added
	if h.Mode != 0 {
		staging = git.Unmodified
		switch {
		case typeChanged(h.Mode, e.Mode):
			staging = TypeChanged
		case h.Hash != e.Hash || h.Mode != e.Mode:
			staging = git.Modified
		}
	}
	if e.IntentToAdd {
		// Added with intent to add: nothing staged (HEAD's file, if
		// any, is staged as deleted).
		staging = git.Unmodified
		if h.Mode != 0 {
			staging = git.Deleted
		}
	}
	return staging
}

// entryCompare compares index entries with their files as git's
// ie_match_stat and ce_compare_data do.
type entryCompare struct {
	s   *settings
	o   statusScan
	fs  billy.Filesystem
	eol *gitattr.EOL
	// valid are the assume-unchanged entries.
	valid     map[string]bool
	indexTime time.Time
}

// stale is the test of the stat data: unchanged (and not racy) means the
// content is the index's.
//
// The ctime, the inode and the owner count too, as git's
// ce_match_stat_basic counts them: a file whose mtime and size were kept
// (a copy with cp -a, a restore from an archive) but whose content
// changed is read, not taken as the index's.
func (c *entryCompare) stale(e *index.Entry, st *wstat) bool {
	return st.kind != kindDir && e.Mode != filemode.Submodule &&
		!(uint32(st.size) == e.Size && st.sameTime(e.ModifiedAt) && !st.idsChanged(e) && c.s.worktreeMode(st.mode(), e.Mode) == e.Mode && !racy(e, c.indexTime))
}

// resized is git's shortcut (read-cache.c, ie_modified): a file whose
// size is not the one its entry recorded is modified, unread; only an
// entry with no size recorded (just read from a tree, or smudged as
// racy) is compared by content.
func resized(e *index.Entry, st *wstat) bool { return e.Size != 0 && uint32(st.size) != e.Size }

// read says whether the walk reads a file: the files whose content
// decides.
func (c *entryCompare) read(e *index.Entry, st *wstat) bool { return c.stale(e, st) && !resized(e, st) }

// worktreeStatus is the change of e's file (info: its stat data; content:
// the files the walk read, by entry number i). gitlink reports an entry
// compared as a submodule; fresh one whose content matched with new stat
// data (the refresh writes them).
func (c *entryCompare) worktreeStatus(e *index.Entry, info *wstat, content map[int]worktreeFile, i int) (worktree git.StatusCode, gitlink, fresh bool) {
	worktree = git.Unmodified
	switch {
	case (e.SkipWorktree || c.valid[e.Name]) && !c.o.lookAtFlagged:
		// git takes the entry as matching the worktree unlooked.
	case e.IntentToAdd:
		// New in the worktree.
		worktree = git.Added
		if !info.ok || info.kind == kindDir {
			worktree = git.Deleted
		}
	case e.Mode == filemode.Submodule:
		// A gitlink: unchanged while its directory exists; a file or
		// a link in its place is a type change (ce_match_stat_basic).
		gitlink = true
		switch {
		case !info.ok:
			worktree = git.Deleted
		case info.kind != kindDir:
			worktree = TypeChanged
		}
	case !info.ok || info.kind == kindDir:
		worktree = git.Deleted
	case c.valid[e.Name] || e.SkipWorktree:
		// Looked at although assume-unchanged or skip-worktree (a
		// switch's check): git's refresh skips such an entry, so
		// stat data that differ are a change, content unread (a racy
		// time alone is not).
		if info.statChanged(e, c.s.worktreeMode(info.mode(), e.Mode)) {
			worktree = git.Modified
		}
	case !c.stale(e, info):
		// stat data unchanged: the content is the index's
	case resized(e, info):
		worktree = git.Modified
	default:
		f, ok := content[i]
		data, mode, err := f.data, f.mode, error(nil)
		if !ok {
			data, mode, err = readWorktree(c.fs, e.Name)
		}
		if err == nil {
			data = c.eol.ToGit(e.Name, data)
		}
		if err != nil || blobHash(data) != e.Hash || c.s.worktreeMode(mode, e.Mode) != e.Mode {
			worktree = git.Modified
		} else {
			// Same content, new stat data (or an entry git smudged as
			// racy): remember it, as git status refreshes its index.
			fresh = true
		}
	}
	if worktree == git.Modified && info.ok && typeChanged(e.Mode, info.mode()) {
		// A file replaced by a link or the reverse: git's
		// TYPE_CHANGED, whatever the content.
		worktree = TypeChanged
	}
	return worktree, gitlink, fresh
}

// flaggedUptodate is unpack-trees' verify_uptodate_1 for an entry marked
// assume-unchanged or skip-worktree, which git's refresh skips (their stat
// data stay what the index recorded): a missing file is up to date,
// otherwise the stat data decide (ie_match_stat), the content only for a
// racily clean entry. A gitlink is always up to date: git lets a
// submodule be out of sync with the index, whatever stands at its path.
// toGit converts a file's bytes as git stores them.
func flaggedUptodate(fsys billy.Filesystem, s *settings, e *index.Entry, indexTime time.Time, toGit func(string, []byte) []byte) bool {
	if e.Mode == filemode.Submodule {
		return true
	}
	info, err := fsys.Lstat(e.Name)
	if err != nil {
		return true
	}
	st := statOf(info)
	if st.kind == kindDir {
		return false
	}
	if st.statChanged(e, s.worktreeMode(st.mode(), e.Mode)) {
		return false
	}
	if !racy(e, indexTime) {
		return true
	}
	data, _, err := readWorktree(fsys, e.Name)
	return err == nil && blobHash(toGit(e.Name, data)) == e.Hash
}

// TypeChanged is git's status letter for a path whose kind changed (a
// file, a symbolic link, a gitlink): DIFF_STATUS_TYPE_CHANGED.
const TypeChanged git.StatusCode = 'T'

// typeChanged is git's DIFF_PAIR_TYPE_CHANGED: the two modes differ in
// S_IFMT (a mode change within regular files is not one).
func typeChanged(a, b filemode.FileMode) bool {
	return a != 0 && b != 0 && a&0o170000 != b&0o170000
}

// cmpEntry is the index's order: by name, then stage.
func cmpEntry(a, b *index.Entry) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return int(a.Stage) - int(b.Stage)
}

// racy is git's racy-clean rule (read-cache.c, is_racy_timestamp): a file
// changed in the same clock tick as the index was written can have the
// stat data the index recorded and other content. The tick is a whole
// second, as git built without USE_NSEC (Debian's, the default) counts
// it: an entry is racy unless its mtime is in an earlier second than the
// index's, and then git reads its content (which matters when the content
// converts otherwise than when it was added: an eol attribute since).
func racy(e *index.Entry, indexTime time.Time) bool {
	return !indexTime.IsZero() && e.ModifiedAt.Unix() >= indexTime.Unix()
}

func modeOf(info fs.FileInfo) filemode.FileMode {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return filemode.Symlink
	case info.Mode()&0o111 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

func readIgnore(fsys billy.Filesystem, name string, domain []string) []gitignore.Pattern {
	f, err := fsys.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// parseIgnore is readIgnore on a file's bytes.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// ancestorIn reports whether a directory above p is itself an index entry
// (a file replaced by a directory, or a gitlink): git does not look inside
// such a directory for untracked files (dir.c, treat_one_path case 1).
func ancestorIn(p string, entries map[string]bool) bool {
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		if entries[p[:i]] {
			return true
		}
	}
	return false
}

// ---- the worktree walk ----

// Kinds of directory entries.
const (
	kindUnknown uint8 = iota
	kindFile
	kindLink
	kindDir
	kindOther
)

// wstat is the stat data status compares with an index entry.
type wstat struct {
	ok        bool
	kind      uint8
	exec      bool
	size      int64
	sec, nsec int64
	// The rest of what git's ce_match_stat_basic compares, known when
	// ids is set: the ctime's seconds, the inode, the owner.
	ids      bool
	csec     int64
	ino      uint64
	uid, gid uint32
}

// statChanged is git's ce_match_stat_basic as built by Debian (no
// USE_NSEC, core.trustctime and core.checkStat at their defaults): whole
// seconds of mtime and ctime, inode, owner, size and mode. It decides for
// an entry git compares without refreshing it first (assume-unchanged,
// which refresh skips).
func (w *wstat) statChanged(e *index.Entry, mode filemode.FileMode) bool {
	if uint32(w.size) != e.Size || e.ModifiedAt.IsZero() || e.ModifiedAt.Unix() != w.sec || mode != e.Mode {
		return true
	}
	return w.idsChanged(e)
}

// idsChanged: the ctime's seconds, the inode or the owner are not the
// entry's (false when the walk does not know them).
func (w *wstat) idsChanged(e *index.Entry) bool {
	return w.ids && (e.CreatedAt.Unix() != w.csec || e.Inode != uint32(w.ino) || e.UID != w.uid || e.GID != w.gid)
}

func (w *wstat) mode() filemode.FileMode {
	switch {
	case w.kind == kindLink:
		return filemode.Symlink
	case w.exec:
		return filemode.Executable
	}
	return filemode.Regular
}

func (w *wstat) sameTime(t time.Time) bool {
	return !t.IsZero() && t.Unix() == w.sec && int64(t.Nanosecond()) == w.nsec
}

func statOf(info fs.FileInfo) wstat {
	st := wstat{ok: true, kind: kindFile, size: info.Size(), exec: info.Mode()&0o111 != 0}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		st.kind = kindLink
	case info.IsDir():
		st.kind = kindDir
	case !info.Mode().IsRegular():
		st.kind = kindOther
	}
	t := info.ModTime()
	st.sec, st.nsec = t.Unix(), int64(t.Nanosecond())
	sysStat(info, &st)
	return st
}

// dirent is one directory entry: its name and kind, with its stat data
// when listing gave it (st.ok).
type dirent struct {
	name string
	kind uint8
	st   wstat
}

// dirSource reads the worktree's directories: through the billy view
// (any root), or by file descriptor (a root on disk, status_walk_linux.go).
type dirSource interface {
	root() (dirRef, error)
	// open opens the directory name in parent (p is its path).
	open(parent dirRef, name, p string) (dirRef, error)
	list(d dirRef) ([]dirent, error)
	// stat is the entry's lstat data (ok false when it vanished).
	stat(d dirRef, e *dirent) wstat
	readFile(d dirRef, name string) ([]byte, error)
	// readEntry reads a file or link whose stat data is st, as
	// readWorktree does (ok false: read it with readWorktree).
	readEntry(d dirRef, name string, st *wstat) (worktreeFile, bool)
	close(d dirRef)
}

// dirRef is an open directory: its path ("" for the root) and, read by
// descriptor, its descriptor.
type dirRef struct {
	path string
	fd   int
}

// billySource reads through the billy view: ReadDir lstats every entry.
type billySource struct{ fs billy.Filesystem }

func (b billySource) root() (dirRef, error) { return dirRef{}, nil }
func (b billySource) open(_ dirRef, _, p string) (dirRef, error) {
	return dirRef{path: p}, nil
}
func (b billySource) list(d dirRef) ([]dirent, error) {
	p := d.path
	if p == "" {
		p = "."
	}
	infos, err := b.fs.ReadDir(p)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(infos))
	for i, info := range infos {
		st := statOf(info)
		out[i] = dirent{name: info.Name(), kind: st.kind, st: st}
	}
	return out, nil
}
func (b billySource) stat(_ dirRef, e *dirent) wstat { return e.st }
func (b billySource) readFile(d dirRef, name string) ([]byte, error) {
	f, err := b.fs.Open(path.Join(d.path, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}
func (b billySource) readEntry(dirRef, string, *wstat) (worktreeFile, bool) {
	return worktreeFile{}, false
}
func (b billySource) close(dirRef) {}

// scanner walks the worktree once: stat data for every index entry
// (stats, aligned with ents), the untracked files not ignored (files) and,
// when asked, the ignored ones. Directories are a queue of tasks that as
// many workers as there are CPUs take from (each opened by the task that
// found it, beneath its parent).
type scanner struct {
	src   dirSource
	ents  []*index.Entry
	stats []wstat
	o     statusScan

	// stale says whether an entry's content must be read (its stat data
	// differs from the index's, not in size): the walk reads it beneath
	// its directory.
	stale func(e *index.Entry, st *wstat) bool

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []dirTask
	busy    int
	files   []string
	ignored map[string]bool
	// ignoredTop: the top-most ignored entries (see ignoredPaths).
	ignoredTop map[string]bool
	content    map[int]worktreeFile
}

// worktreeFile is a file's bytes and mode as readWorktree gives them.
type worktreeFile struct {
	data []byte
	mode filemode.FileMode
}

// dirTask is a directory to list: open, with its index entries ents[lo:hi].
type dirTask struct {
	d          dirRef
	patterns   []gitignore.Pattern
	dirIgnored bool
	lo, hi     int
}

// maxQueued bounds the directories open and waiting; past it a worker
// walks what it finds itself, depth first.
const maxQueued = 256

func (sc *scanner) walk(patterns []gitignore.Pattern) {
	d, err := sc.src.root()
	if err != nil {
		return
	}
	sc.cond = sync.NewCond(&sc.mu)
	sc.queue = append(sc.queue, dirTask{d: d, patterns: patterns, lo: 0, hi: len(sc.ents)})
	var wg sync.WaitGroup
	for n := runtime.GOMAXPROCS(0); n > 1; n-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc.work()
		}()
	}
	sc.work()
	wg.Wait()
}

// work takes directories from the queue until it is empty and no worker
// can add to it.
func (sc *scanner) work() {
	sc.mu.Lock()
	for {
		for len(sc.queue) == 0 && sc.busy > 0 {
			sc.cond.Wait()
		}
		if len(sc.queue) == 0 {
			sc.mu.Unlock()
			sc.cond.Broadcast()
			return
		}
		t := sc.queue[len(sc.queue)-1]
		sc.queue = sc.queue[:len(sc.queue)-1]
		sc.busy++
		sc.mu.Unlock()
		sc.walkDir(t)
		sc.mu.Lock()
		sc.busy--
		if len(sc.queue) == 0 && sc.busy == 0 {
			sc.cond.Broadcast()
		}
	}
}

// push queues a directory, or walks it at once when the queue is full.
func (sc *scanner) push(t dirTask) {
	sc.mu.Lock()
	if len(sc.queue) < maxQueued {
		sc.queue = append(sc.queue, t)
		sc.mu.Unlock()
		sc.cond.Signal()
		return
	}
	sc.mu.Unlock()
	sc.walkDir(t)
}

// walkDir lists directory t.d, whose index entries are ents[t.lo:t.hi],
// and closes it.
func (sc *scanner) walkDir(t dirTask) {
	d, patterns, dirIgnored, lo, hi := t.d, t.patterns, t.dirIgnored, t.lo, t.hi
	defer sc.src.close(d)
	list, err := sc.src.list(d)
	if err != nil {
		return
	}
	var domain []string
	if d.path != "" {
		domain = strings.Split(d.path, "/")
	}
	if !dirIgnored {
		for i := range list {
			if list[i].name == ".gitignore" && list[i].kind != kindDir {
				if data, err := sc.src.readFile(d, ".gitignore"); err == nil {
					patterns = append(patterns[:len(patterns):len(patterns)], parseIgnore(data, domain)...)
				}
				break
			}
		}
	}
	var m gitignore.Matcher
	match := func(p string, isDir bool) bool {
		if len(patterns) == 0 {
			return false
		}
		if m == nil {
			m = gitignore.NewMatcher(patterns)
		}
		return m.Match(strings.Split(p, "/"), isDir)
	}
	plen := 0
	if d.path != "" {
		plen = len(d.path) + 1
	}
	var files, ignored, top []string
	for i := range list {
		e := &list[i]
		if e.name == ".git" {
			continue
		}
		if e.kind == kindUnknown {
			st := sc.src.stat(d, e)
			if !st.ok {
				continue
			}
			e.kind, e.st = st.kind, st
		}
		// The index entries named exactly this path (several when
		// conflicted).
		// Every entry of ents[lo:hi] starts with the directory's path and
		// '/': comparing what follows is comparing the whole paths.
		at := lo + sort.Search(hi-lo, func(k int) bool { return sc.ents[lo+k].Name[plen:] >= e.name })
		n := 0
		for at+n < hi && sc.ents[at+n].Name[plen:] == e.name {
			n++
		}
		if e.kind == kindDir {
			p := e.name
			if d.path != "" {
				p = d.path + "/" + e.name
			}
			for k := at; k < at+n; k++ {
				sc.stats[k] = wstat{ok: true, kind: kindDir}
			}
			// The entries below it: [p/, p0).
			slo := at + n + sort.Search(hi-at-n, func(k int) bool { return sc.ents[at+n+k].Name >= p+"/" })
			shi := slo + sort.Search(hi-slo, func(k int) bool { return sc.ents[slo+k].Name >= p+"0" })
			tracked := shi > slo
			subIgnored := dirIgnored || match(p, true)
			switch {
			case !tracked && !sc.o.untracked && !sc.o.ignored:
				continue // nothing to find there
			case !tracked && subIgnored && !sc.o.ignored:
				continue // only ignored files, which are not asked for
			case n > 0 && sc.ents[at].Mode == filemode.Submodule && !sc.o.ignored:
				continue // a gitlink: its files are another repository's
			}
			if subIgnored && !dirIgnored && sc.o.ignored {
				sc.mu.Lock()
				sc.ignoredTop[p] = true
				sc.mu.Unlock()
			}
			sub, err := sc.src.open(d, e.name, p)
			if err != nil {
				continue
			}
			sc.push(dirTask{d: sub, patterns: patterns, dirIgnored: subIgnored, lo: slo, hi: shi})
			continue
		}
		if n > 0 {
			st := e.st
			if !st.ok {
				st = sc.src.stat(d, e)
			}
			for k := at; k < at+n; k++ {
				sc.stats[k] = st
				if st.ok && sc.stale != nil && sc.stale(sc.ents[k], &sc.stats[k]) {
					if f, ok := sc.src.readEntry(d, e.name, &sc.stats[k]); ok {
						sc.mu.Lock()
						sc.content[k] = f
						sc.mu.Unlock()
					}
				}
			}
			continue
		}
		p := e.name
		if d.path != "" {
			p = d.path + "/" + e.name
		}
		if dirIgnored || match(p, false) {
			if sc.o.ignored {
				ignored = append(ignored, p)
				if !dirIgnored {
					top = append(top, p)
				}
			}
			continue
		}
		files = append(files, p)
	}
	if len(files) > 0 || len(ignored) > 0 {
		sc.mu.Lock()
		sc.files = append(sc.files, files...)
		for _, p := range ignored {
			sc.ignored[p] = true
		}
		for _, p := range top {
			sc.ignoredTop[p] = true
		}
		sc.mu.Unlock()
	}
}

// ancestorInIndex reports whether a directory above p is an index entry.
func (sc *scanner) ancestorInIndex(p string) bool {
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		d := p[:i]
		k := sort.Search(len(sc.ents), func(k int) bool { return sc.ents[k].Name >= d })
		if k < len(sc.ents) && sc.ents[k].Name == d {
			return true
		}
	}
	return false
}
