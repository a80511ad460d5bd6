package registry

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tgp-go/tgp/vfs"
)

// TestDiskReadingMatchesVFS: on a root on disk, the tools listed and read
// by descriptor are the ones the VFS walk finds (links, node_modules, .git,
// declaration and test files left out), with the same entries.
func TestDiskReadingMatchesVFS(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"tools/math/add.ts":         "/** Add. */\nexport default 1;\n",
		"tools/math/deep/er/mul.js": "/** Mul. */\nmodule.exports = 2;\n",
		"tools/z.ts":                "export default 3;\n",
		"tools/types.d.ts":          "export type X = number;\n",
		"tools/a.test.ts":           "test\n",
		"tools/node_modules/x/a.js": "module.exports = 1;\n",
		"tools/.git/x.ts":           "no\n",
		"tools/sub/node_modules.ts": "/** A tool named so. */\nexport default 4;\n",
		"outside.ts":                "/** Not under tools. */\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(root, "outside.ts"), filepath.Join(root, "tools/link.ts"))
	os.Symlink(filepath.Join(root, "tools/math"), filepath.Join(root, "tools/linkdir"))
	f, err := vfs.NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	want, err := walkToolPaths(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToolPaths(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got) != 4 {
		t.Fatalf("tools %v, the VFS finds %v", got, want)
	}
	if d := openDisk(f); d == nil {
		t.Fatal("a root on disk is not read by descriptor")
	} else {
		d.close()
	}
	fast, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := build(f, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast.Entries(), slow.Entries()) {
		t.Fatalf("entries\n%v\nthe VFS reads\n%v", fast.Entries(), slow.Entries())
	}
	// No tools/ at all: nothing, no error.
	empty, _ := vfs.NewOS(t.TempDir())
	if p, err := ToolPaths(empty); err != nil || len(p) != 0 {
		t.Fatalf("no tools/: %v %v", p, err)
	}
	// tools/ a link: the VFS decides.
	other := t.TempDir()
	os.Symlink(filepath.Join(root, "tools"), filepath.Join(other, "tools"))
	lf, _ := vfs.NewOS(other)
	if d := openDisk(lf); d != nil {
		t.Fatal("a linked tools/ was read by descriptor")
	}
}

// TestDiskReadingFillsFirst: a root whose files are written on demand
// (vfs.FS.WithFill) is asked to write its tools before they are listed or
// read by descriptor, so a tool not yet written is found; a fill that
// fails is the listing's error.
func TestDiskReadingFillsFirst(t *testing.T) {
	root := t.TempDir()
	base, err := vfs.NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	view := base.WithFill(func(rel string) error {
		asked = append(asked, rel)
		if rel != "tools" && rel != "." {
			return nil
		}
		if err := os.MkdirAll(filepath.Join(root, "tools/a"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, "tools/a/x.ts"), []byte("/** X. */\nexport default 1;\n"), 0o644)
	})
	got, err := ToolPaths(view)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"tools/a/x.ts"}) || !reflect.DeepEqual(asked, []string{"tools"}) {
		t.Fatalf("tools %v (fill asked %q), want the one written on demand", got, asked)
	}
	reg, err := Build(view)
	if err != nil || reg.Len() != 1 {
		t.Fatalf("Build: %v, %v", reg, err)
	}
	boom := errors.New("boom")
	if _, err := ToolPaths(base.WithFill(func(string) error { return boom })); !errors.Is(err, boom) {
		t.Fatalf("a failing fill: %v", err)
	}
}
