package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// ServeWorker is a worker process's whole life: it reads the config frame,
// puts the process under its address-space limit, then runs one exec at a
// time until in ends. Files, SQL and fetch go back to the parent as call
// frames, so the jail, the database transaction and the network allow-list
// stay in the kernel; the worker holds nothing but the tool's code.
//
// out must be the protocol's alone: the caller points os.Stdout elsewhere
// before calling (a stray print would corrupt the framing).
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	first, err := readFrame(br)
	if err != nil {
		return fmt.Errorf("sandbox worker: read config: %w", err)
	}
	if first.Type != frameConfig || first.Config == nil {
		return fmt.Errorf("sandbox worker: first frame is %q, want %q", first.Type, frameConfig)
	}
	cfg := first.Config
	if cfg.AddrLimit > 0 {
		if err := limitAddressSpace(cfg.AddrLimit); err != nil {
			return fmt.Errorf("sandbox worker: address-space limit: %w", err)
		}
	}
	if cfg.DataLimit > 0 {
		if err := limitData(cfg.DataLimit); err != nil {
			return fmt.Errorf("sandbox worker: data limit: %w", err)
		}
	}
	if cfg.MemLimit > 0 {
		// The GC works harder as the heap nears the budget, and freed
		// pages go back to the OS before the heap grows past it, so
		// garbage and freed-but-resident memory do not push the worker's
		// resident set past the budget plus the runtime (charges keep the
		// live heap within the budget: the GC does not thrash).
		debug.SetMemoryLimit(int64(cfg.MemLimit + workerGoHeadroom))
	}
	ws := &workerSide{out: out, pending: map[uint64]chan *frame{}}
	opts := []Option{
		WithMemoryLimitMB(int(cfg.MemLimit >> 20)),
		WithTimeout(time.Duration(cfg.TimeoutMS) * time.Millisecond),
		WithAllowedImports(cfg.Imports...),
		WithAllowedFetchURLs(cfg.FetchURLs...),
		WithWriteDirs(cfg.WriteDirs...),
		WithMaxLogBytes(cfg.MaxLogBytes),
		WithMaxCallStack(cfg.MaxStack),
		WithHTTPClient(&http.Client{Transport: bridgeTransport{ws}}),
	}
	if cfg.Seed != nil {
		opts = append(opts, WithRandSeed(*cfg.Seed))
	}
	// The host functions run in the parent: each is a call over the pipe.
	for _, name := range cfg.HostFuncs {
		opts = append(opts, WithHostFuncs(HostFunc{Name: name, Call: func(ctx context.Context, arg json.RawMessage) (json.RawMessage, error) {
			rep, err := ws.call(ctx, &frame{Op: "host_func", Func: name, Arg: arg})
			if err != nil {
				return nil, err
			}
			return rep.Result, nil
		}}))
	}
	r := New(opts...)
	r.memLimit = cfg.MemLimit
	r.boundGoMemory = cfg.MemLimit > 0
	r.maxFetch = cfg.MaxFetch
	r.modulesDir = cfg.ModulesDir
	warmUp(ctx, r)
	if err := ws.send(&frame{Type: frameReady}); err != nil {
		return err
	}

	execs := make(chan *frame, 1)
	readErr := make(chan error, 1)
	go func() {
		for {
			f, err := readFrame(br)
			if err != nil {
				readErr <- err
				return
			}
			switch f.Type {
			case frameReply:
				ws.deliver(f)
			case frameExec:
				execs <- f
			case frameCancel:
				ws.cancel(f.ID)
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil // the parent closed the pipe: done
			}
			return err
		case f := <-execs:
			if err := ws.run(ctx, r, f); err != nil {
				return err
			}
		}
	}
}

// warmUp compiles and runs a trivial tool so the first real exec finds
// esbuild and the lockdown ready.
func warmUp(ctx context.Context, r *Runner) {
	_, _ = r.Exec(ctx, Request{Path: "warmup.ts", Source: []byte("export default () => 1;\n")})
}

// workerSide is the worker's end of the pipe.
type workerSide struct {
	wmu     sync.Mutex
	out     io.Writer
	nextID  atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan *frame
	runID   uint64
	stop    context.CancelFunc
	stopped uint64 // a cancel that arrived before its run started
}

func (ws *workerSide) send(f *frame) error {
	ws.wmu.Lock()
	defer ws.wmu.Unlock()
	return writeFrame(ws.out, f)
}

func (ws *workerSide) deliver(f *frame) {
	ws.mu.Lock()
	ch := ws.pending[f.ID]
	delete(ws.pending, f.ID)
	ws.mu.Unlock()
	if ch != nil {
		ch <- f
	}
}

func (ws *workerSide) cancel(id uint64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.runID == id && ws.stop != nil {
		ws.stop()
		return
	}
	ws.stopped = id
}

// runKey carries the exec frame's id in the run's context.
type runKey struct{}

// call sends a bridge call and waits for the parent's reply.
func (ws *workerSide) call(ctx context.Context, f *frame) (*frame, error) {
	f.Type = frameCall
	f.ID = ws.nextID.Add(1)
	f.Run, _ = ctx.Value(runKey{}).(uint64)
	ch := make(chan *frame, 1)
	ws.mu.Lock()
	ws.pending[f.ID] = ch
	ws.mu.Unlock()
	if err := ws.send(f); err != nil {
		ws.mu.Lock()
		delete(ws.pending, f.ID)
		ws.mu.Unlock()
		return nil, err
	}
	select {
	case rep := <-ch:
		if rep.Err != "" {
			switch rep.Kind {
			case KindPermissionDenied:
				return rep, &PermissionError{Msg: rep.Err}
			case KindSecretUnavailable:
				return rep, &SecretError{Msg: rep.Err}
			}
			if rep.Denied {
				return rep, &deniedError{msg: rep.Err}
			}
			return rep, errors.New(rep.Err)
		}
		return rep, nil
	case <-ctx.Done():
		ws.mu.Lock()
		delete(ws.pending, f.ID)
		ws.mu.Unlock()
		return nil, ctx.Err()
	}
}

// run executes one exec frame and answers with done.
func (ws *workerSide) run(ctx context.Context, r *Runner, f *frame) error {
	x := f.Exec
	if x == nil {
		return ws.send(&frame{Type: frameDone, ID: f.ID, Outcome: &Outcome{Logs: []string{},
			Error: &ExecError{Kind: KindRuntime, Message: "sandbox worker: exec frame without a request"}}})
	}
	runCtx, stop := context.WithCancel(context.WithValue(ctx, runKey{}, f.ID))
	defer stop()
	ws.mu.Lock()
	ws.runID, ws.stop = f.ID, stop
	if ws.stopped == f.ID {
		stop()
	}
	ws.mu.Unlock()
	req := Request{Path: x.Path, Source: x.Source, Args: x.Args, Timeout: time.Duration(x.TimeoutMS) * time.Millisecond,
		policy: &runPolicy{perms: x.Perms, placeholders: x.Secrets, unavailable: x.SecretErrs}}
	if x.HasFS {
		req.FS = bridgeFS{ws, runCtx}
	}
	if x.HasSQL {
		req.SQL = bridgeSQL{ws}
	}
	out, err := r.Exec(runCtx, req)
	if err != nil {
		out = &Outcome{Logs: []string{}, Error: &ExecError{Kind: KindRuntime, Message: err.Error()}}
	}
	ws.mu.Lock()
	ws.runID, ws.stop = 0, nil
	ws.mu.Unlock()
	if out.Error != nil && out.Error.Kind == KindMemoryLimit {
		// The parent replaces this worker, but give the memory back
		// while it does.
		runtime.GC()
		debug.FreeOSMemory()
	}
	return ws.send(&frame{Type: frameDone, ID: f.ID, Outcome: out})
}

// bridgeFS is the FS a tool sees in a worker: every call is served by the
// parent's FS (the kernel's jail).
type bridgeFS struct {
	ws  *workerSide
	ctx context.Context
}

func (b bridgeFS) ReadFile(p string) ([]byte, error) {
	rep, err := b.ws.call(b.ctx, &frame{Op: "read_file", Path: p})
	if err != nil {
		return nil, err
	}
	return rep.Data, nil
}

func (b bridgeFS) ListFiles(dir string) ([]string, error) {
	rep, err := b.ws.call(b.ctx, &frame{Op: "list_files", Path: dir})
	if err != nil {
		return nil, err
	}
	return rep.Files, nil
}

func (b bridgeFS) WriteFile(p string, data []byte) error {
	_, err := b.ws.call(b.ctx, &frame{Op: "write_file", Path: p, Data: data})
	return err
}

// bridgeSQL runs statements in the parent's session (its transaction).
type bridgeSQL struct{ ws *workerSide }

func (b bridgeSQL) Exec(ctx context.Context, query string, params []any) (any, error) {
	rep, err := b.ws.call(ctx, &frame{Op: "exec_sql", Query: query, Params: params})
	if err != nil {
		return nil, err
	}
	var v any
	if len(rep.Result) > 0 {
		if err := json.Unmarshal(rep.Result, &v); err != nil {
			return nil, fmt.Errorf("exec_sql: decode result: %w", err)
		}
	}
	return v, nil
}

// bridgeTransport sends tgp.fetch's requests to the parent, which checks
// the allow-list again and makes them with its own client.
type bridgeTransport struct{ ws *workerSide }

func (t bridgeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	h := map[string]string{}
	for k := range req.Header {
		h[k] = req.Header.Get(k)
	}
	rep, err := t.ws.call(req.Context(), &frame{Op: "fetch", Method: req.Method, URL: req.URL.String(), Headers: h, Data: body})
	if err != nil {
		return nil, err
	}
	resp := &http.Response{
		StatusCode:    rep.Status,
		Status:        fmt.Sprintf("%d %s", rep.Status, http.StatusText(rep.Status)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{},
		Body:          io.NopCloser(bytes.NewReader(rep.Data)),
		ContentLength: int64(len(rep.Data)),
		Request:       req,
	}
	for k, v := range rep.Headers {
		resp.Header.Set(k, v)
	}
	return resp, nil
}

// ServeWorkerIfRequested makes a program that embeds the kernel its own
// sandbox worker under sandbox.isolation: process. When the process was
// started as a worker (its first argument is WorkerSubcommand) it serves
// the protocol and exits; otherwise it returns at once. The package's init
// calls it, before any main runs: a program need not (calling it is
// harmless).
func ServeWorkerIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != WorkerSubcommand {
		return
	}
	out := os.Stdout
	// The protocol owns stdout: stray prints go to stderr, where the
	// parent keeps the last lines.
	os.Stdout = os.Stderr
	if err := ServeWorker(context.Background(), os.Stdin, out); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
