// Package registry is TGP's tool index, meta.json: each agent tool under
// tools/ with its name, the description from its leading JSDoc and its git
// blob hash. It is derived data: rebuilt from the tree whenever it is
// missing or stale, and regenerated (never merged textually) after a merge.
//
// meta.json does not record the commit that last changed each tool: it is
// committed with the change it describes, and a commit cannot contain its
// own hash. The blob hash names the content; the commit is computed from
// the history when asked (toolbox.Box.Provenance, find_tools' commit).
//
// Find ranks tools with BM25 over name, path and description tokens so an
// agent can reuse before forging. It is hand-written (about a hundred lines)
// because the corpus is a few thousand short documents held in memory and
// the Go full-text libraries (bleve, etc.) bring an index on disk and many
// dependencies for no gain here.
package registry

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// FileName is the registry's path at the repository root.
const FileName = "meta.json"

// ToolsDir holds the agent tools.
const ToolsDir = "tools"

// NoDescription is used when a tool has no leading JSDoc (as in TGP).
const NoDescription = "No description provided."

// Entry describes one tool.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
	Hash        string `json:"hash"`
}

// file is meta.json's shape, TGP's {"tools": {...}} plus hashes.
type file struct {
	Tools map[string]Entry `json:"tools"`
}

// Source is what the registry reads: the jailed VFS implements it.
type Source interface {
	ReadFile(path string) ([]byte, error)
	Walk(p string, fn func(rel string, info fs.FileInfo, err error) error) error
}

// Registry is the in-memory index. It is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]Entry
	index   *bm25 // rebuilt lazily after changes
}

// New returns an empty registry.
func New() *Registry { return &Registry{entries: map[string]Entry{}} }

// IsTool reports whether a path (relative to the root) is an agent tool.
func IsTool(p string) bool {
	if !strings.HasPrefix(p, ToolsDir+"/") || strings.Contains(p, "/node_modules/") {
		return false
	}
	base := path.Base(p)
	if strings.HasSuffix(base, ".d.ts") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") {
		return false
	}
	return strings.HasSuffix(base, ".ts") || strings.HasSuffix(base, ".js")
}

// BlobHash is the git blob SHA-1 of content (`git hash-object`).
func BlobHash(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// EntryFor computes a tool's entry from its content.
func EntryFor(p string, content []byte) Entry {
	return entryWithHash(p, content, BlobHash(content))
}

func entryWithHash(p string, content []byte, hash string) Entry {
	base := path.Base(p)
	name := strings.TrimSuffix(base, path.Ext(base))
	return Entry{Name: name, Description: ExtractDescription(content), Path: p, Hash: hash}
}

// ToolPaths lists the tool files in src, sorted.
func ToolPaths(src Source) ([]string, error) {
	if d := openDisk(src); d != nil {
		d.close()
		return d.paths, nil
	}
	return walkToolPaths(src)
}

// openDisk lists the tools of a source on disk by descriptor (nil: not on
// disk, or the VFS must list them). The caller closes it.
func openDisk(src Source) *diskTools {
	if root := osRoot(src); root != "" {
		// A root whose files are written on demand (vfs.FS.WithFill)
		// writes its tools before they are read from the disk here; on
		// failure the walk through the source reports it.
		if f, ok := src.(interface{ Fill(string) error }); ok && f.Fill(ToolsDir) != nil {
			return nil
		}
		if d, ok := listDiskTools(root); ok {
			return d
		}
	}
	return nil
}

// walkToolPaths is ToolPaths through the source's Walk.
func walkToolPaths(src Source) ([]string, error) {
	var out []string
	err := src.Walk(ToolsDir, func(rel string, info fs.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if info.IsDir() {
			if info.Name() == "node_modules" || info.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if info.Mode().IsRegular() && IsTool(rel) {
			out = append(out, rel)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(out)
	return out, err
}

// Build indexes every tool in src.
func Build(src Source) (*Registry, error) {
	if d := openDisk(src); d != nil {
		defer d.close()
		return buildFrom(src, d, d.paths, nil)
	}
	paths, err := walkToolPaths(src)
	if err != nil {
		return nil, fmt.Errorf("registry: list tools: %w", err)
	}
	return build(src, paths, nil)
}

// buildFrom is build reading the files by descriptor when d (a listing of
// paths on disk) is not nil.
func buildFrom(src Source, d *diskTools, paths []string, hashes map[string]string) (*Registry, error) {
	if d != nil {
		if data, ok := d.readAll(); ok {
			r := New()
			for i, p := range paths {
				if h, ok := hashes[p]; ok {
					r.entries[p] = entryWithHash(p, data[i], h)
				} else {
					r.entries[p] = EntryFor(p, data[i])
				}
			}
			return r, nil
		}
	}
	return build(src, paths, hashes)
}

// buildWorkers is how many tool files build reads at once (a file read
// through the jail waits on the filesystem more than on a CPU).
const buildWorkers = 4

// build indexes the tools at paths, reading them on buildWorkers
// goroutines (src is safe for concurrent use: the VFS is). A hash in
// hashes is taken as the file's blob hash instead of hashing it again.
func build(src Source, paths []string, hashes map[string]string) (*Registry, error) {
	entries := make([]Entry, len(paths))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(buildWorkers, len(paths)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) {
					return
				}
				p := paths[i]
				b, err := src.ReadFile(p)
				if err != nil {
					errs[i] = fmt.Errorf("registry: read %s: %w", p, err)
					continue
				}
				if h, ok := hashes[p]; ok {
					entries[i] = entryWithHash(p, b, h)
				} else {
					entries[i] = EntryFor(p, b)
				}
			}
		}()
	}
	wg.Wait()
	r := New()
	for i, p := range paths {
		if errs[i] != nil {
			return nil, errs[i]
		}
		r.entries[p] = entries[i]
	}
	return r, nil
}

// Load reads meta.json and checks it against the tree. hashes, when not
// nil, maps each tool path to its blob hash as git knows it (the kernel
// takes it from the index, so boot reads no tool file); when nil the files
// are hashed. A missing, corrupt or stale registry is rebuilt in memory and
// stale is true: the caller writes it with the next change, never at boot.
func Load(src Source, hashes map[string]string) (reg *Registry, stale bool, err error) {
	data, rerr := src.ReadFile(FileName)
	var f file
	if rerr == nil {
		if jerr := json.Unmarshal(data, &f); jerr != nil {
			f.Tools = nil
		}
	}
	d := openDisk(src)
	var paths []string
	if d != nil {
		defer d.close()
		paths = d.paths
	} else if paths, err = walkToolPaths(src); err != nil {
		return nil, false, fmt.Errorf("registry: list tools: %w", err)
	}
	if rerr != nil || f.Tools == nil || len(f.Tools) != len(paths) {
		r, err := buildFrom(src, d, paths, hashes)
		return r, true, err
	}
	r := New()
	for _, p := range paths {
		e, ok := f.Tools[p]
		if !ok {
			r, err := buildFrom(src, d, paths, hashes)
			return r, true, err
		}
		h, known := hashes[p]
		if !known {
			b, err := src.ReadFile(p)
			if err != nil {
				return nil, false, fmt.Errorf("registry: read %s: %w", p, err)
			}
			h = BlobHash(b)
		}
		if h != e.Hash {
			b, err := src.ReadFile(p)
			if err != nil {
				return nil, false, fmt.Errorf("registry: read %s: %w", p, err)
			}
			e, stale = EntryFor(p, b), true
		}
		e.Path = p
		r.entries[p] = e
	}
	return r, stale, nil
}

// Parse reads meta.json's content as it is, checking nothing against the
// tools (Load does): an entry's path is its key.
func Parse(data []byte) (*Registry, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("registry: parse %s: %w", FileName, err)
	}
	if f.Tools == nil {
		return nil, fmt.Errorf("registry: parse %s: no \"tools\" object", FileName)
	}
	r := New()
	for p, e := range f.Tools {
		e.Path = p
		r.entries[p] = e
	}
	return r, nil
}

// Update records a tool's new content; non-tool paths are ignored. It
// reports whether the registry changed.
func (r *Registry) Update(p string, content []byte) bool {
	if !IsTool(p) {
		return false
	}
	e := EntryFor(p, content)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.entries[p]; ok && old == e {
		return false
	}
	r.entries[p] = e
	r.index = nil
	return true
}

// Remove forgets a deleted tool and reports whether it was known.
func (r *Registry) Remove(p string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[p]; !ok {
		return false
	}
	delete(r.entries, p)
	r.index = nil
	return true
}

// Len is the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Entries returns the tools sorted by path.
func (r *Registry) Entries() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Get returns one tool's entry.
func (r *Registry) Get(p string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[p]
	return e, ok
}

// Marshal is meta.json's content: deterministic (sorted keys, two-space
// indent, trailing newline) so that equal registries are equal bytes.
func (r *Registry) Marshal() []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f := file{Tools: r.entries}
	if f.Tools == nil {
		f.Tools = map[string]Entry{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(f) // a map of strings cannot fail to encode
	return b.Bytes()
}

// ExtractDescription returns the leading JSDoc of a tool, cleaned like
// TGP does: the /** */ markers and leading asterisks removed, @tag lines
// dropped, lines joined with spaces. It looks at the top of the file
// (skipping other comments and a shebang), then at the comment right before
// the default export. NoDescription when there is none.
func ExtractDescription(src []byte) string {
	s := string(src)
	if d, ok := leadingJSDoc(s); ok {
		return d
	}
	for _, marker := range []string{"export default", "module.exports"} {
		i := strings.Index(s, marker)
		if i <= 0 {
			continue
		}
		before := strings.TrimRight(s[:i], " \t\r\n")
		if strings.HasSuffix(before, "*/") {
			// "/**/" is an empty plain comment, not a JSDoc: need room for both markers.
			if j := strings.LastIndex(before, "/**"); j >= 0 && len(before)-j >= 5 && !strings.Contains(before[j+3:len(before)-2], "*/") {
				if d := cleanJSDoc(before[j:]); d != "" {
					return d
				}
			}
		}
	}
	return NoDescription
}

func leadingJSDoc(s string) (string, bool) {
	if strings.HasPrefix(s, "#!") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			return "", false
		}
	}
	found := ""
	for {
		s = strings.TrimLeft(s, " \t\r\n\ufeff")
		switch {
		case strings.HasPrefix(s, "//"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return found, found != ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s[2:], "*/")
			if end < 0 {
				return found, found != ""
			}
			block := s[:end+4]
			if strings.HasPrefix(block, "/**") && len(block) > 4 {
				if d := cleanJSDoc(block); d != "" {
					found = d // the closest JSDoc to the code wins
				}
			}
			s = s[end+4:]
		default:
			return found, found != ""
		}
	}
}

func cleanJSDoc(c string) string {
	c = strings.TrimPrefix(c, "/**")
	c = strings.TrimSuffix(c, "*/")
	var parts []string
	for _, line := range strings.Split(c, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimPrefix(l, "*")
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "@") {
			continue
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}
