package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/sqldb"
)

// TestProcessMatchesInProc: the same tools give the same outcomes in both
// isolation modes, bridge calls included (files, SQL in the caller's
// transaction, require of other tools).
func TestProcessMatchesInProc(t *testing.T) {
	files := map[string]string{
		"tools/math/fib.ts":  fibTool,
		"tools/lib/twice.ts": "export const twice = (n: number) => 2 * n;\n",
		"tools/calc.ts":      "import { twice } from './lib/twice';\nexport default (a: { n: number }) => twice(a.n);\n",
		"data.json":          `{"secret": 42}`,
		"tools/io.ts": `export default async function () {
  const content = await tgp.read_file('data.json');
  tgp.write_file('data/x.txt', 'hi');
  console.log('hey', 1);
  return [JSON.parse(content), tgp.list_files('data'), await tgp.read_file('data/x.txt')];
}
`,
		"tools/db.ts": `export default async () => {
  await tgp.exec_sql("CREATE TABLE t (a INTEGER)", []);
  await tgp.exec_sql("INSERT INTO t VALUES (?), (?)", [1, 2]);
  return await tgp.exec_sql("SELECT sum(a) AS s FROM t", []);
}
`,
		"tools/throws.ts":  "export default () => { throw new Error('boom'); };\n",
		"tools/compile.ts": "export default ( => 1;\n",
		"tools/denied.ts":  "export default () => { tgp.write_file('tools/../../etc/x', 'no'); };\n",
	}
	runners := map[string]*Runner{
		"inproc":  New(WithTimeout(10*time.Second), WithWriteDirs("data")),
		"process": processRunner(t, WithTimeout(10*time.Second), WithWriteDirs("data")),
	}
	got := map[string][]string{}
	for mode, r := range runners {
		db, err := sqldb.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "db.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fsys := newFS(t, files)
		for _, p := range []string{"tools/math/fib.ts", "tools/calc.ts", "tools/io.ts", "tools/db.ts", "tools/throws.ts", "tools/compile.ts", "tools/denied.ts"} {
			sess := db.Session(false)
			out, err := r.Exec(context.Background(), Request{Path: p, Args: map[string]any{"n": 10}, FS: fsys, SQL: sess})
			if err != nil {
				t.Fatalf("%s %s: %v", mode, p, err)
			}
			_ = sess.Rollback()
			out.DurationMS = 0
			if out.Error != nil {
				out.Error.Stack = ""
			}
			b, _ := json.Marshal(out)
			got[mode] = append(got[mode], p+" "+string(b))
		}
	}
	for i := range got["inproc"] {
		if got["inproc"][i] != got["process"][i] {
			t.Errorf("outcomes differ:\ninproc:  %s\nprocess: %s", got["inproc"][i], got["process"][i])
		}
	}
	if !strings.Contains(got["process"][2], `"result":[{"secret":42},["data/x.txt"],"hi"]`) {
		t.Fatalf("bridge: %s", got["process"][2])
	}
	if !strings.Contains(got["process"][3], `"s":3`) {
		t.Fatalf("sql bridge: %s", got["process"][3])
	}
}

// TestParentRechecksBridgeCalls: the worker runs hostile code, so the
// parent refuses what the worker's own checks should have refused.
func TestParentRechecksBridgeCalls(t *testing.T) {
	r := New(WithWriteDirs("data"), WithAllowedFetchURLs("https://allowed.example/"))
	fsys := newFS(t, map[string]string{"data/keep.txt": "keep"})
	req := Request{FS: fsys}
	for _, f := range []*frame{
		{Op: "write_file", Path: "tools/x.ts", Data: []byte("x")},
		{Op: "write_file", Path: "data/../tools/x.ts", Data: []byte("x")},
		{Op: "write_file", Path: "data/.GIT/config", Data: []byte("x")},
		{Op: "write_file", Path: "data/git~1/config", Data: []byte("x")},
		{Op: "write_file", Path: "data/.git\u200c/config", Data: []byte("x")},
		{Op: "fetch", Method: "GET", URL: "https://evil.example/"},
		{Op: "exec_sql", Query: "SELECT 1"},
		{Op: "spawn", Path: "/bin/sh"},
	} {
		rep := serveCall(context.Background(), r, nil, req, f)
		if rep.Err == "" {
			t.Errorf("%s %q %q was served", f.Op, f.Path, f.URL)
		}
	}
	for _, p := range []string{"tools/x.ts", "data/.GIT/config", "data/git~1/config", "data/.git\u200c/config"} {
		if _, err := fsys.ReadFile(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
	if rep := serveCall(context.Background(), r, nil, req, &frame{Op: "write_file", Path: "data/ok.txt", Data: []byte("ok")}); rep.Err != "" {
		t.Fatalf("allowed write refused: %s", rep.Err)
	}
}

// TestProcessTimeoutReplacesWorker: a tool that never yields is killed
// with its worker; the pool starts another and later runs succeed.
func TestProcessTimeoutReplacesWorker(t *testing.T) {
	// Only the spin gets 1 s (Request.Timeout); the fib runs, which may
	// wait for a worker to start (a -race binary, on a loaded machine),
	// have the runner's minute.
	r := processRunner(t, WithTimeout(time.Minute), WithWorkers(1))
	fsys := newFS(t, map[string]string{"tools/spin.ts": "export default () => { for (;;) {} };\n", "tools/fib.ts": fibTool})
	if out := exec(t, r, fsys, "tools/fib.ts", map[string]any{"n": 10}); out.Result != float64(55) {
		t.Fatalf("%+v", out.Error)
	}
	first := idlePID(t, r)
	out, err := r.Exec(context.Background(), Request{Path: "tools/spin.ts", FS: fsys, Timeout: time.Second})
	if err != nil || out.Error == nil || out.Error.Kind != KindTimeout {
		t.Fatalf("want timeout, got %+v %v", out, err)
	}
	if out := exec(t, r, fsys, "tools/fib.ts", map[string]any{"n": 10}); out.Result != float64(55) {
		t.Fatalf("after timeout: %+v", out.Error)
	}
	if pid := idlePID(t, r); pid == first {
		t.Fatalf("worker %d was reused after a timeout", pid)
	}
}

// TestProcessWorkerDeathBetweenRuns: a worker killed from outside while
// idle costs nothing: the next run gets a live one.
func TestProcessWorkerDeathBetweenRuns(t *testing.T) {
	r := processRunner(t, WithWorkers(1))
	fsys := newFS(t, map[string]string{"tools/fib.ts": fibTool})
	exec(t, r, fsys, "tools/fib.ts", map[string]any{"n": 5})
	r.pool.mu.Lock()
	w := r.pool.idle[0]
	r.pool.mu.Unlock()
	_ = w.cmd.Process.Kill()
	for i := 0; i < 2; i++ {
		if out := exec(t, r, fsys, "tools/fib.ts", map[string]any{"n": 10}); out.Result != float64(55) {
			t.Fatalf("run %d after the kill: %+v", i, out.Error)
		}
	}
}

// TestProcessCancel: a cancelled call stops promptly and the worker that
// was running it is not reused.
func TestProcessCancel(t *testing.T) {
	r := processRunner(t, WithTimeout(time.Minute), WithWorkers(1))
	fsys := newFS(t, map[string]string{"tools/spin.ts": "export default () => { for (;;) {} };\n", "tools/fib.ts": fibTool})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out, err := r.Exec(ctx, Request{Path: "tools/spin.ts", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || (out.Error.Kind != KindCancelled && out.Error.Kind != KindTimeout) {
		t.Fatalf("want cancelled, got %+v", out)
	}
	if out.DurationMS > 20_000 {
		t.Fatalf("cancel took %.0f ms", out.DurationMS)
	}
	if out := exec(t, r, fsys, "tools/fib.ts", map[string]any{"n": 10}); out.Result != float64(55) {
		t.Fatalf("after cancel: %+v", out.Error)
	}
}

// TestNotAWorkerIsAClearError: a worker command that is not a tgp worker
// (an embedding program that does not serve the protocol) fails the call
// with an error that says what to do, instead of hanging.
func TestNotAWorkerIsAClearError(t *testing.T) {
	for _, argv := range [][]string{{"/bin/cat"}, {"/bin/true"}, {"/nonexistent/tgp"}} {
		r := New(WithIsolation(IsolationProcess), WithWorkerCommand(argv))
		_, err := r.Exec(context.Background(), Request{Path: "t.ts", Source: []byte("export default () => 1;\n")})
		_ = r.Close()
		if err == nil {
			t.Fatalf("%v: no error", argv)
		}
		if !strings.Contains(err.Error(), argv[0]) || (argv[0] != "/nonexistent/tgp" && !strings.Contains(err.Error(), "is not a sandbox worker")) {
			t.Fatalf("%v: unclear error: %v", argv, err)
		}
	}
}

// TestClosedRunnerRefuses: after Close a process runner fails calls
// instead of starting workers nobody will stop.
func TestClosedRunnerRefuses(t *testing.T) {
	r := processRunner(t)
	_ = r.Close()
	_, err := r.Exec(context.Background(), Request{Path: "t.ts", Source: []byte("export default () => 1;\n")})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("got %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("closed is not a cancellation")
	}
}

func idlePID(t *testing.T, r *Runner) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.pool.mu.Lock()
		if len(r.pool.idle) > 0 {
			pid := r.pool.idle[0].cmd.Process.Pid
			r.pool.mu.Unlock()
			return pid
		}
		r.pool.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no idle worker")
	return 0
}

// TestCancelledBeforeTheToolRuns: a call whose context ends while the
// sandbox is still being set up (an already-cancelled context stands in
// for a loaded machine) is reported as cancelled, not as a runtime error,
// in both isolation modes.
func TestCancelledBeforeTheToolRuns(t *testing.T) {
	for mode, r := range map[string]*Runner{"inproc": New(), "process": processRunner(t)} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out, err := r.Exec(ctx, Request{Path: "t.ts", Source: []byte("export default () => 1;\n")})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if out.Error == nil || out.Error.Kind != KindCancelled {
			t.Fatalf("%s: want cancelled, got %+v", mode, out)
		}
	}
}

// TestStaleCallFromAnEarlierRunIsRefused: a bridge call tagged with an
// earlier run (one still in flight when that run ended) is answered with an
// error and never touches the current run's files.
func TestStaleCallFromAnEarlierRunIsRefused(t *testing.T) {
	r := New(WithWriteDirs("data"))
	p := newPool(r)
	pr, pw := io.Pipe()
	w := &worker{cmd: &osexec.Cmd{}, stdin: pw, frames: make(chan *frame, 4), exited: make(chan struct{}), stderr: &tail{max: 100}}
	replies := make(chan *frame, 4)
	go func() {
		for {
			f, err := readFrame(pr)
			if err != nil {
				return
			}
			if f.Type == frameReply {
				replies <- f
			}
		}
	}()
	fsys := newFS(t, nil)
	w.frames <- &frame{Type: frameCall, ID: 1, Run: 6, Op: "write_file", Path: "data/stale.txt", Data: []byte("x")}
	w.frames <- &frame{Type: frameCall, ID: 2, Run: 7, Op: "write_file", Path: "data/now.txt", Data: []byte("y")}
	var calls sync.WaitGroup
	go func() {
		// The run ends once both calls were answered.
		<-replies
		<-replies
		w.frames <- &frame{Type: frameDone, ID: 7, Outcome: &Outcome{Success: true}}
	}()
	out, _, _ := p.converse(context.Background(), context.Background(), w, 7, r, Request{FS: fsys}, []byte("x"), 5*time.Second, &calls)
	calls.Wait()
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	if _, err := fsys.ReadFile("data/stale.txt"); err == nil {
		t.Fatal("a stale call wrote into the current run's files")
	}
	if _, err := fsys.ReadFile("data/now.txt"); err != nil {
		t.Fatalf("the current run's call was not served: %v", err)
	}
}

// TestHostCallFloodIsBounded: a tool that starts fetches without awaiting
// them gets an error past the bound instead of a goroutine (and, in process
// isolation, a kernel-side call) per call.
func TestHostCallFloodIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // hold every request until the flood is over
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	src := `export default async () => {
  const ps: Promise<any>[] = [];
  let refused = '';
  try {
    for (let i = 0; i < 100000; i++) ps.push(tgp.fetch('` + srv.URL + `/x'));
  } catch (e) {
    refused = String(e);
  }
  await Promise.all(ps);
  return [ps.length, refused.includes('too many host calls')];
}
`
	go func() {
		// Let the requests through once the tool has stopped starting them.
		time.Sleep(time.Second)
		close(release)
	}()
	for _, mode := range []string{"inproc", "process"} {
		opts := []Option{WithTimeout(60 * time.Second), WithAllowedFetchURLs(srv.URL)}
		r := New(opts...)
		if mode == "process" {
			r = processRunner(t, opts...)
		}
		out := exec(t, r, newFS(t, map[string]string{"tools/flood.ts": src}), "tools/flood.ts", nil)
		got, _ := json.Marshal(out.Result)
		if !out.Success || string(got) != fmt.Sprintf("[%d,true]", maxHostCallsInFlight) {
			t.Fatalf("%s: %s %+v", mode, got, out.Error)
		}
	}
}
