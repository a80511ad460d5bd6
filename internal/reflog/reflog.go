// Package reflog is git's reflog: the file logs/<ref> in a .git directory
// that records each move of a ref as one line
//
//	<old> <new> <name> <<email>> <unix time> <zone>\t<message>
//
// oldest first. It is what "HEAD@{1}", "stash@{n}", a detached HEAD's
// "detached from" and `git reflog` read. go-git keeps no reflogs; every
// git tool, the stash list and the kernel's clone write theirs here.
//
// As refs/files-backend.c does, a new entry is appended (log_ref_write),
// and a log that loses entries (stash drop, reflog delete) is written
// whole to logs/<ref>.lock and renamed over the log, never rewritten in
// place: a writer that dies before the rename leaves the log as it was.
package reflog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/gitconfig"
)

// Entry is one line of a reflog.
type Entry struct {
	Old, New plumbing.Hash
	// Who is the committer as written: "Name <email> <unix time> <zone>".
	Who string
	// Message is the text after the tab (copy_reflog_msg condensed it).
	Message string
}

// Ident is Who for a committer at a time, as git writes it.
func Ident(name, email string, when time.Time) string {
	return fmt.Sprintf("%s <%s> %d %s", name, email, when.Unix(), when.Format("-0700"))
}

// Message is copy_reflog_msg: leading white space dropped, every run of
// white space one space, trailing white space trimmed.
func Message(msg string) string { return strings.Join(strings.Fields(msg), " ") }

// Path is the log of ref, relative to the .git directory.
func Path(ref plumbing.ReferenceName) string { return "logs/" + ref.String() }

// lockSuffix is git's LOCK_SUFFIX.
const lockSuffix = ".lock"

// LockedError reports a log whose lock file exists: another writer holds
// it, or one died holding it (git then asks the user to remove the file).
type LockedError struct {
	Ref  plumbing.ReferenceName
	Lock string // the lock file, relative to the .git directory
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("reflog: cannot lock the log of %s: %s exists (another git process is running, or one crashed: remove the file)", e.Ref, e.Lock)
}

// Read returns ref's log, oldest first; a ref with no log has none (nil,
// nil). A line git could not have written (a writer that died mid-line)
// is skipped, as git's reflog walk skips it.
func Read(dot billy.Filesystem, ref plumbing.ReferenceName) ([]Entry, error) {
	f, err := dot.Open(Path(ref))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reflog: read %s: %w", Path(ref), err)
	}
	data, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("reflog: read %s: %w", Path(ref), err)
	}
	return Parse(data), nil
}

// Parse reads the lines of a log, skipping any that is not an entry.
func Parse(data []byte) []Entry {
	var out []Entry
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if e, ok := parseLine(string(line)); ok {
			out = append(out, e)
		}
	}
	return out
}

func parseLine(line string) (Entry, bool) {
	head, msg, _ := strings.Cut(line, "\t")
	parts := strings.SplitN(head, " ", 3)
	if len(parts) < 3 || !plumbing.IsHash(parts[0]) || !plumbing.IsHash(parts[1]) {
		return Entry{}, false
	}
	return Entry{Old: plumbing.NewHash(parts[0]), New: plumbing.NewHash(parts[1]), Who: parts[2], Message: msg}, true
}

// format is an entry's line.
func format(e Entry) string {
	return fmt.Sprintf("%s %s %s\t%s\n", e.Old, e.New, e.Who, e.Message)
}

// Append adds e to ref's log as log_ref_write does: with one write to the
// end of the file, its message condensed. A missing log is started when
// create is true (core.logAllRefUpdates: DefaultCreate, or a ref that
// must have a log, refs/stash); otherwise a ref with no log gets none.
func Append(dot billy.Filesystem, ref plumbing.ReferenceName, e Entry, create bool) error {
	name := Path(ref)
	f, err := dot.OpenFile(name, os.O_RDWR|os.O_APPEND, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil
		}
		if err := dot.MkdirAll(path.Dir(name), 0o755); err != nil {
			return fmt.Errorf("reflog: %s: %w", name, err)
		}
		f, err = dot.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	}
	if err != nil {
		return fmt.Errorf("reflog: append %s: %w", name, err)
	}
	e.Message = Message(e.Message)
	line := format(e)
	if !endsInNewline(f) {
		// A writer died mid-line: end its line so this entry stays whole.
		line = "\n" + line
	}
	_, err = io.WriteString(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reflog: append %s: %w", name, err)
	}
	return nil
}

// endsInNewline reports whether the file is empty or its last byte is a
// newline (true when it cannot tell: nothing is added then).
func endsInNewline(f billy.File) bool {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || size == 0 {
		return true
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// DefaultCreate is core.logAllRefUpdates' rule for whether a move of ref
// starts a log (should_autocreate_reflog): mode "always" logs every ref,
// a false value none, "true" (and "", unset: git's default in a
// repository with a work tree) HEAD, branches, remote-tracking branches
// and notes.
func DefaultCreate(ref plumbing.ReferenceName, mode string) bool {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "always":
		return true
	case "":
	default:
		if on, ok := gitconfig.ParseBool(mode); ok && !on {
			return false
		}
	}
	name := ref.String()
	return ref == plumbing.HEAD || strings.HasPrefix(name, "refs/heads/") ||
		strings.HasPrefix(name, "refs/remotes/") || strings.HasPrefix(name, "refs/notes/")
}

// Option changes how Write writes.
type Option func(*writeOptions)

type writeOptions struct {
	beforeRename func() error
}

// WithBeforeRename runs f once the new log is complete in its lock file,
// just before the rename that makes it the log; an error from f abandons
// the write (the lock file is removed, the log is as it was). Tests use it
// to stop a writer at the one moment a crash could hurt.
func WithBeforeRename(f func() error) Option {
	return func(o *writeOptions) { o.beforeRename = f }
}

// Write replaces ref's log with entries (oldest first) as reflog expire
// and stash drop do: the whole log goes to logs/<ref>.lock, which is then
// renamed over the log; no entries remove the log. The lock file is
// created exclusively: a *LockedError when it exists.
func Write(dot billy.Filesystem, ref plumbing.ReferenceName, entries []Entry, opts ...Option) error {
	var o writeOptions
	for _, opt := range opts {
		opt(&o)
	}
	name := Path(ref)
	lock := name + lockSuffix
	if err := dot.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("reflog: %s: %w", name, err)
	}
	f, err := dot.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return &LockedError{Ref: ref, Lock: lock}
	}
	if err != nil {
		return fmt.Errorf("reflog: lock %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = dot.Remove(lock)
		}
	}()
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(format(e))
	}
	_, err = io.WriteString(f, b.String())
	if err == nil {
		err = syncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reflog: write %s: %w", lock, err)
	}
	if o.beforeRename != nil {
		if err := o.beforeRename(); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		// git deletes an emptied log; the lock is dropped after it.
		if err := dot.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reflog: remove %s: %w", name, err)
		}
		return nil
	}
	if err := dot.Rename(lock, name); err != nil {
		return fmt.Errorf("reflog: commit %s: %w", name, err)
	}
	committed = true
	return nil
}

// syncFile flushes a lock file to disk when the file system can, so the
// rename never publishes a log whose bytes a power cut could lose.
func syncFile(f billy.File) error {
	if s, ok := f.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// Remove deletes ref's log (a deleted branch loses its log).
func Remove(dot billy.Filesystem, ref plumbing.ReferenceName) error {
	if err := dot.Remove(Path(ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reflog: remove %s: %w", Path(ref), err)
	}
	return nil
}

// Rename moves from's log to to (a renamed branch takes its log along);
// a ref with no log moves nothing.
func Rename(dot billy.Filesystem, from, to plumbing.ReferenceName) error {
	if _, err := dot.Stat(Path(from)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("reflog: %s: %w", Path(from), err)
	}
	// Through a temporary name, as git's rename_tmp_log: the new log may
	// go where the old one's directory was ("feature/x" to "feature"),
	// which must be empty and gone first.
	tmp := "logs/refs/.tmp-renamed-log"
	if err := dot.Rename(Path(from), tmp); err != nil {
		return fmt.Errorf("reflog: rename %s: %w", Path(from), err)
	}
	for d := path.Dir(Path(from)); strings.HasPrefix(d, Path(to)); d = path.Dir(d) {
		if entries, err := dot.ReadDir(d); err != nil || len(entries) > 0 || dot.Remove(d) != nil {
			break
		}
	}
	if err := dot.MkdirAll(path.Dir(Path(to)), 0o755); err != nil {
		return fmt.Errorf("reflog: %s: %w", Path(to), err)
	}
	if err := dot.Rename(tmp, Path(to)); err != nil {
		return fmt.Errorf("reflog: rename %s: %w", Path(from), err)
	}
	return nil
}

// refRules are git's ref_rev_parse_rules: how a short name is tried as a
// full ref name.
var refRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// RefRules returns the full ref names a short name may stand for, in
// git's order (ref_rev_parse_rules).
func RefRules(name string) []plumbing.ReferenceName {
	out := make([]plumbing.ReferenceName, len(refRules))
	for i, r := range refRules {
		out[i] = plumbing.ReferenceName(strings.ReplaceAll(r, "%s", name))
	}
	return out
}

// Find is dwim_log: the first ref a short name may stand for that has a
// log ("" is HEAD); ok is false when none has.
func Find(dot billy.Filesystem, name string) (plumbing.ReferenceName, bool) {
	if name == "" {
		name = "HEAD"
	}
	for _, ref := range RefRules(name) {
		if _, err := dot.Stat(Path(ref)); err == nil {
			return ref, true
		}
	}
	return "", false
}
