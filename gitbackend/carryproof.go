package gitbackend

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Proof of a carry. Anyone who can push some ref of the remote can push
// one under refs/tgp/carry/, and the push that lands it puts its commits
// on the branch under this root's push: past any review of the branch, and
// past a host's protection of the branch when other refs are not
// protected. So a root lands only carries that prove a member of the
// fleet left them: their ref name ends in an HMAC-SHA256, keyed by the
// fleet's secret (Config.CarryKey, read from the variable git.carry_key_env
// names), over
//
//	the branch, the base, the head (the ref's value), the time the carry
//	was made (Unix milliseconds) and a nonce,
//
// the name being refs/tgp/carry/<branch>/<base>-<millis>-<nonce>-<mac>.
// The head is a commit id: it hashes its tree and its parents, back to the
// base, so the MAC covers every commit of the carry and every file in
// them; a ref moved to other commits, or a name copied to another branch,
// no longer matches. The proof is in the name, not in a commit trailer,
// because a carry's commits are the losing root's own, pushed as they are
// (a trailer would make them other commits), and because the ref name is
// all a root reads before it has fetched a thing.
//
// The time under the MAC is what says a carry is fresh: the committer
// date is whatever the committer set. A carry dated ahead of this clock by
// more than carryClockSkew is not landed (it would otherwise stay fresh
// for as long as it pleases); one older than carryMaxAge is stale, and the
// next push that wins deletes it. A ref under refs/tgp/carry/ without a
// matching proof is never landed and never deleted (nothing proves it is
// a carry, or that it is stale): `tgp status` lists it for a person to
// look at (Repo.UnverifiedCarries).

// carryClockSkew is how far ahead of this machine's clock a carry's time
// may be: the fleet's clocks are NTP-close, not equal.
const carryClockSkew = time.Minute

// carryStaleDeletes bounds how many stale carries one push deletes: the
// deletions ride the winner's atomic push, and any of them gone (deleted
// by another winner) fails it.
const carryStaleDeletes = 16

// carryVerdict is what a root makes of a carry it found on the remote.
type carryVerdict int

const (
	// carryFresh: proven and fresh; landed.
	carryFresh carryVerdict = iota
	// carryStale: proven, older than carryMaxAge; deleted by the next
	// winner.
	carryStale
	// carryFuture: proven, dated ahead of this clock; left alone.
	carryFuture
	// carryUnproven: no key here to check it, or the proof does not
	// match; left alone and reported.
	carryUnproven
)

// carryMAC is the proof of a carry of base..head on branch, made at
// millis with nonce.
func carryMAC(key []byte, branch string, base, head plumbing.Hash, millis int64, nonce string) string {
	m := hmac.New(sha256.New, key)
	// NUL never occurs in a ref name or a hash: the fields cannot run
	// into each other.
	for _, f := range []string{"tgp carry v1", branch, base.String(), head.String(), strconv.FormatInt(millis, 10), nonce} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// newCarry names a carry of base..head on branch, made at now, with its
// proof: the base is in the name too, so that a root landing it needs no
// walk to find where it starts.
func newCarry(key []byte, branch string, base, head plumbing.Hash, now time.Time) *carry {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	nonce := hex.EncodeToString(b)
	millis := now.UnixMilli()
	mac := carryMAC(key, branch, base, head, millis, nonce)
	name := carryPrefix(branch) + base.String() + "-" + strconv.FormatInt(millis, 10) + "-" + nonce + "-" + mac
	return &carry{ref: plumbing.ReferenceName(name), base: base, head: head, at: time.UnixMilli(millis), nonce: nonce, mac: mac}
}

// parseCarry reads a carry from its remote name and head: a name not of
// the carry's shape is not one.
func parseCarry(branch string, name plumbing.ReferenceName, head plumbing.Hash) (*carry, bool) {
	rest, ok := strings.CutPrefix(string(name), carryPrefix(branch))
	if !ok || head.IsZero() {
		return nil, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 4 {
		return nil, false
	}
	base, ok := hashFromHex(parts[0])
	if !ok {
		return nil, false
	}
	millis, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || millis <= 0 || len(parts[3]) != 2*sha256.Size {
		return nil, false
	}
	return &carry{ref: name, base: base, head: head, at: time.UnixMilli(millis), nonce: parts[2], mac: parts[3]}, true
}

// verdict judges c, found on branch's carries, at now.
func (c *carry) verdict(key []byte, branch string, now time.Time) carryVerdict {
	if len(key) == 0 {
		return carryUnproven
	}
	want := carryMAC(key, branch, c.base, c.head, c.at.UnixMilli(), c.nonce)
	if !hmac.Equal([]byte(want), []byte(c.mac)) {
		return carryUnproven
	}
	switch age := now.Sub(c.at); {
	case age < -carryClockSkew:
		return carryFuture
	case age > carryMaxAge:
		return carryStale
	}
	return carryFresh
}

// unverifiedReason says why a ref under refs/tgp/carry/ is neither
// landed nor deleted ("" for one that is: a proven carry, fresh or
// stale). The branch is what the name holds before its last component.
func unverifiedReason(key []byte, name string, head plumbing.Hash, now time.Time) string {
	rest := strings.TrimPrefix(name, "refs/tgp/carry/")
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "not a carry: no branch in its name"
	}
	branch := rest[:i]
	c, ok := parseCarry(branch, plumbing.ReferenceName(name), head)
	switch {
	case !ok:
		return "not a carry: its name has no proof"
	case len(key) == 0:
		return "no key to check its proof (git.carry_key_env names none, or it is empty)"
	}
	switch c.verdict(key, branch, now) {
	case carryUnproven:
		return "its proof does not match (forged, or made with another key)"
	case carryFuture:
		return "dated " + c.at.UTC().Format(time.RFC3339) + ", ahead of this clock"
	}
	return ""
}
