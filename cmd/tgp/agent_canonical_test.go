package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// agentRun runs tgp agent with extra flags and returns the response and
// the stderr log.
func agentRun(t *testing.T, root, stdin string, flags ...string) (int, map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args := append([]string{"agent", "--root", root}, flags...)
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, []string{"HOME=" + t.TempDir()})
	var resp map[string]any
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("response is not JSON: %q (stderr %q)", out.String(), errb.String())
	}
	return code, resp, errb.String()
}

func gitRepo(t *testing.T, commits int) string {
	t.Helper()
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=A", "-c", "user.email=a@x"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for i := 0; i < commits; i++ {
		git("commit", "-q", "--allow-empty", "-m", "c"+itoa(i))
	}
	return root
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// The canonical GitAgentRequestV1 payload gets the answer the
// action-keyed payload gets.
func TestAgentCanonicalPayload(t *testing.T) {
	root := gitRepo(t, 7)
	pairs := []struct{ keyed, canon string }{
		{`{"request_id":"1","action":"git_log","payload":{"limit":5}}`, `{"request_id":"1","payload":{"command":{"type":"git_log","limit":5}}}`},
		{`{"request_id":"1","action":"git_log","payload":{"limit":"5"}}`, `{"request_id":"1","action":"git_log","payload":{"command":{"type":"git_log","limit":5}}}`},
		{`{"request_id":"1","action":"git_log","payload":{}}`, `{"request_id":"1","payload":{"command":{"type":"git_log"}}}`},
		{`{"request_id":"1","action":"git_status","payload":{}}`, `{"request_id":"1","payload":{"command":{"type":"git_status"}}}`},
		{`{"request_id":"1","action":"git_diff","payload":{"files":[]}}`, `{"request_id":"1","payload":{"command":{"type":"git_diff","files":[]}}}`},
	}
	for _, p := range pairs {
		c1, r1, _ := agentRun(t, root, p.keyed)
		c2, r2, _ := agentRun(t, root, p.canon)
		b1, _ := json.Marshal(r1)
		b2, _ := json.Marshal(r2)
		if c1 != 0 || c1 != c2 || string(b1) != string(b2) {
			t.Fatalf("%s\n%s\nkeyed %d %s\ncanon %d %s", p.keyed, p.canon, c1, b1, c2, b2)
		}
	}
	_, r, _ := agentRun(t, root, pairs[0].canon)
	if d := r["result"].(map[string]any)["data"].(string); strings.Count(d, "commit ") != 5 {
		t.Fatalf("git_log limit 5:\n%s", d)
	}
	for _, c := range []struct{ in, want string }{
		{`{"request_id":"1","payload":{"command":{"type":"git_push"}}}`, "not a GitAgentCommandV1 variant"},
		{`{"request_id":"1","action":"git_status","payload":{"command":{"type":"git_log"}}}`, "disagree"},
		{`{"request_id":"1","payload":{"command":{"type":"git_diff"}}}`, "git_diff needs files"},
		{`{"request_id":"1","payload":{"command":{"type":"git_commit"}}}`, "git_commit needs message"},
		{`{"request_id":"1","payload":{"command":{"type":"git_log","limit":"5"}}}`, "payload.command.limit"},
		{`{"request_id":"1","payload":{"command":{"type":"git_log","limit":-1}}}`, "payload.command.limit"},
	} {
		code, resp, _ := agentRun(t, root, c.in)
		if code != 1 || !strings.Contains(resp["result"].(map[string]any)["data"].(string), c.want) {
			t.Fatalf("%s: %d %v", c.in, code, resp)
		}
	}
	// A tool's own "command" argument is not the canonical form.
	if _, args, err := canonical("shell", json.RawMessage(`{"command":"ls"}`)); err != nil || string(args) != `{"command":"ls"}` {
		t.Fatalf("shell payload: %s %v", args, err)
	}
}

// --registry sqlite:PATH inserts git_agent's row, and updates it on the
// next start; each request logs one JSON line with the ids.
func TestAgentRegistryAndLogs(t *testing.T) {
	root := gitRepo(t, 1)
	dbPath := filepath.Join(t.TempDir(), "memory.db")
	req := `{"request_id":"r1","tool":"git_agent","action":"git_status","plan_id":"p1","task_id":"t1","correlation_id":"c1","payload":{}}`
	code, _, logs := agentRun(t, root, req, "--registry", "sqlite:"+dbPath)
	if code != 0 {
		t.Fatalf("agent: %d", code)
	}
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) != 1 {
		t.Fatalf("log lines: %q", logs)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatalf("log line %q: %v", lines[0], err)
	}
	for k, v := range map[string]any{"msg": "action", "agent": "git_agent", "request_id": "r1", "action": "git_status", "plan_id": "p1", "task_id": "t1", "correlation_id": "c1", "status": "success"} {
		if line[k] != v {
			t.Fatalf("log %s = %v, want %v: %s", k, line[k], v, lines[0])
		}
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func() (string, string, string, int) {
		var name, actions, updated string
		var n int
		if err := db.QueryRow(`SELECT name, actions, updated_at, (SELECT count(*) FROM tool_registry) FROM tool_registry WHERE name = 'git_agent'`).Scan(&name, &actions, &updated, &n); err != nil {
			t.Fatal(err)
		}
		return name, actions, updated, n
	}
	name, actions, first, n := read()
	if name != "git_agent" || actions != `["git_status","git_diff","git_log","git_add","git_commit"]` || n != 1 {
		t.Fatalf("row: %s %s %d", name, actions, n)
	}
	code, _, logs = agentRun(t, root, `{"request_id":"r2","action":"git_log","payload":{"limit":"x"}}`, "--registry", "sqlite:"+dbPath)
	if code != 1 || !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, `"plan_id":null`) {
		t.Fatalf("error log: %d %s", code, logs)
	}
	if _, _, again, n := read(); n != 1 || again <= first {
		t.Fatalf("second start: %d rows, updated %s after %s", n, again, first)
	}
	if code, _, _ := tgp(t, "", "agent", "--registry", "postgres://x"); code != 1 {
		t.Fatalf("bad --registry: exit %d", code)
	}
}
