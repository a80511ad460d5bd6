package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestManyKernelProcessesOneRemote: several `tgp call write_file`
// processes, each with its own root, write to one remote at once; every
// write lands exactly once, history stays linear, meta.json lists every
// tool, and `git fsck --strict` finds nothing.
func TestManyKernelProcessesOneRemote(t *testing.T) {
	remote := gittest.BareRemote(t)
	const procs, writes = 6, 3
	var wg sync.WaitGroup
	errs := make(chan error, procs*writes)
	for p := 0; p < procs; p++ {
		root := t.TempDir() // an empty root, cloned into by the first call
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for w := 0; w < writes; w++ {
				args, _ := json.Marshal(map[string]any{
					"path":    fmt.Sprintf("tools/p%d/t%d.ts", p, w),
					"content": fmt.Sprintf("/** Tool %d of process %d. */\nexport default () => '%d';\n", w, p, p*100+w),
				})
				cmd := exec.Command(tgpBin, "call", "write_file", string(args), "--root", root)
				cmd.Env = kernelEnv(remote)
				out, err := cmd.Output()
				var r map[string]any
				if jerr := json.Unmarshal(out, &r); err != nil || jerr != nil || r["ok"] != true {
					errs <- fmt.Errorf("process %d write %d: %v %s", p, w, err, out)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files := strings.Fields(gittest.Git(t, remote, "ls-tree", "-r", "--name-only", "main", "tools"))
	if len(files) != procs*writes {
		t.Fatalf("%d tool files on the remote, want %d: %v", len(files), procs*writes, files)
	}
	meta := gittest.Git(t, remote, "show", "main:meta.json")
	for _, f := range files {
		if !strings.Contains(meta, f) {
			t.Errorf("meta.json does not list %s", f)
		}
	}
	if merges := gittest.Git(t, remote, "rev-list", "--merges", "main"); merges != "" {
		t.Errorf("history is not linear: merges %s", merges)
	}
	gittest.Git(t, remote, "fsck", "--strict")
}
