package gitbackend

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/gofrs/flock"
)

// One contender per machine (network remotes). Every process of a machine
// that pushes to the same remote branch goes through one spool directory
// under the user's cache directory (Config.LockDir), keyed by the remote
// and the branch. A persist there:
//
//  1. writes a ticket naming its root's .git and its unpushed commits
//     (base..head);
//  2. waits until a result for its ticket appears, or until it holds the
//     spool's lock;
//  3. holding the lock, it leads: it recreates, in its own repository and
//     in order, every waiting ticket's commits on the remote's tip (their
//     objects read from the other roots' .git, which do not change while
//     their owners wait), pushes them all in one push, and writes each
//     ticket's result;
//  4. a writer whose ticket was pushed by another brings its root to the
//     pushed commit (objects copied from the leader's .git).
//
// The remote then sees one writer per machine, pushing batches: contention
// between machines costs batching, not a queue of replays each losing the
// race. A ticket whose owner stopped waiting (its deadline passed, the
// process died) stays and is pushed by the next leader: nothing committed
// is left behind on a machine that keeps working. The leader takes only
// tickets that prove they come from a root of this machine, and a waiting
// root only results naming one (ticketcheck.go).

// machineQueue is a spool directory.
type machineQueue struct {
	dir  string
	lock *flock.Flock
}

// machineQueueFor is the spool of remote's branch under lockDir.
func machineQueueFor(lockDir, remote, branch string) *machineQueue {
	sum := sha256.Sum256([]byte(redact(remote) + "\x00" + branch))
	dir := filepath.Join(lockDir, hex.EncodeToString(sum[:10]))
	return &machineQueue{dir: dir, lock: flock.New(filepath.Join(dir, "lock"))}
}

// ticket is a root's unpushed commits waiting for a push.
type ticket struct {
	ID     string `json:"id"`
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Head   string `json:"head"`
	GitDir string `json:"gitdir"`
	// RootID is the id under GitDir (ticketcheck.go): the ticket's proof
	// that a root of this machine wrote it.
	RootID string `json:"root_id"`
	// Created orders the tickets (first come, first pushed).
	Created int64 `json:"created"`
	PID     int   `json:"pid"`
}

// ticketResult is what the leader that took a ticket says of it.
type ticketResult struct {
	// Commit is the pushed commit holding the ticket's change, Final the
	// batch's last commit (the remote's tip after the push).
	Commit string `json:"commit,omitempty"`
	Final  string `json:"final,omitempty"`
	// Conflict lists the paths another agent changed on the same lines:
	// the owner keeps its version on a conflict branch.
	Conflict []string `json:"conflict,omitempty"`
	// Err: the ticket could not be pushed (its commits stay pending).
	Err string `json:"error,omitempty"`
	// LeaderGitDir holds every object of Final; LeaderRoot is its root
	// id, checked before a thing is read from it.
	LeaderGitDir string `json:"leader_gitdir,omitempty"`
	LeaderRoot   string `json:"leader_root,omitempty"`
	Attempts     int    `json:"attempts,omitempty"`
	Batched      int    `json:"batched,omitempty"`
}

func (q *machineQueue) ticketPath(id string) string { return filepath.Join(q.dir, id+".ticket") }
func (q *machineQueue) resultPath(id string) string { return filepath.Join(q.dir, id+".result") }

// writeFileAtomic writes data to p through a temporary file and a rename:
// a reader sees the whole file or none. The file is this user's alone
// (0600): a reader refuses any other (ticketcheck.go).
func writeFileAtomic(p string, data []byte) error {
	tmp := fmt.Sprintf("%s.tmp-%d-%s", p, os.Getpid(), randomID())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// open makes the spool directory, this user's alone (0700), and refuses
// one that is not: another user could write tickets there. A spool an
// older tgp made 0755 is tightened.
func (q *machineQueue) open() error {
	if err := os.MkdirAll(filepath.Dir(q.dir), 0o700); err != nil {
		return fmt.Errorf("machine queue %s: %w", q.dir, err)
	}
	if err := os.Mkdir(q.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("machine queue %s: %w", q.dir, err)
	}
	err := checkPrivate(q.dir, true)
	if errors.Is(err, ErrForged) {
		if info, lerr := os.Lstat(q.dir); lerr == nil && info.IsDir() && os.Chmod(q.dir, 0o700) == nil {
			err = checkPrivate(q.dir, true)
		}
	}
	if err != nil {
		return fmt.Errorf("machine queue %s: %w", q.dir, err)
	}
	return nil
}

// submit writes t's ticket.
func (q *machineQueue) submit(t *ticket) error {
	if err := q.open(); err != nil {
		return err
	}
	b, _ := json.Marshal(t)
	if err := writeFileAtomic(q.ticketPath(t.ID), b); err != nil {
		return fmt.Errorf("machine queue %s: %w", q.dir, err)
	}
	return nil
}

// result reads the result of ticket id (nil: none yet). A result this
// user did not write is removed: it could name any commit as pushed.
func (q *machineQueue) result(id string) *ticketResult {
	b, err := readPrivate(q.resultPath(id))
	if errors.Is(err, ErrForged) {
		os.Remove(q.resultPath(id))
	}
	if err != nil {
		return nil
	}
	var res ticketResult
	if json.Unmarshal(b, &res) != nil {
		return nil
	}
	return &res
}

// finish removes ticket id and its result.
func (q *machineQueue) finish(id string) {
	os.Remove(q.ticketPath(id))
	os.Remove(q.resultPath(id))
}

// pending lists the tickets of branch with no result yet, oldest first,
// one per root (a root's newest ticket holds every commit of its older
// ones: those are removed). Results nobody collected for an hour are
// removed with their tickets. Every ticket goes through check before it
// counts (a forged ticket naming a root must not supersede the root's
// own); one that fails it, or a file this user did not write, is refused
// (refuse) and reported through report.
func (q *machineQueue) pending(branch string, check func(*ticket) error, report func(error)) []*ticket {
	ents, err := os.ReadDir(q.dir)
	if err != nil {
		return nil
	}
	newest := map[string]*ticket{}
	var stale []string
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".ticket")
		if !ok {
			if strings.Contains(name, ".tmp-") {
				if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
					os.Remove(filepath.Join(q.dir, name))
				}
			}
			continue
		}
		b, err := readPrivate(filepath.Join(q.dir, name))
		if errors.Is(err, ErrForged) {
			report(q.refuse(id, err))
			continue
		}
		if err != nil {
			continue
		}
		var t ticket
		if json.Unmarshal(b, &t) != nil || t.ID != id {
			report(q.refuse(id, &ForgedError{Path: filepath.Join(q.dir, name), Reason: "not a ticket"}))
			continue
		}
		if t.Branch != branch {
			continue
		}
		if err := check(&t); err != nil {
			report(q.refuse(id, err))
			continue
		}
		// Answered: its owner collects the result. One planted beside a
		// forged ticket went with it (refuse) just above.
		if info, err := os.Stat(q.resultPath(id)); err == nil {
			if time.Since(info.ModTime()) > time.Hour {
				q.finish(id)
			}
			continue
		}
		if old := newest[t.GitDir]; old != nil {
			if old.Created > t.Created {
				stale = append(stale, t.ID)
				continue
			}
			stale = append(stale, old.ID)
		}
		newest[t.GitDir] = &t
	}
	for _, id := range stale {
		q.finish(id)
	}
	out := make([]*ticket, 0, len(newest))
	for _, t := range newest {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Created != out[j].Created {
			return out[i].Created < out[j].Created
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// await waits until ticket id has a result (returned) or the caller holds
// the spool's lock (nil result, held true). It gives up when ctx ends.
func (q *machineQueue) await(ctx context.Context, id string, poll time.Duration) (*ticketResult, bool, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if res := q.result(id); res != nil {
			return res, false, nil
		}
		ok, err := q.lock.TryLock()
		if err != nil {
			return nil, false, fmt.Errorf("machine lock %s: %w", q.lock.Path(), err)
		}
		if ok {
			if res := q.result(id); res != nil {
				_ = q.lock.Unlock()
				return res, false, nil
			}
			return nil, true, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-t.C:
		}
	}
}

func (q *machineQueue) unlock() { _ = q.lock.Unlock() }

func newTicketID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%d-%s", time.Now().UnixNano(), hex.EncodeToString(b))
}

// openGitDir opens another root's .git to read objects (never to write).
func openGitDir(gitdir string) (*filesystem.Storage, error) {
	if _, err := os.Stat(filepath.Join(gitdir, "objects")); err != nil {
		return nil, fmt.Errorf("open %s: %w", gitdir, err)
	}
	return filesystem.NewStorageWithOptions(osfs.New(gitdir), cache.NewObjectLRU(16<<20), filesystem.Options{}), nil
}

// gitDirPath is this root's .git on disk ("" for a root in memory).
func (r *Repo) gitDirPath() string {
	if r.flock == nil {
		return ""
	}
	return filepath.Join(r.wt.Root(), ".git")
}

// errPendingPush says which commits wait to be pushed.
type PendingError struct {
	Branch  string
	Remote  string
	Commits []string // "abc1234 subject", oldest first
	// Queued: the commits wait in this machine's queue, and the next
	// process of this machine to push takes them.
	Queued bool
	Err    error
}

func (e *PendingError) Error() string {
	where := "kept in the root; the next persist, refresh or boot pushes them"
	if e.Queued {
		where = "kept in the root and queued on this machine; the next push from this machine, or the next persist, refresh or boot here, takes them"
	}
	return fmt.Sprintf("push %s to %s: %v; %d commit(s) not on the remote yet (%s): %s",
		e.Branch, e.Remote, e.Err, len(e.Commits), where, strings.Join(e.Commits, "; "))
}

func (e *PendingError) Unwrap() error { return e.Err }

// ErrPending matches *PendingError.
var ErrPending = errors.New("commits pending")

func (e *PendingError) Is(t error) bool { return t == ErrPending }

// pendingList describes base..head, oldest first.
func (r *Repo) pendingList(base, head plumbing.Hash) []string {
	local, err := r.localCommits(base, head)
	if err != nil {
		return []string{short(head)}
	}
	out := make([]string, 0, len(local))
	for _, c := range local {
		subject, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
		out = append(out, short(c.Hash)+" "+subject)
	}
	return out
}

// PendingCommits lists the local commits not on the remote ("abc1234
// subject"), oldest first.
func (r *Repo) PendingCommits(ctx context.Context) ([]string, error) {
	if r.remote == nil {
		return nil, nil
	}
	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	defer r.unlock()
	branch, err := r.branch()
	if err != nil {
		return nil, nil
	}
	head, err := r.head()
	if err != nil || head.IsZero() || head == r.trackingTip(branch) {
		return nil, err
	}
	return r.pendingList(r.trackingTip(branch), head), nil
}

// hashFromHex parses a full hexadecimal object name.
func hashFromHex(s string) (plumbing.Hash, bool) {
	if len(s) != 40 {
		return plumbing.ZeroHash, false
	}
	if _, err := hex.DecodeString(s); err != nil {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(s), true
}

// machineTip is the remote's tip as the last push from this machine left
// it, with a .git that holds its objects.
type machineTip struct {
	Commit string `json:"commit"`
	GitDir string `json:"gitdir"`
	// Root is GitDir's root id: objects are read from no other.
	Root string `json:"root,omitempty"`
	// PushedAt is when that push ended, PushNanos how long its last
	// attempt took; ContendedAt is the last time a push from this machine
	// found that another machine had pushed first (unix nanoseconds).
	PushedAt  int64 `json:"pushed_at,omitempty"`
	PushNanos int64 `json:"push_ns,omitempty"`
	// CycleNanos is a moving average of how long an attempt that fetched
	// took (fetch, replay, push): what a machine that lost a race needs to
	// land.
	CycleNanos  int64 `json:"cycle_ns,omitempty"`
	ContendedAt int64 `json:"contended_at,omitempty"`
	// Attempts is a moving average of the attempts a push from this
	// machine needed: about the number of machines contending.
	Attempts float64 `json:"attempts,omitempty"`
}

// contendedWithin says whether another machine pushed first recently.
func (t *machineTip) contendedWithin(now time.Time, d time.Duration) bool {
	return t != nil && t.ContendedAt > 0 && now.Sub(time.Unix(0, t.ContendedAt)) < d
}

// politeWait is how long this machine's next push waits after its last
// one. Every push that lands while another machine's is on its way makes
// that one fail and start over (fetch, replay, push), and a machine that
// pushes again at once always beats it: it knows the tip (it made it) and
// needs no fetch, so its window is a push where the loser's is a fetch
// and a push. Seen in traces: one machine landing 14 pushes in a row,
// each on its first attempt, while three others lost 13-15 races each
// and never saw a reason to wait. So a machine always leaves a gap of
// about one losing attempt (two push durations, randomised) after its
// own push: a machine that lost to it gets one clean try. While other
// machines contend (its own pushes needed retries) it waits about a round:
// as many retry cycles (fetch, replay, push: what a loser needs to land)
// as there are machines contending (estimated by the attempts its pushes
// needed), randomised, so it pushes about once a round. A round counted
// in pushes was too short: traces of 4 machines showed a winner, its gap
// over before the three losers' doomed attempts had ended, winning again,
// and one machine losing 5-6 attempts in a row (the tail of the fleet's
// writes). Either way the tickets that queue here meanwhile ride along in
// one bigger push; a lone agent's pushes are farther apart than the gap
// (each call boots and fetches first), so it never waits.
func (t *machineTip) politeWait(now time.Time) time.Duration {
	if t == nil || t.PushedAt == 0 {
		return 0
	}
	p := time.Duration(t.PushNanos)
	p = min(max(p, 20*time.Millisecond), 2*time.Second)
	hold := 2*p + fullJitterDelay(p)
	if t.contendedWithin(now, 2*time.Minute) {
		c := time.Duration(t.CycleNanos)
		if c <= 0 {
			c = 5 * p / 2
		}
		c = min(max(c, p), 5*time.Second)
		round := time.Duration(float64(c) * min(max(t.Attempts, 1.5), 32))
		hold = max(hold, round/2+fullJitterDelay(round))
	}
	since := now.Sub(time.Unix(0, t.PushedAt))
	if since >= hold {
		return 0
	}
	return hold - since
}

func (q *machineQueue) readTip() *machineTip {
	b, err := readPrivate(filepath.Join(q.dir, "tip"))
	if err != nil {
		return nil
	}
	var t machineTip
	if json.Unmarshal(b, &t) != nil {
		return nil
	}
	return &t
}

func (q *machineQueue) writeTip(t machineTip) {
	b, _ := json.Marshal(t)
	_ = writeFileAtomic(filepath.Join(q.dir, "tip"), b)
}

// refusedLog keeps the last refusals, for tgp status.
const refusedLog = "refused"

// maxRefused is how many refusals the log keeps.
const maxRefused = 20

// refuse removes ticket id and its result, logs why, and returns the
// reason. Only the leader (holding the lock) refuses: the log has one
// writer.
func (q *machineQueue) refuse(id string, why error) error {
	q.finish(id)
	lines := q.refusals()
	lines = append(lines, time.Now().UTC().Format(time.RFC3339)+" "+strings.ReplaceAll(why.Error(), "\n", " "))
	if len(lines) > maxRefused {
		lines = lines[len(lines)-maxRefused:]
	}
	if err := writeFileAtomic(filepath.Join(q.dir, refusedLog), []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		return fmt.Errorf("%w (logging it: %v)", why, err)
	}
	return why
}

// refusals are the logged refusals, oldest first.
func (q *machineQueue) refusals() []string {
	b, err := readPrivate(filepath.Join(q.dir, refusedLog))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
