package integration

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/bench/fleet"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestFleetOverANetwork: 8 `tgp call` processes on 2 simulated machines
// (each its own HOME and cache directory), 20 ms round trips to the
// remote, over git:// and smart HTTP: no call fails, every write is on the
// remote, meta.json lists every tool, history is linear and fsck-clean.
func TestFleetOverANetwork(t *testing.T) {
	for _, tr := range []string{"git", "http"} {
		t.Run(tr, func(t *testing.T) {
			row := fleet.Run(t, fleet.Spec{Name: "ci", Transport: tr, Link: fleet.Link{Delay: 10 * time.Millisecond},
				Machines: 2, Agents: 4, Writes: 3, Mode: "proc", TgpBin: tgpBin, CallTimeout: 3 * time.Minute, Trace: tr == "git"})
			t.Logf("\n%s%s", fleet.Table([]fleet.Row{row}), fleet.Breakdown(row))
			if row.Failed != 0 || row.Missing != 0 {
				t.Fatalf("%d/%d calls failed, %d writes not on the remote: %v", row.Failed, row.Calls, row.Missing, row.Errors)
			}
			checkToolboxRemote(t, row.Server.Bare, row.Calls)
			if tr == "git" {
				checkPhases(t, row)
			}
		})
	}
}

// checkPhases: every call of a traced row exported its spans, and they
// say where its time went: a boot, a persist that waited in its machine's
// queue, and on each machine a call that took the turn and pushed.
func checkPhases(t *testing.T, row fleet.Row) {
	t.Helper()
	if len(row.Phases) != row.Calls {
		t.Fatalf("%d of %d calls exported spans", len(row.Phases), row.Calls)
	}
	led := 0
	for i, p := range row.Phases {
		if p.By["tgp.boot"] <= 0 || p.By["tgp.persist"] <= 0 || p.By["tgp.persist.queue"] <= 0 {
			t.Fatalf("call %d: no boot, persist or queue span: %v", i, p.By)
		}
		if p.By["tgp.persist"] > p.Latency || p.By["tgp.persist.queue"] > p.By["tgp.persist"] {
			t.Fatalf("call %d: spans outside their parents (latency %v): %v", i, p.Latency, p.By)
		}
		if p.Led {
			led++
			if p.Attempts < 1 || p.By["git.push"] <= 0 {
				t.Fatalf("call %d took its machine's turn but made no attempt or push: %d %v", i, p.Attempts, p.By)
			}
		}
	}
	if led < row.Machines {
		t.Fatalf("%d calls took a machine's turn; each of %d machines pushes at least once", led, row.Machines)
	}
}

// TestFleetSurvivesARemoteOutage: the remote goes away for 5 s in the
// middle of a run. Every call either succeeds or says which commits are
// pending; once the remote is back, booting each root (tgp status) pushes
// what was pending, and every write is on the remote.
func TestFleetSurvivesARemoteOutage(t *testing.T) {
	row := fleet.Run(t, fleet.Spec{Name: "outage", Transport: "git", Link: fleet.Link{Delay: 5 * time.Millisecond},
		Machines: 2, Agents: 2, Writes: 4, Mode: "proc", TgpBin: tgpBin, CallTimeout: 3 * time.Minute,
		Env:     []string{"TGP_GIT_RETRY_DEADLINE=3s"},
		PauseAt: 1500 * time.Millisecond, PauseFor: 5 * time.Second})
	t.Logf("\n%s", fleet.Table([]fleet.Row{row}))
	for _, e := range row.Errors {
		if !strings.Contains(e, "not on the remote yet") && !strings.Contains(e, "pending") {
			t.Errorf("a failed call does not say what is pending: %s", e)
		}
	}
	for _, a := range row.Members {
		cmd := exec.Command(tgpBin, "status", "--json", "--root", a.Root)
		// The remote is back: the pending pushes get the default budget,
		// not the 3 s the calls had to fail fast in the outage (a loaded
		// machine can take that long for a push that succeeds).
		cmd.Env = append(a.Env[:len(a.Env):len(a.Env)], "TGP_GIT_RETRY_DEADLINE=2m")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tgp status in %s: %v %s", a.Root, err, out)
		}
		var st struct {
			Pending int `json:"pending_pushes"`
		}
		if err := json.Unmarshal(out, &st); err != nil || st.Pending != 0 {
			t.Fatalf("tgp status after the outage: %s (%v)", out, err)
		}
	}
	checkToolboxRemote(t, row.Server.Bare, row.Calls)
}

// checkToolboxRemote checks the remote holds want tool files, listed in
// meta.json, with a linear history git fsck accepts and no carry left.
func checkToolboxRemote(t *testing.T, bare string, want int) {
	t.Helper()
	files := strings.Fields(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main", "tools"))
	if len(files) != want {
		t.Fatalf("%d tool files on the remote, want %d", len(files), want)
	}
	meta := gittest.Git(t, bare, "show", "main:meta.json")
	for _, f := range files {
		if !strings.Contains(meta, f) {
			t.Errorf("meta.json does not list %s", f)
		}
	}
	if merges := gittest.Git(t, bare, "rev-list", "--merges", "main"); merges != "" {
		t.Errorf("history is not linear: merges %s", merges)
	}
	// Nothing is left behind: a carry (a lost push's commits left for the
	// winner) is deleted by the push that lands it, or withdrawn by its
	// owner.
	if refs := strings.TrimSpace(gittest.Git(t, bare, "for-each-ref", "refs/tgp")); refs != "" {
		t.Errorf("refs left on the remote:\n%s", refs)
	}
	gittest.Git(t, bare, "fsck", "--strict")
}

// TestPendingCommitsAreListed: with the remote gone, a write says which
// commit is pending, and tgp status (booting offline) lists it; once the
// remote is back, the next boot pushes it.
func TestPendingCommitsAreListed(t *testing.T) {
	srv := fleet.NewServer(t, "git", fleet.Link{})
	root := t.TempDir() + "/root"
	env := append(kernelEnv(srv.URL), "XDG_CACHE_HOME="+t.TempDir())
	// deadline is git.retry.deadline: short while the remote is down, so
	// that a call gives up at once, and the default's size while it is up,
	// so that a loaded machine's slow push is not taken for an outage.
	deadline := "2m"
	call := func(args ...string) ([]byte, error) {
		cmd := exec.Command(tgpBin, append(args, "--root", root)...)
		cmd.Env = append(env[:len(env):len(env)], "TGP_GIT_RETRY_DEADLINE="+deadline)
		return cmd.Output()
	}
	if out, err := call("call", "write_file", `{"path":"tools/a.ts","content":"/** A. */\nexport default () => 1;\n"}`); err != nil {
		t.Fatalf("first write: %v %s", err, out)
	}
	up := srv.Proxy.Down()
	deadline = "1s"
	out, err := call("call", "write_file", `{"path":"tools/b.ts","content":"/** B. */\nexport default () => 2;\n"}`)
	if err == nil || !strings.Contains(string(out), "not on the remote yet") || !strings.Contains(string(out), "tools/b.ts") {
		t.Fatalf("write with the remote gone: %v %s", err, out)
	}
	out, err = call("status", "--json")
	if err != nil {
		t.Fatalf("status offline: %v %s", err, out)
	}
	var st struct {
		Pending int      `json:"pending_pushes"`
		Commits []string `json:"pending_commits"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Pending != 1 || len(st.Commits) != 1 || !strings.Contains(st.Commits[0], "tools/b.ts") {
		t.Fatalf("status does not list the pending commit: %s (%v)", out, err)
	}
	up()
	deadline = "2m"
	if out, err := call("status", "--json"); err != nil || !strings.Contains(string(out), `"pending_pushes":0`) {
		t.Fatalf("status once the remote is back: %v %s", err, out)
	}
	if files := gittest.Git(t, srv.Bare, "ls-tree", "-r", "--name-only", "main", "tools"); !strings.Contains(files, "tools/b.ts") {
		t.Fatalf("the pending commit did not reach the remote: %s", files)
	}
}
