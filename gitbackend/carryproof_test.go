package gitbackend

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// The tests of this file plant refs the way someone outside the fleet
// would: the git CLI clones the remote over the network, commits, and
// pushes a ref under refs/tgp/carry/. Then root A loses a race and wins
// the next (lostRace): the attempt that wins fetches the carries and
// lands what it trusts.

// evilCommit clones url with the git CLI and commits, on main's tip, a
// file tools/evil.ts, with committer (and author) date when (zero: now).
// It returns the clone, main's tip (the carry's base) and the commit.
func evilCommit(t *testing.T, url string, when time.Time) (clone, base, head string) {
	t.Helper()
	clone = filepath.Join(t.TempDir(), "attacker")
	gittest.Git(t, "", "clone", "-q", url, clone)
	base = strings.TrimSpace(gittest.Git(t, clone, "rev-parse", "HEAD"))
	gittest.WriteFile(t, clone, "tools/evil.ts", "export default () => 'pwned';\n")
	gittest.Git(t, clone, "add", "tools/evil.ts")
	cmd := exec.Command("git", "commit", "-q", "-m", "forge: tools/evil.ts")
	cmd.Dir = clone
	cmd.Env = gittest.Env(t.TempDir())
	if !when.IsZero() {
		d := strconv.FormatInt(when.Unix(), 10) + " +0000"
		cmd.Env = append(cmd.Env, "GIT_COMMITTER_DATE="+d, "GIT_AUTHOR_DATE="+d)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	head = strings.TrimSpace(gittest.Git(t, clone, "rev-parse", "HEAD"))
	return clone, base, head
}

// plant pushes head from clone to ref on url with a plain git push.
func plant(t *testing.T, clone, url, head, ref string) {
	t.Helper()
	gittest.Git(t, clone, "push", "-q", url, head+":"+ref)
}

// provenName is the name a root holding key gives a carry of base..head
// on main made at when.
func provenName(key []byte, base, head string, when time.Time) string {
	millis := when.UnixMilli()
	mac := carryMAC(key, "main", plumbing.NewHash(base), plumbing.NewHash(head), millis, "0123456789ab")
	return fmt.Sprintf("refs/tgp/carry/main/%s-%d-0123456789ab-%s", base, millis, mac)
}

// raceA has root A write a tool of its own (its first push loses, its
// second wins and fetches the carries) and fails unless A's tool is on
// main and tools/evil.ts is not.
func raceA(t *testing.T, bare string, a *agent) {
	t.Helper()
	a.write(t, "tools/a1.ts", "a1\n")
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, "tools/a1.ts") {
		t.Fatalf("A's change is not on main:\n%s", files)
	}
	if strings.Contains(files, "tools/evil.ts") {
		t.Fatalf("the planted carry landed on main:\n%s", gittest.Git(t, bare, "log", "--format=%h %an %s", "--name-only", "main"))
	}
	gittest.Git(t, bare, "fsck", "--strict")
}

// remoteRef is the commit ref names on the bare remote ("" if none).
func remoteRef(t *testing.T, bare, ref string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, bare, "for-each-ref", "--format=%(objectname)", ref))
}

// mustList fails unless a's UnverifiedCarries lists ref, saying why.
func mustList(t *testing.T, a *agent, ref, why string) {
	t.Helper()
	list, err := a.repo.UnverifiedCarries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if strings.HasPrefix(l, ref+" ") && strings.Contains(l, why) {
			return
		}
	}
	t.Fatalf("UnverifiedCarries does not list %s (%q):\n%s", ref, why, strings.Join(list, "\n"))
}

// TestCarryPlantedByAnOutsiderIsNotLanded (issue 42): a ref of today's
// shape (base-random, no proof) pushed with the git CLI, on the tip and
// freshly committed, is neither landed nor deleted by the winner, with or
// without the fleet's key, over smart HTTP and git daemon; UnverifiedCarries
// lists it.
func TestCarryPlantedByAnOutsiderIsNotLanded(t *testing.T) {
	for _, rc := range []race{{}, {noKey: true}, {daemon: true}} {
		t.Run(fmt.Sprintf("noKey=%v,daemon=%v", rc.noKey, rc.daemon), func(t *testing.T) {
			bare, url, a, _ := lostRace(t, rc)
			clone, base, head := evilCommit(t, url, time.Time{})
			ref := "refs/tgp/carry/main/" + base + "-0123456789ab"
			plant(t, clone, url, head, ref)
			raceA(t, bare, a)
			if got := remoteRef(t, bare, ref); got != head {
				t.Fatalf("the planted ref is %q, want it left at %s", got, head)
			}
			mustList(t, a, ref, "no proof")
		})
	}
}

// TestCarryWithAForgedProofIsNotLanded: a ref of the proven shape whose
// MAC was made without the fleet's key (another key, or none: the hash of
// the rest) is not landed, and is left and listed.
func TestCarryWithAForgedProofIsNotLanded(t *testing.T) {
	bare, url, a, _ := lostRace(t, race{})
	clone, base, head := evilCommit(t, url, time.Time{})
	forged := provenName([]byte("a guess at the key"), base, head, time.Now())
	plant(t, clone, url, head, forged)
	raceA(t, bare, a)
	if got := remoteRef(t, bare, forged); got != head {
		t.Fatalf("the forged carry is %q, want it left at %s", got, head)
	}
	mustList(t, a, forged, "does not match")
}

// TestCarryMovedToOtherCommitsIsNotLanded: a proven carry's name (as a
// fleet member made it) pointed by an outsider at commits of their own:
// the MAC covers the head, so it no longer matches.
func TestCarryMovedToOtherCommitsIsNotLanded(t *testing.T) {
	bare, url, a, _ := lostRace(t, race{})
	clone, base, head := evilCommit(t, url, time.Time{})
	// The name a member would have given a carry of another commit on
	// the same base.
	name := provenName(testCarryKey, base, strings.Repeat("1", 40), time.Now())
	plant(t, clone, url, head, name)
	raceA(t, bare, a)
	if got := remoteRef(t, bare, name); got != head {
		t.Fatalf("the moved carry is %q, want it left at %s", got, head)
	}
	mustList(t, a, name, "does not match")
}

// TestCarryDatedInTheFutureIsNotLanded: a carry with a valid proof whose
// authenticated time (and committer date) is an hour ahead is not landed:
// freshness would otherwise last as long as its maker pleases. Nothing
// proves it stale either: it is left and listed.
func TestCarryDatedInTheFutureIsNotLanded(t *testing.T) {
	bare, url, a, _ := lostRace(t, race{})
	future := time.Now().Add(time.Hour)
	clone, base, head := evilCommit(t, url, future)
	name := provenName(testCarryKey, base, head, future)
	plant(t, clone, url, head, name)
	raceA(t, bare, a)
	if got := remoteRef(t, bare, name); got != head {
		t.Fatalf("the future carry is %q, want it left at %s", got, head)
	}
	mustList(t, a, name, "ahead of this clock")
}

// TestStaleCarryIsDeletedByTheWinner (issue 42, item 5): carries whose
// proof says they are stale are deleted by the next push that wins, and
// not landed: one whose authenticated time is 11 minutes old (its
// committer date fresh: the date is not what counts), and one whose
// commit is on main already. A ref with no proof beside them is left.
func TestStaleCarryIsDeletedByTheWinner(t *testing.T) {
	bare, url, a, _ := lostRace(t, race{})
	clone, base, head := evilCommit(t, url, time.Time{})
	old := provenName(testCarryKey, base, head, time.Now().Add(-11*time.Minute))
	plant(t, clone, url, head, old)
	seed := strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main~1"))
	landed := provenName(testCarryKey, seed, base, time.Now())
	plant(t, clone, url, base, landed)
	unproven := "refs/tgp/carry/main/" + base + "-0123456789ab"
	plant(t, clone, url, head, unproven)
	// Stale ones are not what status lists.
	list, err := a.repo.UnverifiedCarries(t.Context())
	if err != nil || len(list) != 1 || !strings.HasPrefix(list[0], unproven+" ") {
		t.Fatalf("UnverifiedCarries before the race: %q (%v), want only %s", list, err, unproven)
	}
	raceA(t, bare, a)
	for _, ref := range []string{old, landed} {
		if got := remoteRef(t, bare, ref); got != "" {
			t.Fatalf("the stale carry %s is still on the remote (at %s)", ref, got)
		}
	}
	if got := remoteRef(t, bare, unproven); got != head {
		t.Fatalf("the unproven ref is %q, want it left at %s", got, head)
	}
}

// TestCarryOnALocalRemoteIsNeverLanded: a root on a local path
// remote never carries (its pushes queue on the ref lock), key or not;
// a ref planted there is never landed and is listed all the same.
func TestCarryOnALocalRemoteIsNeverLanded(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	a, b := newAgent(t, bare, false), newAgent(t, bare, false)
	a.repo.cfg.CarryKey = nil
	clone, base, head := evilCommit(t, bare, time.Time{})
	ref := "refs/tgp/carry/main/" + base + "-0123456789ab"
	plant(t, clone, bare, head, ref)
	b.write(t, "tools/b1.ts", "b1\n")
	raceA(t, bare, a)
	mustList(t, a, ref, "no proof")
}

// TestCarryProofVerdicts: what a root makes of a carry's name and head,
// without a remote: the proof binds the branch, base, head and time; the
// time decides fresh, stale or ahead of the clock (within the skew it is
// fresh).
func TestCarryProofVerdicts(t *testing.T) {
	base, head := plumbing.NewHash(strings.Repeat("a", 40)), plumbing.NewHash(strings.Repeat("b", 40))
	now := time.Now()
	made := func(at time.Time) *carry { return newCarry(testCarryKey, "main", base, head, at) }
	parse := func(c *carry, branch string, h plumbing.Hash) *carry {
		t.Helper()
		p, ok := parseCarry(branch, c.ref, h)
		if !ok {
			t.Fatalf("%s does not parse as a carry of %s", c.ref, branch)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		c      *carry
		key    []byte
		branch string
		want   carryVerdict
	}{
		{"fresh", parse(made(now), "main", head), testCarryKey, "main", carryFresh},
		{"within the skew", parse(made(now.Add(carryClockSkew/2)), "main", head), testCarryKey, "main", carryFresh},
		{"ahead", parse(made(now.Add(2*carryClockSkew)), "main", head), testCarryKey, "main", carryFuture},
		{"stale", parse(made(now.Add(-carryMaxAge-time.Second)), "main", head), testCarryKey, "main", carryStale},
		{"no key", parse(made(now), "main", head), nil, "main", carryUnproven},
		{"another key", parse(made(now), "main", head), []byte("another"), "main", carryUnproven},
		{"moved to another head", parse(made(now), "main", base), testCarryKey, "main", carryUnproven},
	} {
		if got := tc.c.verdict(tc.key, tc.branch, now); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.name, got, tc.want)
		}
	}
	// Copied to another branch: the name no longer parses there, and
	// judged as that branch's it does not match.
	c := made(now)
	moved := plumbing.ReferenceName(strings.Replace(string(c.ref), "/main/", "/side/", 1))
	if p, ok := parseCarry("side", moved, head); !ok || p.verdict(testCarryKey, "side", now) != carryUnproven {
		t.Errorf("a carry renamed to another branch is not refused: %v", ok)
	}
	for _, name := range []string{
		"refs/tgp/carry/main/" + base.String() + "-0123456789ab",
		"refs/tgp/carry/main/" + base.String() + "-x-n-" + strings.Repeat("0", 64),
		"refs/tgp/carry/main/" + base.String() + "-1-n-" + strings.Repeat("0", 63),
		"refs/tgp/carry/main/nothex-1-n-" + strings.Repeat("0", 64),
		"refs/tgp/carry/main/x/" + base.String() + "-1-n-" + strings.Repeat("0", 64),
	} {
		if _, ok := parseCarry("main", plumbing.ReferenceName(name), head); ok {
			t.Errorf("%s parses as a carry", name)
		}
	}
}
