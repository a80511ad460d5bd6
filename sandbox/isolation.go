package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	osexec "os/exec"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tgp-go/tgp/gitpath"
)

// Isolation modes (sandbox.isolation).
const (
	// IsolationInProc runs tools on goja in the kernel's process: the
	// fastest, with the in-process budget and watchdog as the memory
	// limit.
	IsolationInProc = "inproc"
	// IsolationProcess runs tools in a pool of warm worker processes,
	// each under RLIMIT_AS, killed and replaced on timeout or limit.
	IsolationProcess = "process"
)

// WorkerSubcommand is the hidden argument that makes the tgp binary a
// sandbox worker (cmd/tgp registers it).
const WorkerSubcommand = "__worker"

// workerAddrHeadroom is what a worker needs in virtual address space
// beyond the run's budget: the binary's mappings, the Go runtime's
// reservations, thread stacks, goja and esbuild. Measured on linux/amd64:
// an idle warm tgp worker maps about 1.3 GB of address space (most of it
// reserved, not resident), and the test binary about as much.
const workerAddrHeadroom = 2 << 30

// workerDataHeadroom is what a worker may map beyond the run's budget
// under RLIMIT_DATA: the runtime, goja, esbuild and the bundled packages.
// Measured on linux/amd64: about 115 MB of data mapped after a run, 150 MB
// with zod and date-fns loaded.
const workerDataHeadroom = 256 << 20

// workerGoHeadroom is the Go runtime's memory limit (GOMEMLIMIT) in a
// worker beyond the run's budget: an idle warm worker's heap, stacks and
// runtime metadata are about 30 MB of it.
const workerGoHeadroom = 64 << 20

// workerStartTimeout bounds a new worker's start and warm-up (one esbuild
// compile and one run): far more than it takes, short enough that a wrong
// worker command fails a call instead of hanging it.
const workerStartTimeout = 30 * time.Second

// workerGrace is how long past its timeout a worker may take to answer
// before it is killed: a regular expression's own match timeout is a
// second, and a native call cannot be interrupted.
const workerGrace = 2 * time.Second

// WithIsolation selects inproc (default) or process.
func WithIsolation(mode string) Option { return func(r *Runner) { r.isolation = mode } }

// WithWorkerCommand sets the argv that starts a worker (default: this
// executable with WorkerSubcommand) and extra environment entries for it.
// The worker's environment is otherwise nearly empty: tools never see the
// kernel's secrets, not even through a bug.
func WithWorkerCommand(argv []string, env ...string) Option {
	return func(r *Runner) { r.workerArgv, r.workerEnv = argv, env }
}

// WithWorkers sets how many workers may run at once (default 4).
func WithWorkers(n int) Option { return func(r *Runner) { r.workers = n } }

// WithWorkerAddressHeadroomMB sets the address space a worker gets beyond
// the memory limit (default 2048).
func WithWorkerAddressHeadroomMB(mb int) Option {
	return func(r *Runner) { r.addrHeadroom = uint64(mb) << 20 }
}

// Close stops the runner's idle workers; busy ones stop when their run
// ends. Runs after Close fail.
func (r *Runner) Close() error {
	if r.pool != nil {
		r.pool.close()
	}
	return nil
}

// pool is the parent's side: warm workers and how to make more. It holds
// no reference to its Runner, so the Runner's cleanup can close it.
type pool struct {
	argv       []string
	env        []string
	cfg        workerConfig
	httpClient *http.Client
	slots      chan struct{}

	mu     sync.Mutex
	idle   []*worker
	closed bool

	// live counts running worker processes and starts under way (so a
	// Wait after close sees every worker); peakRSS is the largest peak
	// resident set (KiB) of any that exited, for tests and diagnostics.
	live    sync.WaitGroup
	peakRSS atomic.Int64
}

func newPool(r *Runner) *pool {
	argv := r.workerArgv
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		argv = []string{exe, WorkerSubcommand}
	}
	env := []string{}
	for _, k := range []string{"GOMAXPROCS", "GODEBUG", "GOTRACEBACK", "TMPDIR", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, r.workerEnv...)
	n := r.workers
	if n <= 0 {
		n = 4
	}
	imports := make([]string, 0, len(r.imports))
	for k := range r.imports {
		imports = append(imports, k)
	}
	headroom := r.addrHeadroom
	if headroom == 0 {
		headroom = workerAddrHeadroom
	}
	var addr, data uint64
	if addressSpaceLimited && !raceBuild {
		addr = r.memLimit + headroom
	}
	if dataLimited && !raceBuild {
		data = r.memLimit + workerDataHeadroom
	}
	return &pool{argv: argv, env: env, httpClient: r.httpClient, slots: make(chan struct{}, n),
		cfg: workerConfig{MemLimit: r.memLimit, AddrLimit: addr, DataLimit: data, TimeoutMS: r.timeout.Milliseconds(),
			Imports: imports, FetchURLs: r.fetchURLs, WriteDirs: r.writeDirs, Seed: r.seed,
			MaxLogBytes: r.maxLogBytes, MaxStack: r.maxStack, MaxFetch: r.maxFetch, ModulesDir: r.modulesDir,
			HostFuncs: r.hostFuncNames()}}
}

func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.kill()
	}
}

// get takes a warm worker, or starts one.
func (p *pool) get(ctx context.Context) (*worker, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errors.New("sandbox: runner is closed")
	}
	for len(p.idle) > 0 {
		w := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if w.alive() {
			p.mu.Unlock()
			return w, nil
		}
	}
	// Counted while the pool is seen open, so a Wait after close also
	// waits for the worker this start makes.
	p.live.Add(1)
	p.mu.Unlock()
	w, err := p.start()
	p.live.Done()
	if err != nil {
		<-p.slots
		return nil, err
	}
	return w, nil
}

// put returns a worker after a run; a worker that is not reusable is
// killed and a fresh one started in the background, so the next run
// still finds one warm.
func (p *pool) put(w *worker, reuse bool) {
	defer func() { <-p.slots }()
	p.mu.Lock()
	if reuse && !p.closed && w.alive() && len(p.idle) < cap(p.slots) {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		return
	}
	closed := p.closed
	if !closed {
		p.live.Add(1) // the replacement below, counted before close can be seen
	}
	p.mu.Unlock()
	w.kill()
	if closed {
		return
	}
	go func() {
		defer p.live.Done()
		nw, err := p.start()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed || len(p.idle) >= cap(p.slots) {
			p.mu.Unlock()
			nw.kill()
			return
		}
		p.idle = append(p.idle, nw)
		p.mu.Unlock()
	}()
}

// worker is one child process.
type worker struct {
	cmd    *osexec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	frames chan *frame // closed when the worker's stdout ends
	exited chan struct{}
	stderr *tail
	runs   uint64
}

func (p *pool) start() (*worker, error) {
	cmd := osexec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	workerProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start worker %s: %w", p.argv[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start worker %s: %w", p.argv[0], err)
	}
	w := &worker{cmd: cmd, stdin: stdin, frames: make(chan *frame, 16), exited: make(chan struct{}), stderr: &tail{max: 4096}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: start worker %s: %w", p.argv[0], err)
	}
	p.live.Add(1)
	go func() {
		defer p.live.Done()
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			f, err := readFrame(br)
			if err != nil {
				break
			}
			w.frames <- f
		}
		close(w.frames)
		_ = cmd.Wait()
		for rss := peakRSSKiB(cmd.ProcessState); ; {
			old := p.peakRSS.Load()
			if rss <= old || p.peakRSS.CompareAndSwap(old, rss) {
				break
			}
		}
		close(w.exited)
	}()
	cfg := p.cfg
	sendErr := w.send(&frame{Type: frameConfig, Config: &cfg})
	notWorker := func(why string) error {
		w.kill()
		msg := fmt.Sprintf("sandbox: %s is not a sandbox worker: %s (sandbox.isolation: process runs `tgp %s`; "+
			"sandbox.worker_command must name a program that serves it as sandbox.ServeWorkerIfRequested does: a tgp binary, or any program linking package sandbox)",
			strings.Join(p.argv, " "), why, WorkerSubcommand)
		if line := firstLine(w.stderr.String()); line != "" {
			msg += ": " + line
		}
		return errors.New(msg)
	}
	if sendErr != nil {
		// It would not even take its configuration: it exited, or does
		// not read stdin.
		select {
		case <-w.exited:
			return nil, notWorker("it exited before it was ready")
		case <-time.After(time.Second):
			return nil, notWorker("it does not read its configuration: " + sendErr.Error())
		}
	}
	timer := time.NewTimer(workerStartTimeout)
	defer timer.Stop()
	select {
	case f, ok := <-w.frames:
		if !ok {
			<-w.exited
			return nil, notWorker("it exited before it was ready")
		}
		if f.Type != frameReady {
			return nil, notWorker(fmt.Sprintf("its first frame was %q", f.Type))
		}
	case <-timer.C:
		return nil, notWorker(fmt.Sprintf("it did not answer within %s", workerStartTimeout))
	}
	return w, nil
}

func (w *worker) send(f *frame) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return writeFrame(w.stdin, f)
}

func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

func (w *worker) kill() {
	_ = w.stdin.Close()
	if w.cmd.Process != nil {
		_ = w.cmd.Process.Kill()
	}
}

// exec runs one request in a worker and serves its bridge calls.
func (p *pool) exec(ctx context.Context, r *Runner, req Request, src []byte, timeout time.Duration) (*Outcome, error) {
	if ctx.Err() != nil {
		return &Outcome{Logs: []string{}, Error: &ExecError{Kind: KindCancelled, Message: "execution stopped before it started: " + ctx.Err().Error()}}, nil
	}
	w, err := p.get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return &Outcome{Logs: []string{}, Error: &ExecError{Kind: KindCancelled, Message: "execution stopped before a sandbox worker was free: " + ctx.Err().Error()}}, nil
		}
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		fresh := w.runs == 0
		w.runs++
		// The calls a run makes end with its time, as they do in process.
		callCtx, cancelCalls := context.WithTimeout(ctx, timeout)
		var calls sync.WaitGroup
		out, reuse, heard := p.converse(ctx, callCtx, w, w.runs, r, req, src, timeout, &calls)
		cancelCalls()
		calls.Wait()
		p.put(w, reuse)
		// A warm worker killed from outside while idle (an OOM killer, an
		// operator) is gone before it could say anything about this run:
		// that is the pool's loss, not the tool's, so the run gets one
		// fresh worker. A worker that died of the tool (it spoke, or left
		// a reason on stderr) is not retried.
		if attempt > 0 || fresh || heard || ctx.Err() != nil || out.Error == nil || out.Error.Kind != KindRuntime || w.stderr.String() != "" {
			return out, nil
		}
		if w, err = p.get(ctx); err != nil {
			return out, nil
		}
	}
}

// converse sends the exec frame and answers the worker until it is done,
// dies, or outlives its deadline. reuse says whether the worker may run
// again; heard, whether it sent anything for this run.
func (p *pool) converse(ctx, callCtx context.Context, w *worker, id uint64, r *Runner, req Request, src []byte,
	timeout time.Duration, calls *sync.WaitGroup) (out *Outcome, reuse, heard bool) {
	fail := func(kind, msg string) (*Outcome, bool, bool) {
		return &Outcome{Logs: []string{}, Error: &ExecError{Kind: kind, Message: msg}}, false, heard
	}
	x := &workerExec{Path: req.Path, Source: src, Args: req.Args, TimeoutMS: timeout.Milliseconds(),
		HasFS: req.FS != nil, HasSQL: req.SQL != nil}
	if pol := req.policy; pol != nil {
		x.Perms, x.Secrets, x.SecretErrs = pol.perms, pol.placeholders, pol.unavailable
	}
	if err := w.send(&frame{Type: frameExec, ID: id, Exec: x}); err != nil {
		return fail(KindRuntime, "sandbox worker: "+err.Error())
	}
	var inflight atomic.Int32
	hard := time.NewTimer(timeout + workerGrace)
	defer hard.Stop()
	var killAt <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				out, reuse := p.died(w, ctx)
				return out, reuse, heard
			}
			heard = true
			switch f.Type {
			case frameCall:
				if f.Run != id {
					_ = w.send(&frame{Type: frameReply, ID: f.ID, Err: f.Op + ": the run that made this call has ended"})
					continue
				}
				if inflight.Load() >= maxHostCallsInFlight {
					// The worker enforces the same bound; a worker that
					// does not is not trusted to make the kernel spawn
					// without limit.
					_ = w.send(&frame{Type: frameReply, ID: f.ID, Err: fmt.Sprintf("%s: too many host calls in flight (%d)", f.Op, maxHostCallsInFlight)})
					continue
				}
				inflight.Add(1)
				calls.Add(1)
				go func() {
					defer calls.Done()
					defer inflight.Add(-1)
					rep := serveCall(callCtx, r, p.httpClient, req, f)
					rep.Type, rep.ID = frameReply, f.ID
					if err := w.send(rep); err != nil {
						// Too big for a frame; if the pipe is gone this
						// fails too, and the run ends as the worker died.
						_ = w.send(&frame{Type: frameReply, ID: f.ID, Err: f.Op + ": " + err.Error()})
					}
				}()
			case frameDone:
				if f.ID != id || f.Outcome == nil {
					continue
				}
				out := f.Outcome
				if out.Logs == nil {
					out.Logs = []string{}
				}
				reuse := out.Error == nil || (out.Error.Kind != KindTimeout && out.Error.Kind != KindMemoryLimit && out.Error.Kind != KindCancelled)
				return out, reuse, heard
			}
		case <-ctxDone:
			ctxDone = nil
			_ = w.send(&frame{Type: frameCancel, ID: id})
			killAt = time.After(workerGrace)
		case <-killAt:
			w.kill()
			return fail(KindCancelled, "execution stopped: "+ctx.Err().Error()+" (the sandbox worker did not stop in time and was killed)")
		case <-hard.C:
			w.kill()
			return fail(KindTimeout, fmt.Sprintf("execution stopped: the tool ran past its %s timeout and its sandbox worker was killed", timeout))
		}
	}
}

// died classifies a worker that exited in the middle of a run.
func (p *pool) died(w *worker, ctx context.Context) (*Outcome, bool) {
	select {
	case <-w.exited:
	case <-time.After(time.Second):
		w.kill()
		<-w.exited
	}
	msg := w.stderr.String()
	kind := KindRuntime
	text := "the sandbox worker exited unexpectedly"
	switch {
	case strings.Contains(msg, "out of memory") || strings.Contains(msg, "cannot allocate memory") ||
		strings.Contains(msg, "failed to create new OS thread") ||
		// The Go runtime's own words when RLIMIT_AS stops it growing its
		// heap arena rather than a single allocation.
		strings.Contains(msg, "cannot map pages") || strings.Contains(msg, "address space") ||
		strings.Contains(msg, "cannot reserve"):
		kind = KindMemoryLimit
		text = fmt.Sprintf("memory limit of %d MB exceeded (the sandbox worker hit its address-space limit and was replaced)", p.cfg.MemLimit>>20)
	case ctx.Err() != nil:
		kind = KindCancelled
		text = "execution stopped: " + ctx.Err().Error()
	default:
		if st := w.cmd.ProcessState; st != nil {
			text += " (" + st.String() + ")"
		}
		if line := firstLine(msg); line != "" {
			text += ": " + line
		}
	}
	return &Outcome{Logs: []string{}, Error: &ExecError{Kind: kind, Message: text}}, false
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "goroutine ") {
			return l
		}
	}
	return ""
}

// serveCall answers one bridge call with the kernel's FS, SQL and HTTP
// client. The checks the sandbox makes in process are made again here: the
// worker runs hostile code, so the parent trusts none of what it asks.
func serveCall(ctx context.Context, r *Runner, client *http.Client, req Request, f *frame) *frame {
	rep := &frame{}
	fail := func(err error) *frame {
		rep.Err, rep.Denied = err.Error(), errors.Is(err, fs.ErrPermission)
		switch {
		case errors.Is(err, ErrPermissionDenied):
			rep.Kind = KindPermissionDenied
		case errors.Is(err, ErrSecretUnavailable):
			rep.Kind = KindSecretUnavailable
		case errors.As(err, new(securityErr)):
			rep.Denied = true
		}
		return rep
	}
	switch f.Op {
	case "read_file", "list_files", "write_file":
		if req.FS == nil {
			return fail(errors.New("no filesystem available"))
		}
	}
	switch f.Op {
	case "read_file":
		b, err := req.FS.ReadFile(f.Path)
		if err != nil {
			return fail(err)
		}
		rep.Data = b
	case "list_files":
		files, err := req.FS.ListFiles(f.Path)
		if err != nil {
			return fail(err)
		}
		rep.Files = files
	case "write_file":
		if err := r.checkWrite(req.policy, f.Path); err != nil {
			var se securityErr
			if errors.As(err, &se) {
				return fail(denied("sandbox: write access denied for %q", f.Path))
			}
			return fail(err)
		}
		if err := gitpath.Verify(path.Clean(f.Path), false); err != nil {
			return fail(denied("sandbox: %v", err))
		}
		if len(f.Data) > 16<<20 {
			return fail(errors.New("write_file: content over 16 MiB"))
		}
		if err := req.FS.WriteFile(f.Path, f.Data); err != nil {
			return fail(err)
		}
	case "exec_sql":
		if req.SQL == nil {
			return fail(errors.New("exec_sql: no database is configured for this kernel"))
		}
		res, err := req.SQL.Exec(ctx, f.Query, f.Params)
		if err != nil {
			return fail(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return fail(fmt.Errorf("exec_sql: encode result: %w", err))
		}
		rep.Result = b
	case "fetch":
		res, err := r.doFetch(ctx, client, req.policy, f.Method, f.URL, f.Headers, f.Data)
		if err != nil {
			var se securityErr
			if errors.As(err, &se) {
				return fail(denied("sandbox: URL %q is not in the allowed list", f.URL))
			}
			return fail(err)
		}
		rep.Status, rep.Data, rep.Headers = res.status, res.body, res.headers
	case "host_func":
		// Only the kernel's own functions, whatever name the worker asks.
		res, err := r.callHost(ctx, f.Func, f.Arg)
		if err != nil {
			return fail(err)
		}
		rep.Result = res
	default:
		return fail(fmt.Errorf("sandbox worker: unknown call %q", f.Op))
	}
	return rep
}

// tail keeps the first and the last bytes a worker wrote to stderr (why
// it died): the Go runtime's fatal error ("fatal error: out of memory")
// comes first, and a goroutine dump after it can be far longer than max.
type tail struct {
	mu   sync.Mutex
	max  int
	head []byte
	b    []byte
	cut  bool // bytes were dropped between head and b
}

// tailHead is how much of the start of stderr is kept.
const tailHead = 512

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := tailHead - len(t.head); n > 0 {
		t.head = append(t.head, p[:min(n, len(p))]...)
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.cut {
		return string(t.b)
	}
	return string(t.head) + "\n...\n" + string(t.b)
}
