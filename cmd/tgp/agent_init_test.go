package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func agentCall(t *testing.T, root, stdin string) (int, map[string]any) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"agent", "--root", root}, strings.NewReader(stdin), &out, &errb, []string{"HOME=" + t.TempDir()})
	var resp map[string]any
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("response is not JSON: %q (stderr %q)", out.String(), errb.String())
	}
	for _, k := range []string{"request_id", "api_version", "status", "code", "result", "error", "plan_id", "task_id", "correlation_id"} {
		if _, ok := resp[k]; !ok {
			t.Fatalf("response lacks %s: %v", k, resp)
		}
	}
	return code, resp
}

func TestAgentContract(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, resp := agentCall(t, root, `{"request_id":"f5e93cc3-5d6f-4e9e-88a2-2f10e1bf7a21","tool":"git_agent","action":"read_file","plan_id":"p1","task_id":"t1","correlation_id":"c1","payload":{"path":"a.txt"}}`)
	if code != 0 || resp["status"] != "success" || resp["code"].(float64) != 0 {
		t.Fatalf("%d %v", code, resp)
	}
	if resp["request_id"] != "f5e93cc3-5d6f-4e9e-88a2-2f10e1bf7a21" || resp["plan_id"] != "p1" || resp["task_id"] != "t1" || resp["correlation_id"] != "c1" {
		t.Fatalf("ids not echoed: %v", resp)
	}
	if r := resp["result"].(map[string]any); r["output_type"] != "json" {
		t.Fatalf("result %v", r)
	}
	for _, c := range []struct{ in, want string }{
		{`{not json`, "invalid ActionRequest JSON"},
		{`{"request_id":"1","action":"no_such_action","payload":{}}`, "unknown tool"},
		{`{"request_id":"1","action":"git_add","payload":{"files":[]}}`, "non-empty array"},
		{`{"request_id":"1","action":"git_commit","payload":{}}`, "payload.message"},
		{`{"request_id":"1","action":"git_log","payload":{"limit":"ten"}}`, "payload.limit"},
		{`{"request_id":"1"}`, "no action"},
	} {
		code, resp := agentCall(t, root, c.in)
		r, _ := resp["result"].(map[string]any)
		if code != 1 || resp["status"] != "error" || resp["code"].(float64) != 1 || r["output_type"] != "error" || !strings.Contains(r["data"].(string), c.want) {
			t.Fatalf("%s: %d %v", c.in, code, resp)
		}
	}
}

func TestMapActionLimit(t *testing.T) {
	for in, want := range map[string]string{`{"limit":5}`: `{"max_count":5}`, `{"limit":"7"}`: `{"max_count":7}`, `{}`: `{"max_count":10}`} {
		name, args, err := mapAction("git_log", json.RawMessage(in))
		if err != nil || name != "git_log" || string(args) != want {
			t.Fatalf("%s: %s %s %v", in, name, args, err)
		}
	}
	if _, args, _ := mapAction("git_diff", json.RawMessage(`{"files":["a","b c"]}`)); string(args) != `{"paths":["a","b c"]}` {
		t.Fatalf("diff args %s", args)
	}
}

func TestInitIdempotent(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := tgp(t, dir, "init")
	if code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	for _, want := range []string{"created tgp.config.yaml", "created .tgp/tools/", "created .tgp/meta.json", "added /.tgp/ to .gitignore"} {
		if !strings.Contains(out, want) {
			t.Fatalf("init output lacks %q:\n%s", want, out)
		}
	}
	for _, p := range []string{"tgp.config.yaml", ".tgp/tools", ".tgp/meta.json", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	code, out, _ = tgp(t, dir, "init")
	if code != 0 || !strings.Contains(out, "already initialised; nothing changed") {
		t.Fatalf("second init: %d %s", code, out)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("second init changed files:\n%s\n%s", before, after)
	}
}

func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if !info.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(":" + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}
