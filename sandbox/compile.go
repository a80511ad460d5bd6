package sandbox

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	pathpkg "path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// Compiled is a tool compiled to a goja program.
type Compiled struct {
	Path string
	// JS is esbuild's CommonJS output (with its inline source map).
	JS   string
	prog *goja.Program
	// perms is the tool's permissions export (ParsePermissions), read
	// once per content; permsErr, why it could not be read.
	perms    *Permissions
	permsErr error
}

// CompileError is a syntax or transform error at a TS position.
type CompileError struct {
	Path    string
	Line    int
	Column  int
	Message string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Message)
}

// moduleWrapper turns CommonJS into a function of the module variables.
// The prefix stays on the first line so the source map's lines still match.
const wrapperPrefix = "(function (exports, require, module, __filename, __dirname) {"

type programCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[[32]byte]*list.Element
}

type cacheEntry struct {
	key [32]byte
	c   *Compiled
}

func newProgramCache(max int) *programCache {
	return &programCache{max: max, ll: list.New(), items: map[[32]byte]*list.Element{}}
}

func (pc *programCache) get(k [32]byte) (*Compiled, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if e, ok := pc.items[k]; ok {
		pc.ll.MoveToFront(e)
		return e.Value.(*cacheEntry).c, true
	}
	return nil, false
}

func (pc *programCache) put(k [32]byte, c *Compiled) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if e, ok := pc.items[k]; ok {
		pc.ll.MoveToFront(e)
		return
	}
	pc.items[k] = pc.ll.PushFront(&cacheEntry{key: k, c: c})
	for pc.ll.Len() > pc.max {
		last := pc.ll.Back()
		pc.ll.Remove(last)
		delete(pc.items, last.Value.(*cacheEntry).key)
	}
}

// Compile transforms and compiles a tool; the result is cached by path and
// content, so a changed file is recompiled.
func (r *Runner) Compile(path string, src []byte) (*Compiled, error) {
	h := sha256.New()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(src)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	if c, ok := r.cache.get(key); ok {
		return c, nil
	}
	// esbuild loops forever quoting invalid UTF-8 into the source map
	// (found by FuzzAnalyze): refuse it before esbuild sees it.
	if err := CheckUTF8(path, src); err != nil {
		return nil, err
	}
	loader := api.LoaderTS
	if strings.HasSuffix(path, ".js") {
		loader = api.LoaderJS
	}
	res := api.Transform(string(src), api.TransformOptions{
		Loader:    loader,
		Format:    api.FormatCommonJS,
		Target:    api.ES2022,
		Sourcemap: api.SourceMapInline,
		// The map's source is resolved against the program's directory.
		Sourcefile: pathpkg.Base(path),
		Supported:  map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
		LogLevel:   api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		ce := &CompileError{Path: path, Message: e.Text}
		if e.Location != nil {
			ce.Line, ce.Column = e.Location.Line, e.Location.Column+1
		}
		return nil, ce
	}
	js := string(res.Code)
	prog, err := compileJS(path, wrapperPrefix+js+"\n})")
	if err != nil {
		return nil, &CompileError{Path: path, Line: 1, Column: 1, Message: err.Error()}
	}
	c := &Compiled{Path: path, JS: js, prog: prog}
	c.perms, c.permsErr = permissionsFromJS(path, src, js)
	r.cache.put(key, c)
	return c, nil
}

// CheckUTF8 refuses source that is not valid UTF-8, with the position of
// the first bad byte (esbuild hangs on such input when it writes source maps).
func CheckUTF8(path string, src []byte) *CompileError {
	if utf8.Valid(src) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			return &CompileError{Path: path, Line: line, Column: col, Message: fmt.Sprintf("source is not valid UTF-8 (byte 0x%02x)", src[i])}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}
