package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileAllocations are tools that try to take the host's memory, each in
// one of the ways a script can ask for a lot at once.
var hostileAllocations = map[string]string{
	"typed array touched":   "export default () => { const a = new Float64Array(2e8); a.fill(1.5); return a.length; }",
	"typed array untouched": "export default () => new Float64Array(2e8).length",
	"ArrayBuffer":           "export default () => new ArrayBuffer(1.6e9).byteLength",
	"many medium buffers":   "export default () => { const keep: Uint8Array[] = []; for (let i = 0; i < 400; i++) keep.push(new Uint8Array(4 << 20)); return keep.length; }",
	"typed array from":      "export default () => Float64Array.from({ length: 2e8 }).length",
	"buffer slice":          "export default () => { const b = new ArrayBuffer(100 << 20); const k = []; for (let i = 0; i < 20; i++) k.push(b.slice(0)); return k.length; }",
	"strings":               "export default () => { const a: string[] = []; for (let i = 0; i < 400; i++) a.push('x'.repeat(1 << 20) + i); return a.length; }",
	"maps":                  "export default () => { const m = new Map(); for (let i = 0; i < 5e7; i++) m.set(i, { i }); return m.size; }",
	"Array.from length":     "export default () => Array.from({ length: 1.6e7 }).length",
	"array fill":            "export default () => { const k = []; for (let i = 0; i < 40; i++) k.push(new Array(1 << 22).fill(i)); return k.length; }",
	"split huge string":     "export default () => { const s = 'ab'.repeat(1 << 23); const k = []; for (let i = 0; i < 8; i++) k.push(s.split('')); return k.length; }",
	"string doubling":       "export default () => { let s = 'x'; for (let i = 0; i < 40; i++) s = s + s; return s.length; }",
	"JSON.parse huge":       "export default () => { const s = '[' + '1,'.repeat(1 << 23) + '1]'; const k = []; for (let i = 0; i < 40; i++) k.push(JSON.parse(s)); return k.length; }",
}

const hostileLimitMB = 64

// TestHostileAllocationsEndInMemoryLimit runs each pattern in a child
// process (so peaks do not add up), in both isolation modes, and requires
// memory_limit with every process's peak RSS under the limit plus a fixed
// allowance for the Go runtime, esbuild and goja (measured: about 60 MB
// with an empty tool). In process mode the host is the kernel's process,
// which must not grow at all, and the worker is bounded the same way, for
// every pattern: RLIMIT_AS does not depend on a watchdog being scheduled.
// String doubling is charged before each step (the compiled `+` is), so
// it is bounded in both modes.
func TestHostileAllocationsEndInMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process per pattern")
	}
	if name := os.Getenv("TGP_HOSTILE_CHILD"); name != "" {
		hostileChild(t, name, os.Getenv("TGP_HOSTILE_MODE"))
		return
	}
	const allowanceMB = 200
	child := os.Args[0]
	if raceBuild {
		// The race detector's shadow memory multiplies what every heap
		// byte costs in RSS (4-8x, and not the same from run to run): the
		// bound that matters is the one a user's binary has, so the
		// children are this package's tests built without it.
		child = nonRaceTestBinary(t)
	}
	for _, mode := range []string{IsolationInProc, IsolationProcess} {
		for name := range hostileAllocations {
			t.Run(mode+"/"+name, func(t *testing.T) {
				cmd := osexec.Command(child, "-test.run=^TestHostileAllocationsEndInMemoryLimit$", "-test.count=1")
				cmd.Env = append(os.Environ(), "TGP_HOSTILE_CHILD="+name, "TGP_HOSTILE_MODE="+mode)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("child: %v\n%s", err, out)
				}
				var res struct {
					Kind      string
					Message   string
					RSS       int64 // KiB, the host
					WorkerRSS int64 // KiB, the largest worker (process mode)
				}
				i := strings.Index(string(out), "HOSTILE ")
				if i < 0 {
					t.Fatalf("child printed no outcome:\n%s", out)
				}
				line := out[i+len("HOSTILE "):]
				if j := strings.IndexByte(string(line), '\n'); j >= 0 {
					line = line[:j]
				}
				if err := json.Unmarshal(line, &res); err != nil {
					t.Fatalf("child output %q: %v", out, err)
				}
				t.Logf("%s %s: %s, host peak RSS %d MB, worker peak RSS %d MB", mode, name, res.Kind, res.RSS>>10, res.WorkerRSS>>10)
				if res.Kind != KindMemoryLimit {
					t.Fatalf("want %s, got %s: %s", KindMemoryLimit, res.Kind, res.Message)
				}
				bound := int64(hostileLimitMB + allowanceMB)
				if res.RSS>>10 > bound {
					t.Fatalf("host peak RSS %d MB, above the %d MB bound", res.RSS>>10, bound)
				}
				if mode == IsolationProcess {
					if res.WorkerRSS == 0 {
						t.Fatal("no worker peak RSS measured")
					}
					// The worker's hard cap is RLIMIT_DATA at the budget
					// plus workerDataHeadroom (TestDataLimitHoldsWithoutTheWatchdog):
					// that bound holds whenever its watchdog runs.
					if dataLimited { // the children are built without -race
						bound = max(bound, int64(hostileLimitMB+workerDataHeadroom>>20))
					}
					if res.WorkerRSS>>10 > bound {
						t.Fatalf("worker peak RSS %d MB, above the %d MB bound", res.WorkerRSS>>10, bound)
					}
				}
			})
		}
	}
}

// nonRaceTestBinary builds this package's tests without the race detector
// (the toolchain that runs the tests is there; its build cache makes this
// a link when the dependencies were built by go vet or an earlier run).
func nonRaceTestBinary(t *testing.T) string {
	t.Helper()
	// go test puts its own toolchain first on PATH.
	out := filepath.Join(t.TempDir(), "sandbox.test")
	cmd := osexec.Command("go", "test", "-c", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the tests without -race: %v\n%s", err, b)
	}
	return out
}

// hostileChild runs one pattern and prints its outcome and peak RSS.
func hostileChild(t *testing.T, name, mode string) {
	opts := []Option{WithTimeout(60 * time.Second), WithMemoryLimitMB(hostileLimitMB)}
	var r *Runner
	if mode == IsolationProcess {
		r = processRunner(t, opts...)
	} else {
		r = New(opts...)
	}
	fsys := newFS(t, map[string]string{"tools/h.ts": hostileAllocations[name]})
	out := exec(t, r, fsys, "tools/h.ts", nil)
	kind, msg := "success", ""
	if out.Error != nil {
		kind, msg = out.Error.Kind, out.Error.Message
	}
	var workerRSS int64
	if r.pool != nil {
		_ = r.Close()
		r.pool.live.Wait()
		workerRSS = r.pool.peakRSS.Load()
	}
	raw, _ := json.Marshal(map[string]any{"Kind": kind, "Message": msg, "RSS": maxRSS(), "WorkerRSS": workerRSS})
	fmt.Printf("HOSTILE %s\n", raw)
}

// TestBufferWrappersKeepSemantics: the charging wrappers must not change
// what tools see of typed arrays and buffers.
func TestBufferWrappersKeepSemantics(t *testing.T) {
	r := New()
	src := `export default () => {
  const u = new Uint8Array([1, 2, 3]);
  const b = new ArrayBuffer(8);
  class Mine extends Uint8Array {}
  const m = new Mine(4);
  const v = new DataView(b);
  v.setUint8(0, 7);
  return [u instanceof Uint8Array, b instanceof ArrayBuffer, m instanceof Mine, m instanceof Uint8Array,
    ArrayBuffer.isView(u), Uint8Array.BYTES_PER_ELEMENT, Uint8Array.from([4, 5]).join(","), Float64Array.of(1, 2).length,
    u.constructor === Uint8Array, Uint8Array.name, new Uint8Array(b)[0], u.slice(1).join(","), JSON.parse("[1,2]").length].join(" ");
}`
	out := exec(t, r, newFS(t, map[string]string{"tools/s.ts": src}), "tools/s.ts", nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	want := "true true true true true 1 4,5 2 true Uint8Array 7 2,3 2"
	if out.Result != want {
		t.Fatalf("got %q, want %q", out.Result, want)
	}
}

// TestDroppedBuffersAreNotCharged: the budget is the live heap, not a
// running sum, so a tool that makes and drops buffers far past the limit in
// total succeeds.
func TestDroppedBuffersAreNotCharged(t *testing.T) {
	// The time limit only keeps a broken run from hanging: under -race on
	// a loaded 2-core machine the 80 allocations took over 30s once, and
	// over 3 minutes at a load average of 50.
	r := New(WithMemoryLimitMB(32), WithTimeout(10*time.Minute))
	src := `export default () => {
  let sum = 0;
  for (let i = 0; i < 40; i++) { const b = new Uint8Array(8 << 20); b[i] = i; sum += b[i]; }
  for (let i = 0; i < 40; i++) sum += 'y'.repeat(4 << 20).length > 0 ? 1 : 0;
  return sum;
}`
	out := exec(t, r, newFS(t, map[string]string{"tools/d.ts": src}), "tools/d.ts", nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	if out.Result != float64(780+40) {
		t.Fatalf("result %v", out.Result)
	}
}
