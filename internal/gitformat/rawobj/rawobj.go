// Package rawobj reads what a walk of the object graph needs straight
// from the bytes of git's objects, without building go-git's objects: a
// tree's entries one at a time (tree-walk.c's decode_tree_entry), a
// commit's tree, parents and committer time (commit.c's
// parse_commit_buffer) and an annotated tag's target (tag.c's
// parse_tag_buffer). Full validation is fsck's.
package rawobj

import (
	"bytes"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// NextTreeEntry reads "<mode> <name>\0<hash>" off a raw tree and returns
// the rest of it.
func NextTreeEntry(data []byte) (mode filemode.FileMode, name []byte, h plumbing.Hash, rest []byte, ok bool) {
	sp := bytes.IndexByte(data, ' ')
	if sp <= 0 {
		return 0, nil, h, nil, false
	}
	nul := bytes.IndexByte(data[sp+1:], 0)
	if nul < 0 || sp+1+nul+21 > len(data) {
		return 0, nil, h, nil, false
	}
	var m uint32
	for _, c := range data[:sp] {
		if c < '0' || c > '7' {
			return 0, nil, h, nil, false
		}
		m = m<<3 | uint32(c-'0')
	}
	name = data[sp+1 : sp+1+nul]
	copy(h[:], data[sp+1+nul+1:])
	return filemode.FileMode(m), name, h, data[sp+1+nul+21:], true
}

// FindTreeEntry finds the entry name in a raw tree ("<mode> <name>\0<hash>"
// entries); ok is false when there is none.
func FindTreeEntry(data []byte, name string) (mode filemode.FileMode, h plumbing.Hash, ok bool) {
	for len(data) > 0 {
		m, n, eh, rest, ok := NextTreeEntry(data)
		if !ok {
			break
		}
		if string(n) == name {
			return m, eh, true
		}
		data = rest
	}
	return 0, plumbing.ZeroHash, false
}

// Commit is what a walk reads of a commit's header.
type Commit struct {
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	// Time is the committer time in seconds (0: none that reads).
	Time int64
}

// ParseCommit reads a commit's tree, parents and committer time as
// parse_commit_buffer does (a committer line it cannot read gives time 0).
func ParseCommit(data []byte) (Commit, bool) {
	var c Commit
	line := func() ([]byte, []byte, bool) {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, nil, false
		}
		l := data[:nl]
		data = data[nl+1:]
		k, v, _ := bytes.Cut(l, []byte{' '})
		return k, v, true
	}
	k, v, ok := line()
	if !ok || string(k) != "tree" || !hexHash(v, &c.Tree) {
		return c, false
	}
	for {
		if k, v, ok = line(); !ok {
			return c, true // no committer: time 0
		}
		if string(k) != "parent" {
			break
		}
		var p plumbing.Hash
		if !hexHash(v, &p) {
			return c, false
		}
		c.Parents = append(c.Parents, p)
	}
	for ; ok && len(k) > 0; k, v, ok = line() {
		if string(k) != "committer" {
			continue
		}
		if gt := bytes.LastIndexByte(v, '>'); gt >= 0 {
			t := bytes.TrimLeft(v[gt+1:], " ")
			if sp := bytes.IndexByte(t, ' '); sp >= 0 {
				t = t[:sp]
			}
			if n, err := strconv.ParseUint(string(t), 10, 64); err == nil {
				c.Time = int64(n)
			}
		}
		break
	}
	return c, true
}

// TagTarget is the "object" line of an annotated tag.
func TagTarget(data []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	v, ok := bytes.CutPrefix(data, []byte("object "))
	if !ok || len(v) < 40 {
		return h, false
	}
	return h, hexHash(v[:40], &h)
}

// hexHash reads a name of 40 lowercase hex digits, as git writes them.
func hexHash(b []byte, h *plumbing.Hash) bool {
	if len(b) != 40 {
		return false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhexDigit(b[2*i])
		lo, ok2 := unhexDigit(b[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		h[i] = hi<<4 | lo
	}
	return true
}

func unhexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// CompareNames is base_name_compare, the order of a tree's entries: the
// names compared byte by byte, a directory's as if it ended in '/'
// (negative: a sorts first). Every walk that merges two trees, or a tree
// with the index, steps through both in this order.
func CompareNames[T string | []byte](a T, aDir bool, b T, bDir bool) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	ca, cb := byte(0), byte(0)
	if len(a) > n {
		ca = a[n]
	} else if aDir {
		ca = '/'
	}
	if len(b) > n {
		cb = b[n]
	} else if bDir {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}
