package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbeddingHostWithoutHooks builds a program that embeds the kernel
// and calls neither shell.ServeExecIfRequested nor
// sandbox.ServeWorkerIfRequested (testdata/embedhost), then has it run the
// shell tool (a Landlock helper child where the kernel supports it) and
// exec_tool under process isolation (worker children). Both children are
// this program re-executed: they must be served before the host's main
// runs, so main runs exactly once and both calls work. Before, each child
// ran the host's main again (which could push a commit) and the shell call
// hung for its whole timeout.
func TestEmbeddingHostWithoutHooks(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "embedhost")
	marker := filepath.Join(dir, "main-runs.txt")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.marker="+marker, "./testdata/embedhost")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the host: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "EMBED_ROOT=" + root}
	out, err := cmd.Output()
	runs, _ := os.ReadFile(marker)
	if n := strings.Count(string(runs), "main ran"); n != 1 {
		t.Fatalf("the host's main ran %d times (children re-ran it):\n%s", n, runs)
	}
	if err != nil {
		t.Fatalf("host: %v\n%s", err, out)
	}
	var res map[string]struct {
		Value   json.RawMessage `json:"value"`
		Error   string          `json:"error"`
		Seconds float64         `json:"seconds"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("host output %q: %v", out, err)
	}
	for _, name := range []string{"write", "shell", "exec"} {
		if res[name].Error != "" {
			t.Errorf("%s: %s", name, res[name].Error)
		}
	}
	if !strings.Contains(string(res["shell"].Value), "add.ts") {
		t.Errorf("shell ls tools: %s", res["shell"].Value)
	}
	if !strings.Contains(string(res["exec"].Value), `"result":3`) {
		t.Errorf("exec_tool: %s", res["exec"].Value)
	}
}
