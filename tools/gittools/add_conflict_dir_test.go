package gittools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegressAddBelowConflictedFile: git add of a file under a path whose
// conflict is still unresolved (the file replaced by a directory) adds
// it at stage 0 and keeps the conflict's stages: has_dir_name and
// has_file_name only look at entries of the new entry's stage
// (differential seed 700174: git_add resolved the conflict as a
// deletion).
func TestRegressAddBelowConflictedFile(t *testing.T) {
	f := newRepo(t)
	f.write(t, "c.bin", "base\n")
	f.commitAll(t, "base")
	f.git(t, "checkout", "-q", "-b", "side")
	f.write(t, "c.bin", "side\n")
	f.commitAll(t, "side")
	f.git(t, "checkout", "-q", "main")
	f.write(t, "c.bin", "main\n")
	f.commitAll(t, "main")
	_, _, _ = gitAt(t, f.dir, nil, "merge", "-q", "side")
	if err := os.Remove(filepath.Join(f.dir, "c.bin")); err != nil {
		t.Fatal(err)
	}
	f.write(t, "c.bin/util.txt", "u\n")
	f.write(t, "other.txt", "o\n")
	for _, paths := range [][]string{{"c.bin/util.txt"}, {"other.txt", "c.bin/util.txt"}} {
		args := []string{"add", "--"}
		twin(t, f.dir, "", "git_add", map[string]any{"paths": anySlice(paths)}, append(args, paths...)...)
	}
}
