package tools_test

import (
	"encoding/json"
	"testing"
)

// TestDeletingASymlinkDeletesTheLink: delete_file and
// apply_patch's Delete File remove the link itself, as git and every shell
// do, never its target; a dangling link can be deleted too.
func TestDeletingASymlinkDeletesTheLink(t *testing.T) {
	// Memory roots have no symlinks: the disk root only.
	func(t *testing.T, e *env) {
		e.write(t, "tools/target.ts", "keep me\n")
		for _, l := range []string{"tools/a.ts", "tools/b.ts"} {
			if err := e.fs.Symlink("target.ts", l); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.fs.Symlink("nowhere.ts", "tools/dangling.ts"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.call("delete_file", `{"path":"tools/a.ts"}`); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]string{"patch": "*** Begin Patch\n*** Delete File: tools/b.ts\n*** Delete File: tools/dangling.ts\n*** End Patch\n"})
		if _, err := e.call("apply_patch", string(raw)); err != nil {
			t.Fatal(err)
		}
		for _, gone := range []string{"tools/a.ts", "tools/b.ts", "tools/dangling.ts"} {
			if _, err := e.fs.Lstat(gone); err == nil {
				t.Fatalf("%s still exists", gone)
			}
		}
		if got := e.read(t, "tools/target.ts"); got != "keep me\n" {
			t.Fatalf("the target was touched: %q", got)
		}
		last := e.rec.changes[len(e.rec.changes)-1]
		if len(last.Paths) != 2 || last.Paths[0] != "tools/b.ts" {
			t.Fatalf("persisted %v, want the links", last.Paths)
		}
	}(t, newEnv(t, false))
}
