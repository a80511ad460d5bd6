package shell

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMain makes the test binary the Landlock helper when it is started
// as one, the way the tgp binary serves `tgp __shellexec`.
func TestMain(m *testing.M) {
	ServeExecIfRequested()
	os.Exit(m.Run())
}

// testRoot is a root with a few files: tools/a.ts, notes/n.txt, docs/d.md.
func testRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range map[string]string{"tools/a.ts": "export default 1;\n", "notes/n.txt": "note\n", "docs/d.md": "# doc\nTODO one\n", ".git/config": "[core]\n"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newRunner(t testing.TB, root string, cfg Config, opts ...Option) *Runner {
	t.Helper()
	r, err := New(root, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runLine(t testing.TB, r *Runner, line string) (*Result, error) {
	t.Helper()
	return r.Run(context.Background(), Request{Command: line, Workdir: ".", Timeout: 20 * time.Second})
}
