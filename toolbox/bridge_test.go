package toolbox

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
)

// TestBridgeWritesArePersisted: files a tool writes with tgp.write_file
// (through Box.SandboxFS) are committed and pushed when exec_tool ends
// (through Box.Persist), a tool file among them
// enters meta.json, and the outcome reports the commit. A tool that fails
// after writing still gets its files persisted (they are in the root).
func TestBridgeWritesArePersisted(t *testing.T) {
	remote := gittest.BareRemote(t)
	for _, memory := range []bool{true, false} {
		k := newRig(t, testConfig(remote), memory)
		k.call(t, "write_file", map[string]string{"path": "tools/gen.ts", "content": "/** Writes a report and a new tool. */\n" +
			"export default (a: { n: number }) => {\n" +
			"  tgp.write_file('data/report.txt', 'n=' + a.n + '\\n');\n" +
			"  tgp.write_file('tools/made.ts', '/** Made by gen. */\\nexport default () => ' + a.n + ';\\n');\n" +
			"  if (a.n < 0) throw new Error('after writing');\n" +
			"  return 'ok';\n}\n"})
		for _, n := range []int{7, -1} {
			out := k.call(t, "exec_tool", map[string]any{"path": "tools/gen.ts", "args": map[string]any{"n": n}}).Value.(*sandbox.Outcome)
			per, ok := out.Persisted.(*tools.Persisted)
			if !ok || !per.Persisted || len(per.Commit) != 40 {
				raw, _ := json.Marshal(out)
				t.Fatalf("memory=%v n=%d: bridge writes not persisted: %s", memory, n, raw)
			}
			if got := gittest.Git(t, remote, "show", "main:data/report.txt"); got != "n="+itoa(n)+"\n" {
				t.Fatalf("remote data/report.txt = %q", got)
			}
			if got := gittest.Git(t, remote, "rev-parse", "main"); strings.TrimSpace(got) != per.Commit {
				t.Fatalf("remote main %s, outcome commit %s", got, per.Commit)
			}
			if meta := gittest.Git(t, remote, "show", "main:meta.json"); !strings.Contains(meta, "tools/made.ts") {
				t.Fatalf("meta.json lacks the tool the run wrote:\n%s", meta)
			}
		}
		// A run that writes nothing commits nothing.
		k.call(t, "write_file", map[string]string{"path": "tools/pure.ts", "content": "/** Pure. */\nexport default () => 1;\n"})
		head := gittest.Git(t, remote, "rev-parse", "main")
		out := k.call(t, "exec_tool", map[string]any{"path": "tools/pure.ts"}).Value.(*sandbox.Outcome)
		if out.Persisted != nil || gittest.Git(t, remote, "rev-parse", "main") != head {
			t.Fatalf("a run without writes persisted something: %+v", out.Persisted)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestConcurrentRunsReportTheirOwnWrites: two exec_tool calls at once each
// see their own file in the commit their outcome reports.
func TestConcurrentRunsReportTheirOwnWrites(t *testing.T) {
	remote := gittest.BareRemote(t)
	k := newRig(t, testConfig(remote), false)
	k.call(t, "write_file", map[string]string{"path": "tools/w.ts", "content": "/** Writes. */\n" +
		"const MS = 50;\nexport default (a: { name: string }) => { tgp.write_file('data/' + a.name + '.txt', a.name); const end = Date.now() + MS; while (Date.now() < end) {} return a.name; };\n"})
	var wg sync.WaitGroup
	outs := make([]*sandbox.Outcome, 2)
	for i, name := range []string{"one", "two"} {
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			res, err := k.try("exec_tool", map[string]any{"path": "tools/w.ts", "args": map[string]any{"name": name}})
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = res.Value.(*sandbox.Outcome)
		}(i, name)
	}
	wg.Wait()
	for i, name := range []string{"one", "two"} {
		per, ok := outs[i].Persisted.(*tools.Persisted)
		if !ok || !per.Persisted {
			t.Fatalf("%s: no persisted report: %+v", name, outs[i])
		}
		files := gittest.Git(t, remote, "ls-tree", "-r", "--name-only", per.Commit)
		if !strings.Contains(files, "data/"+name+".txt") {
			t.Fatalf("%s: the reported commit %s lacks data/%s.txt:\n%s", name, per.Commit, name, files)
		}
	}
}
