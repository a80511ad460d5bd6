package commitgraph

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Graph is a parsed commit-graph file, possibly the top layer of a chain
// whose lower layers are base. Positions count from the lowest layer's
// first commit, as git numbers them.
type Graph struct {
	data  []byte
	sum   plumbing.Hash
	n     int
	base  *Graph
	baseN int // commits in the layers below

	fanout, oids, cdat, gdat, gover, edges, bidx, bdat int
	goverLen, edgesLen, bdatLen                        int
	bloomHashes, bloomBits                             uint32
}

// ErrCorrupt: a file that is not a commit-graph git would read.
var ErrCorrupt = errors.New("commit-graph: corrupt")

// Parse reads a commit-graph file (on top of base, the layers below it
// in a chain, or nil). The bytes are kept, not copied.
func Parse(data []byte, base *Graph) (*Graph, error) {
	bad := func(why string) (*Graph, error) { return nil, fmt.Errorf("%w: %s", ErrCorrupt, why) }
	if len(data) < 8+12+hashLen || binary.BigEndian.Uint32(data) != signature {
		return bad("no signature")
	}
	if data[4] != 1 || data[5] != 1 {
		return bad(fmt.Sprintf("version %d, hash version %d", data[4], data[5]))
	}
	nChunks, nBase := int(data[6]), int(data[7])
	wantBase := 0
	if base != nil {
		wantBase = len(base.layers())
	}
	if nBase != wantBase {
		return bad(fmt.Sprintf("%d base layers named, %d given", nBase, wantBase))
	}
	end := len(data) - hashLen
	g := &Graph{data: data, base: base, fanout: -1, oids: -1, cdat: -1, gdat: -1, gover: -1, edges: -1, bidx: -1, bdat: -1}
	copy(g.sum[:], data[end:])
	if base != nil {
		g.baseN = base.Len()
	}
	toc := 8
	if toc+(nChunks+1)*12 > end {
		return bad("chunk table past the end")
	}
	var baseChunk []byte
	for i := 0; i < nChunks; i++ {
		id := binary.BigEndian.Uint32(data[toc+i*12:])
		off := binary.BigEndian.Uint64(data[toc+i*12+4:])
		next := binary.BigEndian.Uint64(data[toc+(i+1)*12+4:])
		if off > next || next > uint64(end) {
			return bad("chunk offsets out of order")
		}
		o, l := int(off), int(next-off)
		switch id {
		case chunkFanout:
			if l != 256*4 {
				return bad("fan-out size")
			}
			g.fanout = o
		case chunkLookup:
			g.oids = o
			g.n = l / hashLen
		case chunkData:
			g.cdat = o
		case chunkGenData:
			g.gdat = o
		case chunkGenOver:
			g.gover, g.goverLen = o, l
		case chunkEdges:
			g.edges, g.edgesLen = o, l
		case chunkBloomIdx:
			g.bidx = o
		case chunkBloomData:
			if l < 12 {
				return bad("bloom data header")
			}
			v := binary.BigEndian.Uint32(data[o:])
			g.bloomHashes = binary.BigEndian.Uint32(data[o+4:])
			g.bloomBits = binary.BigEndian.Uint32(data[o+8:])
			if v == BloomHashVersion && g.bloomHashes > 0 && g.bloomHashes <= 32 && g.bloomBits > 0 {
				g.bdat, g.bdatLen = o+12, l-12
			}
		case chunkBase:
			baseChunk = data[o : o+l]
		}
	}
	if g.fanout < 0 || g.oids < 0 || g.cdat < 0 {
		return bad("a required chunk is missing")
	}
	if int(binary.BigEndian.Uint32(data[g.fanout+255*4:])) != g.n {
		return bad("fan-out and lookup disagree")
	}
	if g.cdat+g.n*(hashLen+16) > end || (g.gdat >= 0 && g.gdat+g.n*4 > end) || (g.bidx >= 0 && g.bidx+g.n*4 > end) {
		return bad("a chunk is too short")
	}
	if g.bidx < 0 {
		g.bdat = -1
	}
	if g.bdat >= 0 && g.n > 0 && int(binary.BigEndian.Uint32(data[g.bidx+(g.n-1)*4:])) > g.bdatLen {
		g.bdat = -1 // filters past their chunk: not used
	}
	if base != nil {
		ls := base.layers()
		if len(baseChunk) != len(ls)*hashLen {
			return bad("base chunk")
		}
		for i, l := range ls {
			if !bytes.Equal(baseChunk[i*hashLen:(i+1)*hashLen], l.sum[:]) {
				return bad("base chunk names another layer")
			}
		}
	}
	return g, nil
}

// Verify checks the file's trailing checksum.
func (g *Graph) Verify() error {
	for _, l := range g.layers() {
		end := len(l.data) - hashLen
		if sha1.Sum(l.data[:end]) != l.sum {
			return fmt.Errorf("%w: checksum", ErrCorrupt)
		}
	}
	return nil
}

// layers lists the layers, lowest first.
func (g *Graph) layers() []*Graph {
	if g == nil {
		return nil
	}
	return append(g.base.layers(), g)
}

// Len is the number of commits in the graph, all layers.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return g.baseN + g.n
}

// Sum is the layer's checksum (its name in a chain).
func (g *Graph) Sum() plumbing.Hash { return g.sum }

// Base is the layers below (nil for a single file or the lowest layer).
func (g *Graph) Base() *Graph { return g.base }

// Layers is the number of layers.
func (g *Graph) Layers() int { return len(g.layers()) }

// LayerList lists the layers, lowest first (each a Graph of itself and
// the layers below it).
func (g *Graph) LayerList() []*Graph { return g.layers() }

// Own is the number of commits in the layer itself.
func (g *Graph) Own() int { return g.n }

// OwnCommits lists the layer's own commits (not its bases'), in its
// order, parents as hashes; Filter is a copy of the commit's filter, nil
// when the layer has none git's version 1 settings read.
func (g *Graph) OwnCommits() []Commit {
	out := make([]Commit, g.n)
	bloom := g.bdat >= 0 && g.bloomHashes == BloomHashes && g.bloomBits == BloomBitsPerEntry
	for i := range out {
		pos := uint32(g.baseN + i)
		d := g.Commit(pos)
		c := Commit{Hash: g.Hash(pos), Tree: d.Tree, Time: d.Time}
		for _, p := range d.Parents {
			c.Parents = append(c.Parents, g.Hash(p))
		}
		if bloom {
			if f := g.Filter(pos); f != nil {
				c.Filter = bytes.Clone(f)
			}
		}
		out[i] = c
	}
	return out
}

// Bytes is the layer's file.
func (g *Graph) Bytes() []byte { return g.data }

// Find is h's position.
func (g *Graph) Find(h plumbing.Hash) (uint32, bool) {
	for l := g; l != nil; l = l.base {
		lo := 0
		if h[0] > 0 {
			lo = int(binary.BigEndian.Uint32(l.data[l.fanout+(int(h[0])-1)*4:]))
		}
		hi := int(binary.BigEndian.Uint32(l.data[l.fanout+int(h[0])*4:]))
		if hi > l.n {
			hi = l.n
		}
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			switch c := bytes.Compare(l.data[l.oids+m*hashLen:l.oids+(m+1)*hashLen], h[:]); {
			case c == 0:
				return uint32(l.baseN + m), true
			case c < 0:
				lo = m + 1
			default:
				hi = m
			}
		}
	}
	return 0, false
}

// layerOf is the layer holding position pos and the index within it.
func (g *Graph) layerOf(pos uint32) (*Graph, int) {
	l := g
	for l != nil && int(pos) < l.baseN {
		l = l.base
	}
	if l == nil || int(pos)-l.baseN >= l.n {
		return nil, 0
	}
	return l, int(pos) - l.baseN
}

// Hash is the commit at pos.
func (g *Graph) Hash(pos uint32) plumbing.Hash {
	var h plumbing.Hash
	if l, i := g.layerOf(pos); l != nil {
		copy(h[:], l.data[l.oids+i*hashLen:])
	}
	return h
}

// CommitData is what the graph knows of a commit.
type CommitData struct {
	Tree plumbing.Hash
	// Parents are positions in the graph.
	Parents []uint32
	Time    int64
	// Level is the topological level (generation number v1), Generation
	// the corrected commit date (v2; the level when the file has none).
	Level      uint32
	Generation int64
}

// Commit reads the commit at pos (a position Find returned).
func (g *Graph) Commit(pos uint32) CommitData {
	var d CommitData
	l, i := g.layerOf(pos)
	if l == nil {
		return d
	}
	b := l.data[l.cdat+i*(hashLen+16):]
	copy(d.Tree[:], b)
	p1, p2 := binary.BigEndian.Uint32(b[20:]), binary.BigEndian.Uint32(b[24:])
	if p1 != parentNone {
		d.Parents = append(d.Parents, p1)
	}
	switch {
	case p2 == parentNone:
	case p2&edgesNeeded == 0:
		d.Parents = append(d.Parents, p2)
	default:
		for e := int(p2 &^ edgesNeeded); l.edges >= 0 && (e+1)*4 <= l.edgesLen; e++ {
			v := binary.BigEndian.Uint32(l.data[l.edges+e*4:])
			d.Parents = append(d.Parents, v&^lastEdge)
			if v&lastEdge != 0 {
				break
			}
		}
	}
	hi, lo := binary.BigEndian.Uint32(b[28:]), binary.BigEndian.Uint32(b[32:])
	d.Time = int64(uint64(hi&3)<<32 | uint64(lo))
	d.Level = hi >> 2
	d.Generation = int64(d.Level)
	if l.gdat >= 0 {
		off := binary.BigEndian.Uint32(l.data[l.gdat+i*4:])
		if off&overflowBit != 0 {
			k := int(off &^ overflowBit)
			if l.gover >= 0 && (k+1)*8 <= l.goverLen {
				d.Generation = d.Time + int64(binary.BigEndian.Uint64(l.data[l.gover+k*8:]))
			}
		} else {
			d.Generation = d.Time + int64(off)
		}
	}
	return d
}

// Filter is the changed-path filter of the commit at pos (nil: none).
func (g *Graph) Filter(pos uint32) []byte {
	l, i := g.layerOf(pos)
	if l == nil || l.bdat < 0 {
		return nil
	}
	end := int(binary.BigEndian.Uint32(l.data[l.bidx+i*4:]))
	start := 0
	if i > 0 {
		start = int(binary.BigEndian.Uint32(l.data[l.bidx+(i-1)*4:]))
	}
	if start > end || end > l.bdatLen {
		return nil
	}
	return l.data[l.bdat+start : l.bdat+end]
}

// HasFilters reports whether every layer carries changed-path filters
// with the settings Key computes.
func (g *Graph) HasFilters() bool {
	for _, l := range g.layers() {
		if l.bdat < 0 || l.bloomHashes != BloomHashes || l.bloomBits != BloomBitsPerEntry {
			return false
		}
	}
	return g != nil
}

// MaybeChanged reports whether the commit at pos may have changed a path
// whose key is k (against its first parent): false only when its filter
// says for certain it did not.
func (g *Graph) MaybeChanged(pos uint32, k *Key) bool {
	f := g.Filter(pos)
	if len(f) == 0 {
		return true
	}
	return k.in(f)
}

// Paths of a commit-graph in a git directory's objects directory.
const (
	FileName  = "info/commit-graph"
	ChainDir  = "info/commit-graphs"
	ChainName = "info/commit-graphs/commit-graph-chain"
)

// Open reads the commit-graph of an objects directory as git does: the
// single file if there is one, else the chain. (nil, nil) when there is
// neither.
func Open(objects string) (*Graph, error) {
	data, err := os.ReadFile(filepath.Join(objects, FileName))
	if err == nil {
		return Parse(data, nil)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return OpenChain(objects)
}

// OpenChain reads the split commit-graph chain of an objects directory
// ((nil, nil) when there is none).
func OpenChain(objects string) (*Graph, error) {
	f, err := os.Open(filepath.Join(objects, ChainName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var g *Graph
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if !plumbing.IsHash(name) {
			return nil, fmt.Errorf("%w: chain names %q", ErrCorrupt, name)
		}
		data, err := os.ReadFile(filepath.Join(objects, ChainDir, "graph-"+name+".graph"))
		if err != nil {
			return nil, err
		}
		if g, err = Parse(data, g); err != nil {
			return nil, err
		}
		if g.sum.String() != name {
			return nil, fmt.Errorf("%w: layer %s has checksum %s", ErrCorrupt, name, g.sum)
		}
	}
	return g, sc.Err()
}
