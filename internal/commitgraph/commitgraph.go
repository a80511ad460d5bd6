// Package commitgraph is git's commit-graph file (Documentation/gitformat-
// commit-graph.txt, commit-graph.c, bloom.c of git 2.39): for every commit
// its root tree, parents, committer time, topological level and corrected
// commit date, and a changed-path Bloom filter, so that a revision walk
// reads no commit object and a path-limited walk skips the trees of the
// commits that cannot have touched the path.
//
// Encode writes a file git reads (`git commit-graph verify` accepts it;
// given the same commits it is the file `git commit-graph write
// --reachable --changed-paths` writes, byte for byte), alone or as a
// layer of a split chain (objects/info/commit-graphs); Parse and Open read
// either, git's or ours.
package commitgraph

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// Chunk ids and constants of the format.
const (
	signature = 0x43475048 // "CGPH"

	chunkFanout    = 0x4f494446 // OIDF
	chunkLookup    = 0x4f49444c // OIDL
	chunkData      = 0x43444154 // CDAT
	chunkGenData   = 0x47444132 // GDA2
	chunkGenOver   = 0x47444f32 // GDO2
	chunkEdges     = 0x45444745 // EDGE
	chunkBloomIdx  = 0x42494458 // BIDX
	chunkBloomData = 0x42444154 // BDAT
	chunkBase      = 0x42415345 // BASE

	parentNone   = 0x70000000
	edgesNeeded  = 0x80000000
	lastEdge     = 0x80000000
	maxTopoLevel = 0x3FFFFFFF
	maxGenOffset = 0x7FFFFFFF
	overflowBit  = 0x80000000

	hashLen = 20
)

// Commit is one commit to write.
type Commit struct {
	Hash, Tree plumbing.Hash
	Parents    []plumbing.Hash
	// Time is the committer time (Unix seconds).
	Time int64
	// Filter is the commit's changed-path filter (NewFilter); nil, when
	// filters are written, writes the one that answers "maybe" for every
	// path (an empty filter would say nothing changed).
	Filter []byte
}

// ErrMissingParent: a commit's parent is neither among the commits
// written nor in the base graph.
var ErrMissingParent = errors.New("commit-graph: parent not in the graph")

// Encode writes the commits as a commit-graph file. base, when not nil,
// is the chain the file is a layer on (its commits are not written again
// and parents may be among them); bloom writes the changed-path chunks
// (every commit's Filter, an empty one where it is nil).
func Encode(commits []Commit, base *Graph, bloom bool) ([]byte, error) {
	cs := slices.Clone(commits)
	sort.Slice(cs, func(i, j int) bool { return bytes.Compare(cs[i].Hash[:], cs[j].Hash[:]) < 0 })
	for i := 1; i < len(cs); i++ {
		if cs[i].Hash == cs[i-1].Hash {
			return nil, fmt.Errorf("commit-graph: commit %s twice", cs[i].Hash)
		}
	}
	baseN := 0
	if base != nil {
		baseN = base.Len()
	}
	pos := make(map[plumbing.Hash]int, len(cs))
	for i, c := range cs {
		pos[c.Hash] = baseN + i
	}
	parentPos := func(h plumbing.Hash) (int, bool) {
		if p, ok := pos[h]; ok {
			return p, true
		}
		if base != nil {
			if p, ok := base.Find(h); ok {
				return int(p), true
			}
		}
		return 0, false
	}
	// Levels and corrected dates, parents before children (an explicit
	// stack: histories are deep).
	level := make([]uint32, len(cs))
	gen := make([]int64, len(cs))
	state := make([]uint8, len(cs)) // 0 not seen, 1 parents pending, 2 done
	parentVals := func(p int) (uint32, int64) {
		if p >= baseN {
			return level[p-baseN], gen[p-baseN]
		}
		d := base.Commit(uint32(p))
		return d.Level, d.Generation
	}
	for start := range cs {
		stack := []int{start}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			switch state[i] {
			case 2:
				stack = stack[:len(stack)-1]
				continue
			case 0:
				state[i] = 1
				for _, ph := range cs[i].Parents {
					p, ok := parentPos(ph)
					if !ok {
						return nil, fmt.Errorf("%w: %s of %s", ErrMissingParent, ph, cs[i].Hash)
					}
					if p < baseN {
						continue
					}
					switch state[p-baseN] {
					case 0:
						stack = append(stack, p-baseN)
					case 1:
						return nil, fmt.Errorf("commit-graph: %s is its own ancestor", cs[i].Hash)
					}
				}
				continue
			}
			// compute_generation_numbers: a level one above the highest
			// parent's; a corrected date one above the parents' and at
			// least the commit's own date.
			var lv uint32
			var g int64
			for _, ph := range cs[i].Parents {
				p, _ := parentPos(ph)
				pl, pg := parentVals(p)
				lv, g = max(lv, pl), max(g, pg)
			}
			level[i] = min(lv+1, maxTopoLevel)
			if t := cs[i].Time; t != 0 && t-1 > g {
				g = t - 1
			}
			gen[i] = g + 1
			state[i] = 2
			stack = stack[:len(stack)-1]
		}
	}

	var fanout, oids, data, gdat, gover, edges, bidx, bdat []byte
	fanout = make([]byte, 256*4)
	n := 0
	for b := 0; b < 256; b++ {
		for n < len(cs) && int(cs[n].Hash[0]) <= b {
			n++
		}
		binary.BigEndian.PutUint32(fanout[b*4:], uint32(n))
	}
	oids = make([]byte, 0, len(cs)*hashLen)
	data = make([]byte, 0, len(cs)*(hashLen+16))
	gdat = make([]byte, 0, len(cs)*4)
	var nEdges uint32
	var bloomTotal uint32
	for i, c := range cs {
		oids = append(oids, c.Hash[:]...)
		data = append(data, c.Tree[:]...)
		edge := func(k int) uint32 {
			p, _ := parentPos(c.Parents[k])
			return uint32(p)
		}
		switch len(c.Parents) {
		case 0:
			data = binary.BigEndian.AppendUint32(data, parentNone)
			data = binary.BigEndian.AppendUint32(data, parentNone)
		case 1:
			data = binary.BigEndian.AppendUint32(data, edge(0))
			data = binary.BigEndian.AppendUint32(data, parentNone)
		case 2:
			data = binary.BigEndian.AppendUint32(data, edge(0))
			data = binary.BigEndian.AppendUint32(data, edge(1))
		default:
			data = binary.BigEndian.AppendUint32(data, edge(0))
			data = binary.BigEndian.AppendUint32(data, edgesNeeded|nEdges)
			for k := 1; k < len(c.Parents); k++ {
				v := edge(k)
				if k == len(c.Parents)-1 {
					v |= lastEdge
				}
				edges = binary.BigEndian.AppendUint32(edges, v)
				nEdges++
			}
		}
		t := uint64(c.Time)
		data = binary.BigEndian.AppendUint32(data, level[i]<<2|uint32(t>>32)&3)
		data = binary.BigEndian.AppendUint32(data, uint32(t))
		off := uint64(gen[i] - c.Time)
		if off > maxGenOffset {
			gdat = binary.BigEndian.AppendUint32(gdat, overflowBit|uint32(len(gover)/8))
			gover = binary.BigEndian.AppendUint64(gover, off)
		} else {
			gdat = binary.BigEndian.AppendUint32(gdat, uint32(off))
		}
		if bloom {
			f := c.Filter
			if f == nil {
				f = []byte{0xff}
			}
			bloomTotal += uint32(len(f))
			bidx = binary.BigEndian.AppendUint32(bidx, bloomTotal)
			bdat = append(bdat, f...)
		}
	}
	type chunk struct {
		id   uint32
		data []byte
	}
	chunks := []chunk{{chunkFanout, fanout}, {chunkLookup, oids}, {chunkData, data}, {chunkGenData, gdat}}
	if len(gover) > 0 {
		chunks = append(chunks, chunk{chunkGenOver, gover})
	}
	if len(edges) > 0 {
		chunks = append(chunks, chunk{chunkEdges, edges})
	}
	if bloom {
		hdr := binary.BigEndian.AppendUint32(nil, BloomHashVersion)
		hdr = binary.BigEndian.AppendUint32(hdr, BloomHashes)
		hdr = binary.BigEndian.AppendUint32(hdr, BloomBitsPerEntry)
		chunks = append(chunks, chunk{chunkBloomIdx, bidx}, chunk{chunkBloomData, append(hdr, bdat...)})
	}
	layers := 0
	if base != nil {
		var b []byte
		for _, g := range base.layers() {
			b = append(b, g.sum[:]...)
			layers++
		}
		chunks = append(chunks, chunk{chunkBase, b})
	}
	out := make([]byte, 0, 8+(len(chunks)+1)*12+len(fanout)+len(oids)+len(data)+len(gdat)+len(bdat)+len(bidx)+64)
	out = binary.BigEndian.AppendUint32(out, signature)
	out = append(out, 1, 1, byte(len(chunks)), byte(layers))
	off := uint64(8 + (len(chunks)+1)*12)
	for _, c := range chunks {
		out = binary.BigEndian.AppendUint32(out, c.id)
		out = binary.BigEndian.AppendUint64(out, off)
		off += uint64(len(c.data))
	}
	out = binary.BigEndian.AppendUint32(out, 0)
	out = binary.BigEndian.AppendUint64(out, off)
	for _, c := range chunks {
		out = append(out, c.data...)
	}
	sum := sha1.Sum(out)
	return append(out, sum[:]...), nil
}
