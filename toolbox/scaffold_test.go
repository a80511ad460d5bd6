package toolbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestScaffoldWritesEditorTypes: tgp init's scaffold writes
// the sandbox globals' and @tgp/std's declarations and a tsconfig for
// tools/; the declarations are valid TypeScript and are not tools.
func TestScaffoldWritesEditorTypes(t *testing.T) {
	root := t.TempDir()
	k := buildRig(t, testConfig(""), false, root).box
	created, err := k.Scaffold()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(created, ",") != "meta.json,tools/,tools/tgp-env.d.ts,tsconfig.json" {
		t.Fatalf("created %v", created)
	}
	dts, err := os.ReadFile(filepath.Join(root, "tools", "tgp-env.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	res := api.Transform(string(dts), api.TransformOptions{Loader: api.LoaderTS})
	if len(res.Errors) > 0 {
		t.Fatalf("tgp-env.d.ts does not parse: %v", res.Errors[0].Text)
	}
	for _, want := range []string{"read_file(path: string): string", "declare module \"@tgp/std\"", "exec_sql("} {
		if !strings.Contains(string(dts), want) {
			t.Fatalf("declarations lack %q", want)
		}
	}
	if err := k.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := k.Registry().Len(); n != 0 {
		t.Fatalf("the declarations were registered as %d tool(s)", n)
	}
	if again, _ := k.Scaffold(); len(again) != 0 {
		t.Fatalf("a second scaffold created %v", again)
	}
}

// TestScaffoldFilesStayOutOfGitStatus: in a git root the editor files are
// excluded locally, so agents' git_status is not cluttered by them.
func TestScaffoldFilesStayOutOfGitStatus(t *testing.T) {
	k := newRig(t, testConfig(gittest.BareRemote(t)), false)
	if _, err := k.box.Scaffold(); err != nil {
		t.Fatal(err)
	}
	st := k.call(t, "git_status", map[string]any{}).Value.(string)
	if strings.Contains(st, "tsconfig.json") || strings.Contains(st, "tgp-env.d.ts") {
		t.Fatalf("git_status shows the editor files:\n%s", st)
	}
	if out := gittest.Git(t, k.fs.Root(), "status", "--porcelain"); strings.Contains(out, "tsconfig.json") {
		t.Fatalf("git status shows them:\n%s", out)
	}
}

// The host's functions join tgp's members in tgp-env.d.ts; a file written
// before they changed is written again, one written by hand is not.
func TestScaffoldDeclaresHostFunctions(t *testing.T) {
	root := t.TempDir()
	if _, err := buildRig(t, testConfig(""), false, root).box.Scaffold(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig("")
	cfg.SandboxDecls = "  orders(arg: { customer: string }): number[] | null;\n"
	box := buildRig(t, cfg, false, root).box
	created, err := box.Scaffold()
	if err != nil || strings.Join(created, ",") != "tools/tgp-env.d.ts" {
		t.Fatalf("rescaffold: %v %v", created, err)
	}
	p := filepath.Join(root, "tools", "tgp-env.d.ts")
	dts, _ := os.ReadFile(p)
	if !strings.Contains(string(dts), "log(...values: unknown[]): void;\n  orders(arg: { customer: string }): number[] | null;\n};") {
		t.Fatalf("declarations:\n%s", dts)
	}
	if again, _ := box.Scaffold(); len(again) != 0 {
		t.Fatalf("a third scaffold wrote %v", again)
	}
	if err := os.WriteFile(p, []byte("// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := box.Scaffold(); len(again) != 0 {
		t.Fatalf("a hand-written file was replaced: %v", again)
	}
}
