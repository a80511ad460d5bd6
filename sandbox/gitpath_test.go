package sandbox

import (
	"strings"
	"sync"
	"testing"
)

// mapFS is an FS with no rules of its own, so the bridge's checks are the
// only ones standing.
type mapFS struct {
	mu    sync.Mutex
	files map[string]string
}

func (m *mapFS) ReadFile(p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.files[p]
	if !ok {
		return nil, &notFound{p}
	}
	return []byte(c), nil
}

func (m *mapFS) ListFiles(dir string) ([]string, error) { return nil, nil }

func (m *mapFS) WriteFile(p string, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[p] = string(b)
	return nil
}

type notFound struct{ p string }

func (e *notFound) Error() string { return "no such file: " + e.p }

// tgp.write_file refuses, as a SecurityViolation carrying git's message,
// every path git would refuse to store, even inside an allowed directory
// and even when the FS behind the bridge would accept it.
func TestBridgeWriteRefusesGitPaths(t *testing.T) {
	r := New(WithWriteDirs("data"))
	for _, p := range []string{
		"data/.GIT/config", "data/git~1/config", "data/.git\u200c/config", "data/x/.Git/hooks/pre-commit",
		"data/.git./config", "data/.git::$INDEX_ALLOCATION/x", "data/a\\.git\\config", "data/.gitmodules/x",
		"./data/GIT~1/x", "data//.git/x",
	} {
		fsys := &mapFS{files: map[string]string{
			"tools/w.ts": "export default (a: any) => { try { tgp.write_file(a.p, 'x'); return 'written'; } catch (e: any) { return e.name + ': ' + e.message; } }",
			"tools/u.ts": "export default (a: any) => { tgp.write_file(a.p, 'x'); return 'written'; }",
		}}
		out := exec(t, r, fsys, "tools/w.ts", map[string]any{"p": p})
		got, _ := out.Result.(string)
		if !out.Success || !strings.HasPrefix(got, "SecurityViolation: ") || !strings.Contains(got, "invalid path '") {
			t.Fatalf("write_file(%q) caught: %+v %+v", p, out.Result, out.Error)
		}
		out = exec(t, r, fsys, "tools/u.ts", map[string]any{"p": p})
		if out.Success || out.Error == nil || out.Error.Kind != KindSecurity || !strings.Contains(out.Error.Message, "invalid path '") {
			t.Fatalf("write_file(%q) uncaught: %+v %+v", p, out.Result, out.Error)
		}
		if len(fsys.files) != 2 {
			t.Fatalf("write_file(%q) reached the FS: %v", p, fsys.files)
		}
	}
	// Ordinary names inside the allowed directory still work.
	fsys := &mapFS{files: map[string]string{"tools/u.ts": "export default (a: any) => { tgp.write_file(a.p, 'x'); return 'written'; }"}}
	for _, p := range []string{"data/.gitignore", "data/git~2", "data/.github/x.yml", "data/caf\u00e9.txt"} {
		if out := exec(t, r, fsys, "tools/u.ts", map[string]any{"p": p}); !out.Success {
			t.Fatalf("write_file(%q): %+v", p, out.Error)
		}
	}
}
