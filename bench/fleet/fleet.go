// Package fleet measures many agents writing to one remote over a network:
// M simulated machines × A agents each, as `tgp call` processes, as kernels
// in one process, or as the git CLI's pull --rebase / push loop (the peer),
// against `git daemon` or smart HTTP (git http-backend) behind a proxy that
// adds latency (Proxy). A simulated machine is its own HOME and
// XDG_CACHE_HOME, so anything a tgp process keeps per machine (the lock
// that makes each machine one contender) follows it.
//
// make bench-fleet prints the table; test/integration runs a small fleet in
// CI.
package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/journal"
	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
	"github.com/tgp-go/tgp/sqldb/pgtest"
)

// Spec is one row of the table.
type Spec struct {
	Name      string
	Transport string // "git" (git daemon) or "http" (git http-backend)
	Link      Link
	Machines  int
	Agents    int // per machine
	Writes    int // per agent
	// Mode is "proc" (tgp call processes), "kernel" (kernels in this
	// process) or "gitcli" (git pull --rebase until git push succeeds).
	Mode   string
	TgpBin string
	// Env is added to every process's environment (proc mode) and every
	// kernel's (kernel mode).
	Env []string
	// CallTimeout bounds one write (default 5 min).
	CallTimeout time.Duration
	// PauseAt / PauseFor: the remote goes away PauseAt into the run for
	// PauseFor (every connection dropped, new ones refused).
	PauseAt, PauseFor time.Duration
	// Trace (proc mode) runs every call in a trace of its own, exported
	// to a receiver here, and fills Row.Phases.
	Trace bool
	// Forge is the remote's budget, kept by the proxy: pushes past it
	// are refused as a hosted forge refuses them (Row.RefusedPushes).
	// The machines' own budget is theirs to set in Env
	// (TGP_GIT_PUSHES_PER_MINUTE).
	Forge Forge
	// Journal runs a throw-away PostgreSQL server for the row (as
	// sqldb/pgtest does) and gives every machine TGP_GIT_JOURNAL, a fresh
	// database on it.
	Journal bool
}

// Row is a Spec's outcome.
type Row struct {
	Spec
	Calls, Failed int
	// Landed is how many of the writes are on the remote at the end;
	// Missing the rest.
	Landed, Missing int
	Elapsed         time.Duration
	P50, P99, Max   time.Duration
	// FairMin, FairMax: fewest and most writes landed per agent by the
	// time the first agent finished all of its writes.
	FairMin, FairMax int
	Errors           []string
	// Pushes and RefusedPushes are the pushes the remote took and
	// refused while the clock ran, Reads its reads (Counts);
	// MaxPushesPerMinute the most pushes it took in any 60 s window,
	// MaxReadsPerSecond the most reads in any second.
	Pushes, RefusedPushes, Reads          int
	MaxPushesPerMinute, MaxReadsPerSecond int
	// PushesAt and RefusedAt are when, into the run, the remote took
	// and refused each push.
	PushesAt, RefusedAt []time.Duration
	// Server is the remote the row ran against; Agents says where each
	// agent's root is and with which environment its processes ran.
	Server  *Server
	Members []Agent
	// Phases is where each traced call's time went (Spec.Trace), Spans
	// every span of those calls.
	Phases []Phases
	Spans  []SpanLog
}

// Agent is one simulated agent of a row.
type Agent struct {
	Root string
	Env  []string
}

// WritesPerSecond is the successful calls over the run's wall time.
func (r Row) WritesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls-r.Failed) / r.Elapsed.Seconds()
}

// Server is a remote behind a latency proxy.
type Server struct {
	Bare  string // the bare repository on disk
	URL   string // through the proxy
	Proxy *Proxy
}

// NewServer seeds a bare repository and serves it over transport behind a
// proxy with link.
func NewServer(t testing.TB, transport string, link Link) *Server {
	t.Helper()
	return NewForgeServer(t, transport, link, Forge{})
}

// NewForgeServer is NewServer with the proxy keeping forge's budget.
func NewForgeServer(t testing.TB, transport string, link Link, forge Forge) *Server {
	t.Helper()
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "# fleet toolbox\n"})
	root, name := filepath.Dir(bare), filepath.Base(bare)
	var target, scheme string
	switch transport {
	case "git":
		u := gittest.Daemon(t, root)
		target, scheme = strings.TrimPrefix(u, "git://"), "git://"
	case "http":
		s := gittest.NewHTTPServer(t, root, "")
		target, scheme = strings.TrimPrefix(s.URL(""), "http://"), "http://"
		target = strings.TrimSuffix(target, "/")
	default:
		t.Fatalf("fleet: unknown transport %q (git, http)", transport)
	}
	p, err := NewGitProxy(target, transport, link, forge)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &Server{Bare: bare, URL: scheme + p.Addr() + "/" + name, Proxy: p}
}

// Run runs spec against a fresh server and returns its row.
func Run(t testing.TB, spec Spec) Row {
	t.Helper()
	if spec.CallTimeout <= 0 {
		spec.CallTimeout = 5 * time.Minute
	}
	srv := NewForgeServer(t, spec.Transport, spec.Link, spec.Forge)
	base := t.TempDir()
	var journalEnv []string
	if spec.Journal {
		pg, err := pgtest.Start()
		if err != nil {
			t.Fatalf("fleet: journal: %v", err)
		}
		defer func() { _ = pg.Stop() }()
		journalEnv = []string{"TGP_GIT_JOURNAL=" + journal.FreshDatabase(t, pg.DSN)}
	}
	type result struct {
		lat   time.Duration
		end   time.Duration
		err   error
		path  string
		trace string
	}
	var sink *spanSink
	if spec.Trace && spec.Mode == "proc" {
		sink = newSpanSink()
		defer sink.close()
	}
	n := spec.Machines * spec.Agents
	results := make([][]result, n)
	agents := make([]Agent, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The agents are made (kernels booted, clones made) before the clock
	// starts: the table measures writes.
	writers := make([]writer, n)
	for m := 0; m < spec.Machines; m++ {
		mdir := filepath.Join(base, fmt.Sprintf("m%d", m))
		env := append([]string{
			"HOME=" + filepath.Join(mdir, "home"),
			"XDG_CACHE_HOME=" + filepath.Join(mdir, "cache"),
			"PATH=" + os.Getenv("PATH"),
			"TGP_GIT_REMOTE=" + srv.URL,
			"TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com",
			// The fleet's carry key (git.carry_key_env): without it no
			// machine lands another's lost push.
			"TGP_CARRY_KEY=fleet-bench-carry-key",
			"GIT_AUTHOR_NAME=Agent", "GIT_AUTHOR_EMAIL=agent@example.com",
			"GIT_COMMITTER_NAME=Agent", "GIT_COMMITTER_EMAIL=agent@example.com",
		}, append(journalEnv, spec.Env...)...)
		for _, d := range []string{"home", "cache"} {
			if err := os.MkdirAll(filepath.Join(mdir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for a := 0; a < spec.Agents; a++ {
			i := m*spec.Agents + a
			root := filepath.Join(mdir, fmt.Sprintf("a%d", a), "root")
			agents[i] = Agent{Root: root, Env: env}
			w, err := newWriter(ctx, spec, srv, env, mdir, root)
			if err != nil {
				t.Fatalf("fleet: agent %d: %v", i, err)
			}
			writers[i] = w
		}
	}
	start := time.Now()
	if spec.PauseFor > 0 {
		go func() {
			select {
			case <-time.After(spec.PauseAt):
				srv.Proxy.Pause(ctx, spec.PauseFor)
			case <-ctx.Done():
			}
		}()
	}
	var wg sync.WaitGroup
	for m := 0; m < spec.Machines; m++ {
		for a := 0; a < spec.Agents; a++ {
			i := m*spec.Agents + a
			w := writers[i]
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer w.close()
				for k := 0; k < spec.Writes; k++ {
					p := fmt.Sprintf("tools/m%d/a%d/w%d.ts", m, a, k)
					content := fmt.Sprintf("/** Tool %d of agent %d on machine %d. */\nexport default () => '%d';\n", k, a, m, k)
					cctx, ccancel := context.WithTimeout(ctx, spec.CallTimeout)
					var trace string
					if sink != nil {
						var env []string
						trace, env = sink.env()
						cctx = withTrace(cctx, env)
					}
					t0 := time.Now()
					err := w.write(cctx, p, content)
					ccancel()
					results[i] = append(results[i], result{lat: time.Since(t0), end: time.Since(start), err: err, path: p, trace: trace})
				}
			}()
		}
	}
	wg.Wait()
	row := Row{Spec: spec, Elapsed: time.Since(start), Server: srv, Members: agents}
	// The remote's counts while the clock ran: the agents' clones are
	// made before it starts.
	counts := srv.Proxy.Counts()
	since := func(ts []time.Time) []time.Time {
		var out []time.Time
		for _, at := range ts {
			if !at.Before(start) {
				out = append(out, at)
			}
		}
		return out
	}
	pushes, reads := since(counts.Pushes), since(counts.Reads)
	row.Pushes, row.RefusedPushes, row.Reads = len(pushes), len(since(counts.Refused)), len(reads)
	row.MaxPushesPerMinute, row.MaxReadsPerSecond = MaxIn(pushes, time.Minute), MaxIn(reads, time.Second)
	offsets := func(ts []time.Time) []time.Duration {
		var out []time.Duration
		for _, at := range ts {
			out = append(out, at.Sub(start))
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	row.PushesAt, row.RefusedAt = offsets(pushes), offsets(since(counts.Refused))
	onRemote := map[string]bool{}
	if out, err := exec.Command("git", "-C", srv.Bare, "ls-tree", "-r", "--name-only", "HEAD", "tools").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			onRemote[f] = true
		}
	}
	var lats []time.Duration
	firstDone := time.Duration(1 << 62)
	for _, rs := range results {
		if len(rs) > 0 && rs[len(rs)-1].end < firstDone {
			firstDone = rs[len(rs)-1].end
		}
	}
	row.FairMin = 1 << 30
	for _, rs := range results {
		landed := 0
		for _, r := range rs {
			if sink != nil {
				if ph, ok := sink.phases(r.trace, r.lat); ok {
					row.Phases = append(row.Phases, ph)
					row.Spans = append(row.Spans, sink.spans(r.trace, r.path)...)
				}
			}
			row.Calls++
			lats = append(lats, r.lat)
			if r.err != nil {
				row.Failed++
				if len(row.Errors) < 5 {
					row.Errors = append(row.Errors, r.err.Error())
				}
			} else if r.end <= firstDone {
				landed++
			}
			if onRemote[r.path] {
				row.Landed++
			} else {
				row.Missing++
			}
		}
		row.FairMin, row.FairMax = min(row.FairMin, landed), max(row.FairMax, landed)
	}
	row.P50, row.P99, row.Max = percentile(lats, 0.50), percentile(lats, 0.99), percentile(lats, 1)
	return row
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// writer is one agent.
type writer interface {
	write(ctx context.Context, path, content string) error
	close()
}

func newWriter(ctx context.Context, spec Spec, srv *Server, env []string, mdir, root string) (writer, error) {
	switch spec.Mode {
	case "proc":
		// The root is cloned now (tgp boot), as the other modes' are: the
		// table measures writes, and a first call cloning while the remote
		// is down (PauseAt) has nothing to say pending, only a failed boot.
		cmd := exec.CommandContext(ctx, spec.TgpBin, "boot", "--root", root)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tgp boot: %v: %s", err, out)
		}
		return &procWriter{bin: spec.TgpBin, env: env, root: root}, nil
	case "kernel":
		opts := []kernel.Option{kernel.WithEnviron(env), kernel.WithRoot(root),
			kernel.WithSetting("git.remote", srv.URL),
			kernel.WithSetting("git.author.name", "Agent"), kernel.WithSetting("git.author.email", "agent@example.com"),
			kernel.WithSetting("git.lock_dir", filepath.Join(mdir, "cache", "tgp", "locks"))}
		// The kernel reads Spec.Env's TGP_* settings from env, as a
		// process does (TGP_GIT_PUSHES_PER_MINUTE is git.pushes_per_minute,
		// which no dots-for-underscores mapping would find).
		k, err := kernel.New(ctx, opts...)
		if err != nil {
			return nil, err
		}
		if err := k.Boot(ctx); err != nil {
			return nil, err
		}
		return &kernelWriter{k: k}, nil
	case "gitcli":
		dir := root
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, "git", "clone", "-q", srv.URL, dir)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git clone: %v: %s", err, out)
		}
		return &gitWriter{dir: dir, env: env}, nil
	}
	return nil, fmt.Errorf("unknown mode %q (proc, kernel, gitcli)", spec.Mode)
}

type procWriter struct {
	bin, root string
	env       []string
}

func (w *procWriter) write(ctx context.Context, p, content string) error {
	args, _ := json.Marshal(map[string]string{"path": p, "content": content})
	cmd := exec.CommandContext(ctx, w.bin, "call", "write_file", string(args), "--root", w.root)
	cmd.Env = append(w.env[:len(w.env):len(w.env)], traceEnv(ctx)...)
	out, err := cmd.Output()
	var r struct {
		OK    bool `json:"ok"`
		Error *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if jerr := json.Unmarshal(out, &r); jerr != nil || !r.OK {
		msg := strings.TrimSpace(string(out))
		if r.Error != nil {
			msg = r.Error.Kind + ": " + r.Error.Message
		}
		if ee, ok := err.(*exec.ExitError); ok && msg == "" {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return fmt.Errorf("%s: %v %s", p, err, msg)
	}
	return nil
}

func (w *procWriter) close() {}

type kernelWriter struct{ k *kernel.Kernel }

func (w *kernelWriter) write(ctx context.Context, p, content string) error {
	args, _ := json.Marshal(map[string]string{"path": p, "content": content})
	_, err := w.k.Call(ctx, "write_file", args)
	return err
}

func (w *kernelWriter) close() { _ = w.k.Shutdown(context.Background()) }

// gitWriter is the peer: commit, then git pull --rebase until git push
// succeeds (bounded by the call's context).
type gitWriter struct {
	dir string
	env []string
}

func (w *gitWriter) git(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", w.dir}, args...)...)
	cmd.Env = w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (w *gitWriter) write(ctx context.Context, p, content string) error {
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		return err
	}
	if err := w.git(ctx, "add", p); err != nil {
		return err
	}
	if err := w.git(ctx, "commit", "-q", "-m", "forge: "+p); err != nil {
		return err
	}
	for {
		err := w.git(ctx, "push", "-q", "origin", "HEAD:main")
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		_ = w.git(ctx, "pull", "-q", "--rebase", "origin", "main")
	}
}

func (w *gitWriter) close() {}

// Table formats rows as a Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| row | transport | RTT | M×A×W | writes/s | p50 | p99 | max | failed calls | not on remote | fairness (min–max) | pushes | refused pushes | max pushes/min | reads | max reads/s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %v | %d×%d×%d | %.1f | %.2fs | %.2fs | %.2fs | %d/%d | %d/%d | %d–%d | %d | %d | %d | %d | %d |\n",
			r.Name, r.Transport, 2*r.Link.Delay, r.Machines, r.Agents, r.Writes, r.WritesPerSecond(),
			r.P50.Seconds(), r.P99.Seconds(), r.Max.Seconds(), r.Failed, r.Calls, r.Missing, r.Calls, r.FairMin, r.FairMax,
			r.Pushes, r.RefusedPushes, r.MaxPushesPerMinute, r.Reads, r.MaxReadsPerSecond)
	}
	return b.String()
}
