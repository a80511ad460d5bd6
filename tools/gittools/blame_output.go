package gittools

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/pretty"
)

// output is builtin/blame.c's find_alignment + emit_other for git's
// default format.
func (sb *scoreboard) output(final string, data []byte) string {
	es := sb.guilty
	sort.Slice(es, func(i, j int) bool { return es[i].lno < es[j].lno })
	showName := false
	longestFile, longestAuthor, maxLno := 0, 0, 0
	abbrev := sb.cfg.abbrev
	if abbrev < 0 {
		abbrev = sb.defaultAbbrev()
	}
	mm := readMailmap(sb.r)
	seen := map[*bcommit]bool{}
	for _, e := range es {
		if e.o.path != final {
			showName = true
		}
		longestFile = max(longestFile, len(e.o.path))
		if !seen[e.o.c] {
			seen[e.o.c] = true
			if !e.o.c.fake {
				sb.authorOf(e.o.c)
			}
			name, email := mm.MapUser(e.o.c.author, e.o.c.email)
			e.o.c.author = name
			if sb.cfg.showEmail {
				e.o.c.author = "<" + email + ">"
			}
			longestAuthor = max(longestAuthor, pretty.StrWidth(e.o.c.author))
			abbrev = max(abbrev, sb.uniqueAbbrev(e.o.c.hash, abbrev))
		}
		maxLno = max(maxLno, e.lno+e.n)
	}
	if sb.abbrevs != nil {
		sb.abbrevs.close()
	}
	abbrev++
	digits := len(fmt.Sprint(maxLno))
	starts := lineStarts(data)
	var b strings.Builder
	for _, e := range es {
		c := e.o.c
		hex := c.hash.String()
		when := sb.cfg.formatDate(c.ts, c.tz)
		name := c.author
		pad := strings.Repeat(" ", max(longestAuthor-pretty.StrWidth(name), 0))
		for k := 0; k < e.n; k++ {
			n := abbrev
			switch {
			case c.boundary && sb.cfg.blankBoundary:
				b.WriteString(strings.Repeat(" ", n))
			case c.boundary:
				b.WriteByte('^')
				b.WriteString(hex[:min(n-1, len(hex))])
			default:
				b.WriteString(hex[:min(n, len(hex))])
			}
			if showName {
				// C's %-*s pads bytes, not runes as Go's does.
				b.WriteByte(' ')
				b.WriteString(e.o.path)
				b.WriteString(strings.Repeat(" ", longestFile-len(e.o.path)))
			}
			fmt.Fprintf(&b, " (%s%s %10s %*d) ", name, pad, when, digits, e.lno+1+k)
			l := e.lno + k
			line := data[starts[l]:starts[l+1]]
			b.Write(line)
			if len(line) == 0 || line[len(line)-1] != '\n' {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// authorOf reads the author line of the raw commit as blame.c's
// get_ac_line and split_ident_line do: go-git's parsed signature loses
// the sign of a zone like -0030 and trims names git keeps.
func (sb *scoreboard) authorOf(c *bcommit) {
	c.author, c.email, c.ts, c.tz = "(unknown)", "(unknown)", 0, 0
	obj, err := sb.s.EncodedObject(plumbing.CommitObject, c.hash)
	if err != nil {
		return
	}
	rd, err := obj.Reader()
	if err != nil {
		return
	}
	raw, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return
	}
	if hdr, _, ok := bytes.Cut(raw, []byte("\n\n")); ok {
		raw = hdr
	}
	i := bytes.Index(raw, []byte("\nauthor "))
	if i < 0 {
		return
	}
	line := raw[i+len("\nauthor "):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	lt := bytes.IndexByte(line, '<')
	if lt < 0 {
		return
	}
	ne := 0
	for k := lt - 1; k >= 0; k-- {
		if !isGitSpace(line[k]) {
			ne = k + 1
			break
		}
	}
	gt := bytes.IndexByte(line[lt+1:], '>')
	if gt < 0 {
		return
	}
	c.author, c.email = string(line[:ne]), string(line[lt+1:lt+1+gt])
	// The date follows the last '>'.
	rest := line[bytes.LastIndexByte(line, '>')+1:]
	rest = bytes.TrimLeft(rest, " \t\r\n")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return
	}
	ts, _ := strconv.ParseUint(string(rest[:n]), 10, 64)
	rest = bytes.TrimLeft(rest[n:], " \t\r\n")
	if len(rest) < 2 || (rest[0] != '+' && rest[0] != '-') || rest[1] < '0' || rest[1] > '9' {
		return
	}
	c.ts = int64(ts)
	// atoi of the zone as written.
	m := 1
	for m < len(rest) && rest[m] >= '0' && rest[m] <= '9' {
		m++
	}
	tz, _ := strconv.Atoi(string(rest[:m]))
	c.tz = tz
}

// lineStarts are the offsets of each line and, last, the end.
func lineStarts(data []byte) []int {
	s := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			s = append(s, i+1)
		}
	}
	if len(data) == 0 {
		return []int{0, 0}
	}
	return append(s, len(data))
}

// defaultAbbrev is git's default abbreviation length: 7, more for a
// repository with many packed objects (repo_approximate_object_count).
func (sb *scoreboard) defaultAbbrev() int {
	dot, ok := sb.r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return 7
	}
	fsys := dot.Filesystem()
	ents, err := fsys.ReadDir("objects/pack")
	if err != nil {
		return 7
	}
	var count uint64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".idx") {
			continue
		}
		if n, ok := idxCount(fsys, "objects/pack/"+e.Name()); ok {
			count += n
		}
	}
	if count == 0 {
		return 7
	}
	l := bits.Len64(count) // msb + 1
	l = (l + 1) / 2
	return max(l, 7)
}

// idxCount reads a pack index's object count (the last fan-out entry).
func idxCount(fsys billy.Filesystem, name string) (uint64, bool) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	head := make([]byte, 8+256*4)
	if _, err := io.ReadFull(f, head); err != nil {
		return 0, false
	}
	if string(head[:4]) == "\xfftOc" {
		return uint64(binary.BigEndian.Uint32(head[8+255*4:])), true
	}
	return uint64(binary.BigEndian.Uint32(head[255*4:])), true
}

// abbrevIndex answers git's find_unique_abbrev from the pack indexes
// (binary search over their sorted names) and the loose object
// directories, without listing every object.
type abbrevIndex struct {
	fsys  billy.Filesystem
	packs []packIndex
	loose map[string][]plumbing.Hash
	// looseDirs are the objects/xx directories there are, listed once:
	// a root whose objects are all packed has none, and a look-up then
	// opens no directory (git caches its loose object directories so).
	looseDirs map[string]bool
}

// packIndex is a .idx read whole (its names are searched many times:
// once per commit shown).
type packIndex struct {
	data     []byte
	n        int
	namesOff int
	stride   int
	fanout   int // offset of the fan-out table
}

func (sb *scoreboard) abbrevIndex() *abbrevIndex {
	if sb.abbrevs != nil {
		return sb.abbrevs
	}
	ai := &abbrevIndex{loose: map[string][]plumbing.Hash{}}
	sb.abbrevs = ai
	dot, ok := sb.r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return ai
	}
	ai.fsys = dot.Filesystem()
	ents, _ := ai.fsys.ReadDir("objects/pack")
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".idx") {
			continue
		}
		data, err := readWhole(ai.fsys, "objects/pack/"+e.Name())
		if err != nil || len(data) < 8+256*4 {
			continue
		}
		p := packIndex{data: data, n: int(binary.BigEndian.Uint32(data[8+255*4:])), namesOff: 8 + 256*4, stride: 20, fanout: 8}
		if string(data[:4]) != "\xfftOc" {
			p = packIndex{data: data, n: int(binary.BigEndian.Uint32(data[255*4:])), namesOff: 256*4 + 4, stride: 24}
		}
		if p.namesOff+p.n*p.stride > len(data) {
			continue
		}
		ai.packs = append(ai.packs, p)
	}
	return ai
}

func (ai *abbrevIndex) close() { ai.packs = nil }

func readWhole(fsys billy.Filesystem, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (p packIndex) name(i int) (plumbing.Hash, bool) {
	var h plumbing.Hash
	copy(h[:], p.data[p.namesOff+i*p.stride:])
	return h, true
}

// fanRange is the range of names whose first byte is b.
func (p packIndex) fanRange(b byte) (int, int) {
	lo := 0
	if b > 0 {
		lo = int(binary.BigEndian.Uint32(p.data[p.fanout+(int(b)-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(p.data[p.fanout+int(b)*4:]))
	return min(lo, p.n), min(max(hi, lo), p.n)
}

// neighbours are the objects sorted next to h: the ones sharing the
// longest prefix with it.
func (ai *abbrevIndex) neighbours(h plumbing.Hash) []plumbing.Hash {
	var out []plumbing.Hash
	for _, p := range ai.packs {
		lo, hi := p.fanRange(h[0])
		pos := lo + sort.Search(hi-lo, func(i int) bool {
			x, ok := p.name(lo + i)
			return !ok || bytes.Compare(x[:], h[:]) >= 0
		})
		for _, i := range []int{pos - 1, pos, pos + 1} {
			if i >= 0 && i < p.n {
				if x, ok := p.name(i); ok {
					out = append(out, x)
				}
			}
		}
	}
	if ai.fsys != nil {
		dir := h.String()[:2]
		if ai.looseDirs == nil {
			ai.looseDirs = map[string]bool{}
			ents, _ := ai.fsys.ReadDir("objects")
			for _, e := range ents {
				if len(e.Name()) == 2 && e.IsDir() {
					ai.looseDirs[e.Name()] = true
				}
			}
		}
		hs, ok := ai.loose[dir]
		if !ok && ai.looseDirs[dir] {
			ents, _ := ai.fsys.ReadDir("objects/" + dir)
			for _, e := range ents {
				if len(e.Name()) == 38 {
					hs = append(hs, plumbing.NewHash(dir+e.Name()))
				}
			}
			ai.loose[dir] = hs
		}
		out = append(out, hs...)
	}
	return out
}

// uniqueAbbrev is git's find_unique_abbrev: the shortest length from
// minLen up at which no other object shares the prefix.
func (sb *scoreboard) uniqueAbbrev(h plumbing.Hash, minLen int) int {
	hex := h.String()
	l := minLen
	for _, o := range sb.abbrevIndex().neighbours(h) {
		if o == h {
			continue
		}
		ox := o.String()
		i := 0
		for i < len(hex) && hex[i] == ox[i] {
			i++
		}
		if i >= l {
			l = i + 1
		}
	}
	return l
}

func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
