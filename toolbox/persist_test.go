package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

func TestRegistryRegeneratedNotMerged(t *testing.T) {
	remote := gittest.BareRemote(t)
	const k = 4
	rigs := make([]*rig, k)
	for i := range rigs {
		rigs[i] = newRig(t, testConfig(remote), i%2 == 0)
	}
	var wg sync.WaitGroup
	for i, r := range rigs {
		wg.Add(1)
		go func(i int, r *rig) {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				_, err := r.try("write_file", map[string]string{"path": fmt.Sprintf("tools/t%d_%d.ts", i, j),
					"content": fmt.Sprintf("/** Tool %d %d. */\nexport default %d;\n", i, j, j)})
				if err != nil {
					t.Errorf("box %d: %v", i, err)
				}
			}
		}(i, r)
	}
	wg.Wait()
	var meta struct {
		Tools map[string]registry.Entry `json:"tools"`
	}
	if err := json.Unmarshal([]byte(gittest.Git(t, remote, "show", "main:meta.json")), &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Tools) != k*3 {
		t.Fatalf("meta.json on the remote has %d tools, want %d", len(meta.Tools), k*3)
	}
	// meta.json equals a registry built from the remote tree.
	clone := gittest.Clone(t, remote)
	fresh := newRig(t, testConfig(clone), false)
	if got := string(fresh.box.Registry().Marshal()); got != gittest.Git(t, remote, "show", "main:meta.json") {
		t.Fatalf("meta.json is not the registry of the tree:\n%s", got)
	}
}

// TestReplayUpdatesTheRegistryOnce: a persist that is replayed on
// another agent's commit updates the registry once, through the catalog
// (the repository's hook), from the paths the replay changed: no full
// rebuild, and the registry, meta.json in the root and on the remote
// agree.
func TestReplayUpdatesTheRegistryOnce(t *testing.T) {
	remote := gittest.BareRemote(t)
	for _, memory := range []bool{true, false} {
		a, b := newRig(t, testConfig(remote), memory), newRig(t, testConfig(remote), memory)
		a.write(t, fmt.Sprintf("tools/a_%v.ts", memory), "/** Made by a. */\nexport default 1;\n")
		builds := b.box.cat.builds.Load()
		per := b.write(t, fmt.Sprintf("tools/b_%v.ts", memory), "/** Made by b. */\nexport default 2;\n")
		if !per.Persisted || !strings.Contains(per.Note, "recreated on the new remote head") {
			t.Fatalf("memory=%v: not replayed: %+v", memory, per)
		}
		if n := b.box.cat.builds.Load() - builds; n != 0 {
			t.Fatalf("memory=%v: the registry was rebuilt %d time(s) after the replay", memory, n)
		}
		want := gittest.Git(t, remote, "show", "main:meta.json")
		if got := string(b.box.Registry().Marshal()); got != want {
			t.Fatalf("memory=%v: registry\n%s\nremote meta.json\n%s", memory, got, want)
		}
		if got, _ := b.fs.ReadFile(registry.FileName); string(got) != want {
			t.Fatalf("memory=%v: meta.json in the root\n%s", memory, got)
		}
		if len(b.box.Find("made by a", 5)) == 0 {
			t.Fatalf("memory=%v: b does not find a's tool after the replay", memory)
		}
	}
}

func TestConflictThroughTools(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"tools/rate.ts": "export const rate = 1;\n"})
	a, b := newRig(t, testConfig(remote), false), newRig(t, testConfig(remote), false)
	a.call(t, "patch_file", map[string]string{"path": "tools/rate.ts", "old_string": "= 1", "new_string": "= 2"})
	_, err := b.try("patch_file", map[string]string{"path": "tools/rate.ts", "old_string": "= 1", "new_string": "= 3"})
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindConflict || !strings.HasPrefix(te.Details["branch"].(string), "tgp/conflict/") {
		t.Fatalf("want conflict with branch, got %v", err)
	}
	// The root was reset to the remote's version, and the registry with it.
	if src, _ := b.fs.ReadFile("tools/rate.ts"); !strings.Contains(string(src), "= 2") {
		t.Fatalf("root after the conflict: %s", src)
	}
}

func TestNoRemoteWorksOnRootAsIs(t *testing.T) {
	r := newRig(t, Config{Git: testConfig("").Git}, false)
	if r.box.Repo() != nil {
		t.Fatal("a plain directory got a repository")
	}
	if p := r.write(t, "tools/a.ts", "/** A. */\nexport default 1;\n"); p.Persisted || !strings.Contains(p.Note, "no git repository") {
		t.Fatalf("%+v", p)
	}
	if _, err := r.fs.Stat("meta.json"); err != nil {
		t.Fatalf("meta.json not written with the first tool: %v", err)
	}
}

// TestBoxBeforeOpen: a Box is usable as the tools' Persister and Finder
// before Open (the kernel builds the tools before Boot): nothing to find,
// no repository, no refresh.
func TestBoxBeforeOpen(t *testing.T) {
	r := buildRig(t, testConfig(gittest.BareRemote(t)), true)
	if r.box.Repo() != nil || r.box.Registry() != nil || r.box.Branch() != "" {
		t.Fatal("state before Open")
	}
	if found := r.call(t, "find_tools", map[string]any{"query": "anything"}).Value.([]tools.FoundTool); len(found) != 0 {
		t.Fatalf("found %v", found)
	}
	if note := r.box.MaybeRefresh(context.Background()); note != "" {
		t.Fatalf("refresh before Open: %q", note)
	}
	if err := r.box.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.box.Repo() == nil || r.box.Branch() != "main" {
		t.Fatalf("after Open: repo %v, branch %q", r.box.Repo(), r.box.Branch())
	}
}
