package fleet

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	flagRun        = flag.Bool("fleet", false, "run the fleet table (make bench-fleet)")
	flagDelay      = flag.Duration("fleet.delay", 25*time.Millisecond, "one-way delay the proxy adds")
	flagJitter     = flag.Duration("fleet.jitter", 0, "random extra one-way delay per chunk")
	flagBandwidth  = flag.Int64("fleet.bandwidth", 0, "bytes per second per direction (0: no cap)")
	flagShapes     = flag.String("fleet.shapes", "4x8x5,16x4x5", "machines x agents x writes, comma separated")
	flagTransports = flag.String("fleet.transports", "git,http", "git, http")
	flagModes      = flag.String("fleet.modes", "proc,kernel,gitcli", "proc, kernel, gitcli")
	flagBin        = flag.String("fleet.bin", "", "tgp binary (default: built from this tree)")
	flagBaseline   = flag.String("fleet.baseline", "", "another tgp binary measured in the same run (rows named 'before')")
	flagPause      = flag.Duration("fleet.pause", 0, "stop the proxy this long, 1/4 into each row")
	flagTrace      = flag.Bool("fleet.trace", false, "trace every tgp call (OTLP) and print where the time went")
	flagTraceOut   = flag.String("fleet.trace.out", "", "with -fleet.trace: write every span as a JSON line to this file")
	flagBudget     = flag.Int("fleet.budget", 0, "the remote refuses pushes past this many a minute, and every machine gets TGP_GIT_PUSHES_PER_MINUTE of it (0: no budget)")
	flagBudgetTgp  = flag.Bool("fleet.budget.machines", true, "with -fleet.budget: the machines keep it too (false: only the remote does, refusing what goes over)")
	flagJournal    = flag.Bool("fleet.journal", false, "tgp's rows write through a PostgreSQL journal (TGP_GIT_JOURNAL, a server per row as sqldb/pgtest starts it); the git CLI's rows are left out")
)

// TestFleetTable is the fleet benchmark (make bench-fleet): one table,
// every row measured in this run.
func TestFleetTable(t *testing.T) {
	if !*flagRun {
		t.Skip("run with make bench-fleet (-fleet)")
	}
	bin := *flagBin
	if bin == "" {
		bin = BuildTgp(t)
	}
	var rows []Row
	for _, shape := range strings.Split(*flagShapes, ",") {
		var m, a, w int
		if _, err := fmt.Sscanf(shape, "%dx%dx%d", &m, &a, &w); err != nil {
			t.Fatalf("shape %q: want MxAxW", shape)
		}
		for _, tr := range strings.Split(*flagTransports, ",") {
			for _, mode := range strings.Split(*flagModes, ",") {
				spec := Spec{Name: mode, Transport: tr, Machines: m, Agents: a, Writes: w, Mode: mode, TgpBin: bin,
					Link: Link{Delay: *flagDelay, Jitter: *flagJitter, BytesPerSecond: *flagBandwidth}, Trace: *flagTrace}
				if *flagPause > 0 {
					spec.PauseAt, spec.PauseFor = 2*time.Second, *flagPause
				}
				if mode == "gitcli" && m*a > 32 {
					continue // the peer's loop at 64 agents takes minutes and says nothing new
				}
				if *flagBudget > 0 {
					spec.Forge = Forge{PushesPerMinute: *flagBudget}
					spec.Name += fmt.Sprintf(", %d/min", *flagBudget)
					if *flagBudgetTgp {
						spec.Env = append(spec.Env, fmt.Sprintf("TGP_GIT_PUSHES_PER_MINUTE=%d", *flagBudget))
					} else {
						spec.Name += " (remote only)"
					}
				}
				if *flagJournal {
					if mode == "gitcli" {
						continue // the git CLI has no journal
					}
					spec.Journal = true
					spec.Name += ", journal"
				}
				rows = append(rows, runRow(t, spec))
				if mode == "proc" && *flagBaseline != "" && !*flagJournal {
					b := spec
					b.Name, b.TgpBin = spec.Name+" (before)", *flagBaseline
					rows = append(rows, runRow(t, b))
				}
			}
		}
	}
	fmt.Print(Table(rows))
}

func runRow(t *testing.T, spec Spec) Row {
	r := Run(t, spec)
	fmt.Fprintf(os.Stderr, "%s%s", Table([]Row{r}), Breakdown(r))
	if *flagTraceOut != "" && len(r.Spans) > 0 {
		f, err := os.OpenFile(*flagTraceOut, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for _, s := range r.Spans {
			_ = enc.Encode(struct {
				Row, Transport string
				SpanLog
			}{spec.Name, spec.Transport, s})
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(os.Stderr, "  error: %s\n", e)
	}
	if len(r.PushesAt) > 0 || len(r.RefusedAt) > 0 {
		fmt.Fprintf(os.Stderr, "  pushes at %s; refused at %s\n", seconds(r.PushesAt), seconds(r.RefusedAt))
	}
	return r
}

// seconds lists durations as "1.2s 3.4s", or "-".
func seconds(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1fs", d.Seconds())
	}
	return b.String()
}

// BuildTgp builds cmd/tgp from this module into a temporary directory.
func BuildTgp(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tgp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tgp-go/tgp/cmd/tgp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tgp: %v\n%s", err, out)
	}
	return bin
}

// TestProxyDelaysAndPauses: the proxy adds its delay to a round trip and
// refuses connections while down.
func TestProxyDelaysAndPauses(t *testing.T) {
	srv := NewServer(t, "git", Link{Delay: 30 * time.Millisecond})
	t0 := time.Now()
	out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("ls-remote through the proxy: %v %s", err, out)
	}
	if !strings.Contains(string(out), "refs/heads/main") {
		t.Fatalf("ls-remote: %s", out)
	}
	// Connect (1 RTT) and at least one exchange (1 RTT): 2 × 60 ms.
	if d := time.Since(t0); d < 120*time.Millisecond {
		t.Fatalf("ls-remote took %v through a 60 ms RTT link: the proxy adds no delay", d)
	}
	up := srv.Proxy.Down()
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err == nil {
		t.Fatalf("ls-remote succeeded while the proxy was down: %s", out)
	}
	up()
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err != nil {
		t.Fatalf("ls-remote once the proxy is up: %v %s", err, out)
	}
	// Pause is Down for a while: it is up again once Pause returns.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv.Proxy.Pause(ctx, time.Hour)
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err != nil {
		t.Fatalf("ls-remote after a pause: %v %s", err, out)
	}
}

// TestProxyBudget: a proxy keeping a budget of 6 pushes a minute lets 6
// pushes through to a real git daemon (git://) or http-backend, refuses
// the 7th as a forge does (an ERR line saying "rate limit"; 429 with
// Retry-After), and counts the reads.
func TestProxyBudget(t *testing.T) {
	for _, tr := range []string{"git", "http"} {
		t.Run(tr, func(t *testing.T) {
			srv := NewForgeServer(t, tr, Link{Delay: 2 * time.Millisecond}, Forge{PushesPerMinute: 6})
			dir := filepath.Join(t.TempDir(), "clone")
			git := func(args ...string) (string, error) {
				cmd := exec.Command("git", args...)
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com",
					"GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com", "GIT_TERMINAL_PROMPT=0")
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := git("clone", "-q", srv.URL, dir); err != nil {
				t.Fatalf("clone: %v %s", err, out)
			}
			if out, err := git("ls-remote", srv.URL); err != nil {
				t.Fatalf("ls-remote: %v %s", err, out)
			}
			for i := 1; i <= 7; i++ {
				if out, err := git("-C", dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint("push ", i)); err != nil {
					t.Fatalf("commit: %v %s", err, out)
				}
				out, err := git("-C", dir, "push", "-q", "origin", "HEAD:main")
				switch {
				case i <= 6 && err != nil:
					t.Fatalf("push %d within the budget: %v %s", i, err, out)
				case i == 7 && err == nil:
					t.Fatalf("push 7 in a minute went through a budget of 6: %s", out)
				case i == 7 && tr == "git" && !strings.Contains(out, "rate limit"):
					t.Fatalf("push 7 refused without saying rate limit: %s", out)
				case i == 7 && tr == "http" && !strings.Contains(out, "429"):
					t.Fatalf("push 7 refused without HTTP 429: %s", out)
				}
			}
			if tr == "http" {
				resp, err := http.Post(srv.URL+"/git-receive-pack", "application/x-git-receive-pack-request", strings.NewReader("0000"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || ra < 1 || ra > 60 {
					t.Fatalf("push past the budget: %s, Retry-After %q; want 429 and 1-60 s", resp.Status, resp.Header.Get("Retry-After"))
				}
			}
			if out, err := exec.Command("git", "-C", srv.Bare, "rev-list", "--count", "main").Output(); err != nil || strings.TrimSpace(string(out)) != "7" {
				t.Fatalf("remote main has %s commits (%v); want the seed and 6 pushes", out, err)
			}
			c := srv.Proxy.Counts()
			refused := 1
			if tr == "http" {
				refused = 2
			}
			if len(c.Pushes) != 6 || len(c.Refused) != refused || MaxIn(c.Pushes, time.Minute) != 6 {
				t.Fatalf("counted %d pushes (%d in a minute), %d refused; want 6 (6), %d", len(c.Pushes), MaxIn(c.Pushes, time.Minute), len(c.Refused), refused)
			}
			// The clone and ls-remote read; a push only writes.
			if len(c.Reads) != 2 || MaxIn(c.Reads, time.Hour) != 2 {
				t.Fatalf("counted %d reads; want 2 (clone, ls-remote)", len(c.Reads))
			}
		})
	}
}

func TestMaxIn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s ...float64) []time.Time {
		var out []time.Time
		for _, x := range s {
			out = append(out, t0.Add(time.Duration(x*float64(time.Second))))
		}
		return out
	}
	for _, c := range []struct {
		ts   []time.Time
		w    time.Duration
		want int
	}{
		{nil, time.Second, 0},
		{at(0), time.Second, 1},
		{at(0, 0.5, 0.99, 1, 1.2), time.Second, 4},
		{at(3, 0, 1, 2), time.Second, 1},
		{at(0, 10, 59.9, 60, 61), time.Minute, 4},
	} {
		if got := MaxIn(c.ts, c.w); got != c.want {
			t.Errorf("MaxIn(%v, %v) = %d, want %d", c.ts, c.w, got, c.want)
		}
	}
}
