package toolbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestRefreshKeepsLocalEdits: a local uncommitted edit on a file the
// remote changed blocks the pull; the edit survives, the answer says it
// may be stale, the status says behind; a remote that cannot be reached
// does not fail the read.
func TestRefreshKeepsLocalEdits(t *testing.T) {
	remote := gittest.BareRemote(t)
	writer := newRig(t, testConfig(remote), false)
	writer.write(t, "tools/shared.ts", "/** Shared. */\nexport default () => 1;\n")
	k := newRig(t, testConfig(remote), false) // RefreshEvery 0: before every read
	local := "/** Shared, edited here. */\nexport default () => 2;\n"
	if err := os.WriteFile(filepath.Join(k.fs.Root(), "tools", "shared.ts"), []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	writer.write(t, "tools/shared.ts", "/** Shared, edited there. */\nexport default () => 3;\n")
	res := k.call(t, "read_file", map[string]any{"path": "tools/shared.ts"})
	if !strings.Contains(jsonOf(res.Value), "edited here") || !strings.Contains(res.Stale, "local edits") {
		t.Fatalf("local edit: %s (stale %q)", jsonOf(res.Value), res.Stale)
	}
	if st := k.box.RefreshStatus(); !st.Behind {
		t.Fatalf("status: %+v", st)
	}

	if err := os.Rename(remote, remote+".gone"); err != nil {
		t.Fatal(err)
	}
	res = k.call(t, "list_files", map[string]any{"dir": "tools"})
	if !strings.Contains(jsonOf(res.Value), "shared.ts") || !strings.Contains(res.Stale, "could not be checked") {
		t.Fatalf("remote down: %s (stale %q)", jsonOf(res.Value), res.Stale)
	}
	// A dead remote is not asked again on every read (interval 0): the
	// next read answers at once, still marked stale.
	before := k.box.RefreshStatus()
	res = k.call(t, "list_files", map[string]any{"dir": "tools"})
	after := k.box.RefreshStatus()
	if !after.LastCheck.Equal(before.LastCheck) || res.Stale == "" || after.Error == "" {
		t.Fatalf("a failed check was repeated at once: %v -> %v (stale %q)", before.LastCheck, after.LastCheck, res.Stale)
	}
}

// TestRefreshPullsAndReports: a refresh that brings in another agent's
// tool rebuilds the registry and tells OnRefresh which tools changed;
// RefreshOff never checks after Open; the pull-request strategy never
// refreshes.
func TestRefreshPullsAndReports(t *testing.T) {
	remote := gittest.BareRemote(t)
	writer := newRig(t, testConfig(remote), true)
	writer.write(t, "tools/seed.ts", "/** Seed. */\nexport default () => 0;\n")

	var mu sync.Mutex
	var events []RefreshEvent
	cfg := testConfig(remote)
	cfg.OnRefresh = []func(RefreshEvent){func(e RefreshEvent) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	every := newRig(t, cfg, true)
	off := testConfig(remote)
	off.RefreshOff = true
	never := newRig(t, off, true)
	pr := testConfig(remote)
	pr.Strategy = PullRequest
	prBox := newRig(t, pr, true)

	writer.write(t, "tools/fresh.ts", "/** Converts celsius to fahrenheit. */\nexport default (c: number) => c * 9 / 5 + 32;\n")
	find := func(r *rig) bool {
		return strings.Contains(jsonOf(r.call(t, "find_tools", map[string]any{"query": "celsius fahrenheit"}).Value), "tools/fresh.ts")
	}
	if !find(every) {
		t.Fatal("interval 0: find_tools did not see the tool pushed before the call")
	}
	mu.Lock()
	if len(events) != 1 || strings.Join(events[0].Tools, ",") != "tools/fresh.ts" {
		t.Fatalf("refresh events: %+v", events)
	}
	mu.Unlock()
	if find(never) || find(prBox) {
		t.Fatal("RefreshOff or the pull-request strategy refreshed")
	}
	if never.box.RefreshStatus().LastCheck.IsZero() {
		t.Fatal("status: Open's check not reported")
	}
}
