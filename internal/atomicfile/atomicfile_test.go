package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteReplacesAndKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.yaml")
	if err := Write(p, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two\n"), 0); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "two\n" {
		t.Fatalf("%q %v", got, err)
	}
	if info, _ := os.Stat(p); runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want the replaced file's 0600", info.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	if err := Write(filepath.Join(p, "no", "dir"), nil, 0); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
}
