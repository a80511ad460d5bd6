package toolbox

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/vfs"
)

// TestSandboxFSJail: the bridge's filesystem refuses what the file tools
// refuse (outside the root, .git, '..' with BlockUpwardTraversal) as a
// violation matching fs.ErrPermission, and lists files without .git and
// node_modules.
func TestSandboxFSJail(t *testing.T) {
	for _, block := range []bool{false, true} {
		cfg := testConfig("")
		cfg.BlockUpwardTraversal = block
		r := buildRig(t, cfg, false)
		sfs := r.box.SandboxFS()
		for _, p := range []string{"../x", "/etc/passwd", ".git/config", "tools/../.git/HEAD"} {
			if err := sfs.WriteFile(p, []byte("x")); !errors.Is(err, fs.ErrPermission) || !errors.Is(err, vfs.ErrViolation) {
				t.Fatalf("block=%v write %q: %v", block, p, err)
			}
		}
		_, err := sfs.ReadFile("tools/../tools/a.ts")
		if block != (errors.Is(err, fs.ErrPermission)) {
			t.Fatalf("block=%v: tools/../tools/a.ts: %v", block, err)
		}
		for _, p := range []string{"tools/a.ts", "node_modules/m/index.js", "data/d.txt"} {
			if err := r.fs.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755); err != nil {
				t.Fatal(err)
			}
			if err := sfs.WriteFile(p, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		got, err := sfs.ListFiles(".")
		if err != nil || strings.Join(got, ",") != "data/d.txt,tools/a.ts" {
			t.Fatalf("block=%v: ListFiles = %v %v", block, got, err)
		}
	}
}
