package gitpath

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzVerify: Verify never panics, always answers with an
// *InvalidPathError naming the path, and whatever it accepts git's own
// verify_path accepts too (`git update-index --cacheinfo`, protectHFS and
// protectNTFS on). A symbolic link is held to more rules than a file, never
// fewer.
func FuzzVerify(f *testing.F) {
	for _, c := range verifyCases {
		f.Add(c.path, c.symlink)
	}
	for _, c := range genCases(7, 64) {
		f.Add(c.path, c.symlink)
	}
	o := newOracleF(f)
	blob := o.writeObject("blob", []byte("x\n"))
	idx := filepath.Join(o.dir, "fuzz-index")
	f.Fuzz(func(t *testing.T, p string, symlink bool) {
		err := Verify(p, symlink)
		if err != nil {
			var ipe *InvalidPathError
			if !errors.As(err, &ipe) || !errors.Is(err, ErrInvalidPath) || ipe.Path != p || ipe.Reason == "" {
				t.Fatalf("Verify(%q) = %#v", p, err)
			}
			if err.Error() != "invalid path '"+p+"'" {
				t.Fatalf("message %q", err.Error())
			}
			return
		}
		if symlink && Verify(p, false) != nil {
			t.Fatalf("%q: accepted as a symlink, refused as a file", p)
		}
		for _, comp := range strings.Split(p, "/") {
			if strings.EqualFold(comp, ".git") || comp == "." || comp == ".." || comp == "" {
				t.Fatalf("%q: accepted with component %q", p, comp)
			}
		}
		mode := "100644"
		if symlink {
			mode = "120000"
		}
		os.Remove(idx)
		cmd := exec.Command("git", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true",
			"update-index", "--add", "--cacheinfo", mode+","+blob+","+p)
		cmd.Dir = o.dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx, "GIT_CONFIG_NOSYSTEM=1", "HOME="+o.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("Verify accepts %q (symlink=%v), git refuses: %v\n%s", p, symlink, err, out)
		}
	})
}
