package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"net/http"
	"path"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	nodeurl "github.com/dop251/goja_nodejs/url"

	"github.com/tgp-go/tgp/gitpath"
)

// execution is one run: a fresh Runtime, its module cache, its event loop
// and its watchdogs.
type execution struct {
	ctx  context.Context
	r    *Runner
	req  Request
	out  *Outcome
	vm   *goja.Runtime
	jobs chan func() error
	done chan struct{}
	wg   sync.WaitGroup
	stop func() bool
	once sync.Once
	// loop-goroutine state
	pending   int
	inflight  int // host calls running off the loop (hostAsync)
	logBytes  int
	logsCut   bool
	modules   map[string]*goja.Object
	timers    map[int64]*time.Timer
	timerID   int64
	rejected  []*goja.Promise
	intrMu    sync.Mutex
	interrupt *interruption
	heapBase  uint64  // Go heap object bytes when the run started
	goCeiling uint64  // in a worker: what its Go runtime may hold (0: no such bound)
	small     float64 // small charges not yet checked (the VM's goroutine only)
}

func newExecution(ctx context.Context, r *Runner, req Request, out *Outcome) *execution {
	ex := &execution{ctx: ctx, r: r, req: req, out: out,
		jobs: make(chan func() error, 64), done: make(chan struct{}),
		modules: map[string]*goja.Object{}, timers: map[int64]*time.Timer{}}
	ex.vm = goja.New()
	ex.vm.SetMaxCallStackSize(r.maxStack)
	ex.vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	if r.seed != nil {
		src := rand.New(rand.NewSource(*r.seed))
		ex.vm.SetRandSource(src.Float64)
	}
	ex.vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		switch op {
		case goja.PromiseRejectionReject:
			ex.rejected = append(ex.rejected, p)
		case goja.PromiseRejectionHandle:
			for i, q := range ex.rejected {
				if q == p {
					ex.rejected = append(ex.rejected[:i], ex.rejected[i+1:]...)
					break
				}
			}
		}
	})
	ex.stop = context.AfterFunc(ctx, func() {
		kind := KindTimeout
		if errors.Is(ctx.Err(), context.Canceled) {
			kind = KindCancelled
		}
		ex.halt(interruption{kind: kind, msg: "execution stopped: " + ctx.Err().Error()})
	})
	ex.heapBase = heapObjects()
	if r.boundGoMemory {
		// What the runtime holds now, less the free pages (which the
		// run may reuse: they count against it), plus the budget.
		held, free := goMemory()
		ex.goCeiling = held - free + r.memLimit
	}
	go ex.watchMemory()
	return ex
}

func (ex *execution) halt(i interruption) {
	ex.intrMu.Lock()
	if ex.interrupt == nil {
		ex.interrupt = &i
	}
	ex.intrMu.Unlock()
	ex.vm.Interrupt(i)
}

func (ex *execution) close() {
	ex.once.Do(func() {
		ex.stop()
		close(ex.done)
		for _, t := range ex.timers {
			t.Stop()
		}
		ex.wg.Wait()
	})
}

// chargeFloor is the size below which charges are batched: one heap read
// per megabyte of small buffers keeps a loop of tiny typed arrays cheap.
const chargeFloor = 1 << 20

// heapObjects reads the Go heap's object bytes (about 250 ns). Large
// allocations count here as soon as they are made, touched or not, which
// is what makes a check before the next one deterministic.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	return 0
}

// goMemory reads what the Go runtime holds from the OS, less what it
// has released (live and dead objects, free heap pages not yet given
// back, stacks, metadata: a worker's resident set apart from the binary),
// and how much of it is free heap pages.
func goMemory() (held, free uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	for _, x := range s {
		if x.Value.Kind() != metrics.KindUint64 {
			return 0, 0
		}
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64(), s[2].Value.Uint64()
}

// fits says whether bytes more fit the run's budget: the heap the run
// has grown and, in a worker (goCeiling set), everything its Go runtime
// holds, so that free pages a collection left resident count too.
func (ex *execution) fits(bytes float64) bool {
	if float64(ex.heapGrowth())+bytes > float64(ex.r.memLimit) {
		return false
	}
	if ex.goCeiling == 0 {
		return true
	}
	held, _ := goMemory()
	return float64(held)+bytes <= float64(ex.goCeiling)
}

func (ex *execution) heapGrowth() uint64 {
	if cur := heapObjects(); cur > ex.heapBase {
		return cur - ex.heapBase
	}
	return 0
}

// charge is called before a native call allocates about bytes (buffers,
// string and array amplifiers, JSON.parse): if the heap the run has grown
// plus the request would pass the limit, the run ends with memory_limit
// and the allocation never happens. The check is against the live heap,
// not a running sum, so a tool that makes and drops buffers in a loop is
// not refused; garbage gets one forced collection before a refusal.
func (ex *execution) charge(bytes float64) {
	if !(bytes > 0) {
		return
	}
	if bytes < chargeFloor {
		ex.small += bytes
		if ex.small < chargeFloor {
			return
		}
		bytes, ex.small = ex.small, 0
	}
	if ex.reserve(bytes) {
		return
	}
	ex.halt(interruption{kind: KindMemoryLimit, msg: fmt.Sprintf("memory limit of %d MB exceeded (a single call asked for %.0f MB more)", ex.r.memLimit>>20, bytes/(1<<20))})
	panic(ex.vm.NewGoError(errors.New("memory limit exceeded")))
}

// reserve says whether bytes more fit the budget, after one collection
// if they do not at first.
func (ex *execution) reserve(bytes float64) bool {
	if ex.fits(bytes) {
		return true
	}
	if bytes <= float64(ex.r.memLimit) {
		// Garbage and free pages go first: a collection, and the freed
		// pages given back to the OS (only near the limit, so rarely).
		if ex.goCeiling > 0 {
			debug.FreeOSMemory()
		} else {
			runtime.GC()
		}
		return ex.fits(bytes)
	}
	return false
}

// watchMemory interrupts the run when the Go heap grows past the limit
// (objects built in JS loops, which no single call announces).
func (ex *execution) watchMemory() {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ex.done:
			return
		case <-t.C:
			if ex.heapGrowth() > ex.r.memLimit {
				ex.halt(interruption{kind: KindMemoryLimit, msg: fmt.Sprintf("memory limit of %d MB exceeded", ex.r.memLimit>>20)})
				return
			}
		}
	}
}

// setupError classifies a failure before the tool's code ran: a timeout
// or cancellation that landed during setup (a loaded machine) is that, not
// a runtime error.
func (ex *execution) setupError(err error) *ExecError {
	ex.intrMu.Lock()
	intr := ex.interrupt
	ex.intrMu.Unlock()
	var ie *goja.InterruptedError
	if intr != nil || errors.As(err, &ie) {
		return ex.toExecError(err)
	}
	return &ExecError{Kind: KindRuntime, Message: "sandbox setup: " + err.Error()}
}

// run loads the tool, calls its default export and waits for its result.
func (ex *execution) run(comp *Compiled) (any, *ExecError) {
	// URL and URLSearchParams, as in browsers and Node (zod's url() and
	// most HTTP code need them): goja_nodejs's WHATWG implementation.
	mod := ex.vm.NewObject()
	_ = mod.Set("exports", ex.vm.NewObject())
	nodeurl.Require(ex.vm, mod)
	exports := mod.Get("exports").ToObject(ex.vm)
	_ = ex.vm.Set("URL", exports.Get("URL"))
	_ = ex.vm.Set("URLSearchParams", exports.Get("URLSearchParams"))
	// The lockdown takes this host function for its buffer wrappers.
	_ = ex.vm.Set("__tgp_charge", func(call goja.FunctionCall) goja.Value {
		ex.charge(call.Argument(0).ToFloat())
		return goja.Undefined()
	})
	// The helpers the compiled programs' string concatenations call.
	_ = ex.vm.Set("__tgp_jsonlen", func(call goja.FunctionCall) goja.Value {
		return ex.vm.ToValue(jsonQuotedLen(call.Argument(0)))
	})
	if err := ex.installStringOps(); err != nil {
		return nil, ex.setupError(err)
	}
	if _, err := ex.vm.RunProgram(ex.r.lockdown); err != nil {
		return nil, ex.setupError(err)
	}
	if err := ex.install(); err != nil {
		return nil, ex.setupError(err)
	}
	mod, err := ex.loadModule(comp)
	if err != nil {
		return nil, ex.toExecError(err)
	}
	fn, ok := defaultExport(mod)
	if !ok {
		return nil, &ExecError{Kind: KindRuntime, Path: comp.Path,
			Message: "the tool has no default export function: add `export default function (args) { ... }`"}
	}
	ret, err := fn(goja.Undefined(), ex.vm.ToValue(ex.req.Args))
	if err != nil {
		return nil, ex.toExecError(err)
	}
	if p, ok := ret.Export().(*goja.Promise); ok {
		if ret, err = ex.await(p); err != nil {
			return nil, ex.toExecError(err)
		}
	}
	if len(ex.rejected) > 0 {
		return nil, &ExecError{Kind: KindUnhandledRejected, Message: "unhandled promise rejection: " + describe(ex.rejected[0].Result())}
	}
	return ex.toJSON(ret)
}

func defaultExport(mod *goja.Object) (goja.Callable, bool) {
	exp := mod.Get("exports")
	if exp == nil {
		return nil, false
	}
	if obj, ok := exp.(*goja.Object); ok {
		if d := obj.Get("default"); d != nil {
			if fn, ok := goja.AssertFunction(d); ok {
				return fn, true
			}
		}
	}
	return goja.AssertFunction(exp)
}

// await runs the event loop until p settles: host callbacks and timers
// deliver jobs; a job's error (an interrupt raised in a continuation) ends
// the run.
func (ex *execution) await(p *goja.Promise) (goja.Value, error) {
	for p.State() == goja.PromiseStatePending {
		if ex.pending == 0 {
			return nil, &ExecError{Kind: KindRuntime, Message: "the tool's promise never settles: nothing is pending (a missing resolve?)"}
		}
		select {
		case job := <-ex.jobs:
			ex.pending--
			if err := job(); err != nil {
				return nil, err
			}
		case <-ex.ctx.Done():
			ex.intrMu.Lock()
			i := ex.interrupt
			ex.intrMu.Unlock()
			if i == nil {
				i = &interruption{kind: KindTimeout, msg: "execution stopped: " + ex.ctx.Err().Error()}
			}
			return nil, &goja.InterruptedError{}
		}
	}
	if p.State() == goja.PromiseStateRejected {
		for i, q := range ex.rejected {
			if q == p {
				ex.rejected = append(ex.rejected[:i], ex.rejected[i+1:]...)
				break
			}
		}
		return nil, rejection{p.Result()}
	}
	return p.Result(), nil
}

// rejection is the main promise's rejection reason.
type rejection struct{ v goja.Value }

func (r rejection) Error() string { return describe(r.v) }

// maxHostCallsInFlight bounds a run's unsettled tgp.read_file, fetch,
// exec_sql and other host calls.
const maxHostCallsInFlight = 256

// hostAsync runs work off the loop and settles a promise with its result.
// work runs on its own goroutine; the value it returns is built into a JS
// value on the loop goroutine (the Runtime is not goroutine-safe).
func (ex *execution) hostAsync(work func(ctx context.Context) (func() goja.Value, error)) goja.Value {
	if ex.inflight >= maxHostCallsInFlight {
		// Each call holds a goroutine (and, in process isolation, a call
		// the kernel serves): a tool that fires them without waiting must
		// not turn into a million goroutines on the host.
		panic(ex.vm.NewGoError(fmt.Errorf("too many host calls in flight (%d): await some before starting more", maxHostCallsInFlight)))
	}
	p, resolve, reject := ex.vm.NewPromise()
	ex.pending++
	ex.inflight++
	ex.wg.Add(1)
	go func() {
		defer ex.wg.Done()
		build, err := work(ex.ctx)
		job := func() error {
			ex.inflight--
			if err != nil {
				return reject(ex.jsError(err))
			}
			return resolve(build())
		}
		select {
		case ex.jobs <- job:
		case <-ex.done:
		}
	}()
	return ex.vm.ToValue(p)
}

func (ex *execution) jsError(err error) goja.Value {
	var se securityErr
	if errors.As(err, &se) {
		return ex.securityError(se.msg)
	}
	var pe *PermissionError
	if errors.As(err, &pe) {
		return ex.namedError("PermissionDenied", pe.Msg)
	}
	var sec *SecretError
	if errors.As(err, &sec) {
		return ex.namedError("SecretUnavailable", sec.Msg)
	}
	return ex.vm.NewGoError(err)
}

// namedError builds an Error whose name says the refusal's kind
// (fromValue reads it back).
func (ex *execution) namedError(name, msg string) *goja.Object {
	o := ex.vm.NewTypeError(msg)
	_ = o.Set("name", name)
	return o
}

type securityErr struct{ msg string }

func (e securityErr) Error() string { return e.msg }

// securityError builds an Error whose name is SecurityViolation.
func (ex *execution) securityError(msg string) *goja.Object {
	o := ex.vm.NewTypeError(msg)
	_ = o.Set("name", "SecurityViolation")
	return o
}

func (ex *execution) throwSecurity(format string, args ...any) {
	panic(ex.securityError(securityMessage(format, args...)))
}

// install defines console, tgp, require's built-ins and timers.
func (ex *execution) install() error {
	vm := ex.vm
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		lvl := level
		_ = console.Set(lvl, func(call goja.FunctionCall) goja.Value {
			ex.log(lvl, call.Arguments)
			return goja.Undefined()
		})
	}
	if err := vm.Set("console", console); err != nil {
		return err
	}
	tgp := vm.NewObject()
	_ = tgp.Set("log", func(call goja.FunctionCall) goja.Value { ex.log("log", call.Arguments); return goja.Undefined() })
	_ = tgp.Set("read_file", func(p string) string {
		if ex.req.FS == nil {
			panic(vm.NewGoError(errors.New("no filesystem available")))
		}
		b, err := ex.req.FS.ReadFile(p)
		if err != nil {
			ex.throwFSError("read_file", p, err)
		}
		return string(b)
	})
	_ = tgp.Set("list_files", func(dir string) []string {
		if ex.req.FS == nil {
			panic(vm.NewGoError(errors.New("no filesystem available")))
		}
		files, err := ex.req.FS.ListFiles(dir)
		if err != nil {
			ex.throwFSError("list_files", dir, err)
		}
		return files
	})
	_ = tgp.Set("write_file", func(p, content string) {
		if err := ex.r.checkWrite(ex.req.policy, p); err != nil {
			panic(ex.jsError(err))
		}
		// Git's path rules, whatever FS is behind the bridge: what a tool
		// writes gets committed, and a name some filesystem reads as .git
		// (".GIT", "git~1", ".git\u200c") is code execution for whoever
		// clones it there.
		if err := gitpath.Verify(path.Clean(p), false); err != nil {
			ex.throwSecurity("write_file('%s'): %v", p, err)
		}
		if len(content) > 16<<20 {
			panic(vm.NewTypeError("write_file: content over 16 MiB"))
		}
		if err := ex.req.FS.WriteFile(p, []byte(content)); err != nil {
			ex.throwFSError("write_file", p, err)
		}
	})
	_ = tgp.Set("fetch", func(call goja.FunctionCall) goja.Value { return ex.fetch(call) })
	_ = tgp.Set("exec_sql", func(call goja.FunctionCall) goja.Value {
		if ex.req.SQL == nil {
			panic(vm.NewTypeError("exec_sql: no database is configured for this kernel"))
		}
		q := call.Argument(0).String()
		var params []any
		if a := call.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
			if err := vm.ExportTo(a, &params); err != nil {
				panic(vm.NewTypeError("exec_sql: params must be an array"))
			}
		}
		res, err := ex.req.SQL.Exec(ex.ctx, q, params)
		if err != nil {
			panic(ex.jsError(err))
		}
		return vm.ToValue(res)
	})
	// tgp.secret returns a placeholder the host swaps for the value in a
	// fetch to the secret's URLs: the value never enters the runtime.
	_ = tgp.Set("secret", func(name string) string {
		ph, err := ex.req.policy.secret(name)
		if err != nil {
			panic(ex.jsError(err))
		}
		return ph
	})
	for _, name := range ex.r.hostFuncNames() {
		_ = tgp.Set(name, func(call goja.FunctionCall) goja.Value { return ex.callHost(name, call.Argument(0)) })
	}
	if err := vm.Set("tgp", tgp); err != nil {
		return err
	}
	_ = vm.Set("setTimeout", func(call goja.FunctionCall) goja.Value { return ex.setTimeout(call) })
	_ = vm.Set("clearTimeout", func(id int64) { ex.clearTimeout(id) })
	return nil
}

// callHost calls the host function name with arg as JSON and returns its
// JSON result as a JS value; the host's error is thrown as an Error with
// its message.
func (ex *execution) callHost(name string, arg goja.Value) goja.Value {
	vm := ex.vm
	raw := "null"
	if arg != nil && !goja.IsUndefined(arg) {
		stringify, _ := goja.AssertFunction(vm.Get("JSON").(*goja.Object).Get("stringify"))
		s, err := stringify(goja.Undefined(), arg)
		if err != nil {
			panic(vm.NewTypeError(fmt.Sprintf("tgp.%s: the argument is not JSON: %v", name, err)))
		}
		if !goja.IsUndefined(s) {
			raw = s.String()
		}
	}
	out, err := ex.r.callHost(ex.ctx, name, json.RawMessage(raw))
	if err != nil {
		panic(vm.NewGoError(fmt.Errorf("tgp.%s: %w", name, err)))
	}
	ex.charge(float64(len(out)) * 4) // the parsed value is several times the text
	parse, _ := goja.AssertFunction(vm.Get("JSON").(*goja.Object).Get("parse"))
	v, err := parse(goja.Undefined(), vm.ToValue(string(out)))
	if err != nil {
		panic(vm.NewTypeError(fmt.Sprintf("tgp.%s: the host's result is not JSON: %v", name, err)))
	}
	return v
}

// throwFSError turns a jail refusal into a SecurityViolation and other
// errors into a plain Error.
func (ex *execution) throwFSError(op, p string, err error) {
	var pe *PermissionError
	if errors.As(err, &pe) {
		panic(ex.jsError(err))
	}
	if isViolation(err) {
		ex.throwSecurity("%s('%s'): %v", op, p, err)
	}
	panic(ex.vm.NewGoError(fmt.Errorf("%s('%s'): %w", op, p, err)))
}

// writeAllowed says whether p is under one of dirs (the worker's parent
// asks it again of every write a worker relays).
func writeAllowed(dirs []string, p string) bool {
	c := path.Clean(strings.TrimPrefix(p, "./"))
	if c == "." || strings.HasPrefix(c, "../") || c == ".." || strings.HasPrefix(c, "/") {
		return false
	}
	for _, d := range dirs {
		d = path.Clean(strings.TrimPrefix(d, "./"))
		if c == d || strings.HasPrefix(c, d+"/") {
			return true
		}
	}
	return false
}

func (ex *execution) log(level string, args []goja.Value) {
	if ex.logsCut {
		return
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = describe(a)
	}
	line := strings.Join(parts, " ")
	if level == "warn" || level == "error" {
		line = "[" + level + "] " + line
	}
	if ex.logBytes+len(line) > ex.r.maxLogBytes {
		ex.out.Logs = append(ex.out.Logs, "... [logs truncated]")
		ex.logsCut = true
		return
	}
	ex.logBytes += len(line)
	ex.out.Logs = append(ex.out.Logs, line)
}

// describe renders a value for logs and messages: strings as they are,
// errors with their name, the rest as JSON where possible.
func describe(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if s, ok := v.Export().(string); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			if msg := o.Get("message"); msg != nil {
				name := "Error"
				if n := o.Get("name"); n != nil {
					name = n.String()
				}
				return name + ": " + msg.String()
			}
		}
	}
	if b, err := json.Marshal(v.Export()); err == nil {
		return string(b)
	}
	return v.String()
}

const maxTimers = 1000

func (ex *execution) setTimeout(call goja.FunctionCall) goja.Value {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(ex.vm.NewTypeError("setTimeout: callback must be a function"))
	}
	if len(ex.timers) >= maxTimers {
		panic(ex.vm.NewTypeError("setTimeout: too many timers (sandbox limit)"))
	}
	ms := call.Argument(1).ToInteger()
	if ms < 0 {
		ms = 0
	}
	ex.timerID++
	id := ex.timerID
	ex.pending++
	ex.timers[id] = time.AfterFunc(time.Duration(ms)*time.Millisecond, func() {
		job := func() error {
			if _, live := ex.timers[id]; !live {
				return nil
			}
			delete(ex.timers, id)
			_, err := fn(goja.Undefined())
			return err
		}
		select {
		case ex.jobs <- job:
		case <-ex.done:
		}
	})
	return ex.vm.ToValue(id)
}

func (ex *execution) clearTimeout(id int64) {
	if t, ok := ex.timers[id]; ok {
		delete(ex.timers, id)
		if t.Stop() {
			ex.pending--
		}
	}
}

// fetch implements tgp.fetch: the URL must be under the configuration's
// allow-list and the tool's permissions.fetch; the request itself is made
// by doFetch, off the loop (in a worker: by the host, over the pipe).
func (ex *execution) fetch(call goja.FunctionCall) goja.Value {
	url := call.Argument(0).String()
	if err := ex.r.checkFetch(ex.req.policy, url); err != nil {
		panic(ex.jsError(err))
	}
	method, body := "GET", ""
	headers := map[string]string{}
	if init, ok := call.Argument(1).(*goja.Object); ok {
		if m := init.Get("method"); m != nil && !goja.IsUndefined(m) {
			method = strings.ToUpper(m.String())
		}
		if b := init.Get("body"); b != nil && !goja.IsUndefined(b) {
			body = b.String()
		}
		if h, ok := init.Get("headers").(*goja.Object); ok {
			for _, k := range h.Keys() {
				headers[k] = h.Get(k).String()
			}
		}
	}
	return ex.hostAsync(func(ctx context.Context) (func() goja.Value, error) {
		rep, err := ex.r.doFetch(ctx, ex.r.httpClient, ex.req.policy, method, url, headers, []byte(body))
		if err != nil {
			return nil, err
		}
		h := map[string]string{}
		for k, v := range rep.headers {
			h[strings.ToLower(k)] = v
		}
		status, b := rep.status, rep.body
		return func() goja.Value {
			vm := ex.vm
			o := vm.NewObject()
			_ = o.Set("status", status)
			_ = o.Set("statusText", http.StatusText(status))
			_ = o.Set("ok", status >= 200 && status < 300)
			_ = o.Set("headers", h)
			_ = o.Set("url", url)
			text := string(b)
			_ = o.Set("text", func() goja.Value {
				p, resolve, _ := vm.NewPromise()
				_ = resolve(text)
				return vm.ToValue(p)
			})
			_ = o.Set("json", func() goja.Value {
				p, resolve, reject := vm.NewPromise()
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					_ = reject(vm.NewTypeError("response is not JSON: " + err.Error()))
				} else {
					_ = resolve(v)
				}
				return vm.ToValue(p)
			})
			return o
		}, nil
	})
}

// toJSON checks the result is JSON-serialisable and returns it as plain
// Go values (maps, slices, float64, string, bool, nil).
func (ex *execution) toJSON(v goja.Value) (any, *ExecError) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	if err := checkSerializable(v, map[*goja.Object]bool{}, "result"); err != nil {
		return nil, &ExecError{Kind: KindNotSerializable, Message: err.Error()}
	}
	stringify, _ := goja.AssertFunction(ex.vm.Get("JSON").(*goja.Object).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		ex.intrMu.Lock()
		intr := ex.interrupt
		ex.intrMu.Unlock()
		if intr != nil { // stringify's charge: the result is too big
			return nil, ex.toExecError(err)
		}
		return nil, &ExecError{Kind: KindNotSerializable, Message: "result is not JSON-serialisable: " + err.Error()}
	}
	var out any
	if goja.IsUndefined(s) {
		return nil, nil
	}
	// The text's bytes and the decoded values, counted like any charge.
	if str, ok := s.(goja.String); ok {
		if n := float64(str.Length()) * 4; n >= chargeFloor && !ex.reserve(n) {
			return nil, &ExecError{Kind: KindMemoryLimit, Message: fmt.Sprintf("memory limit of %d MB exceeded (decoding a result of %d characters)", ex.r.memLimit>>20, str.Length())}
		}
	}
	if err := json.Unmarshal([]byte(s.String()), &out); err != nil {
		return nil, &ExecError{Kind: KindNotSerializable, Message: err.Error()}
	}
	return out, nil
}

func checkSerializable(v goja.Value, onPath map[*goja.Object]bool, where string) error {
	switch v.ExportType() {
	case nil:
		return nil
	}
	if _, ok := goja.AssertFunction(v); ok {
		return fmt.Errorf("%s is a function: return data, not functions", where)
	}
	if _, ok := v.Export().(*big.Int); ok {
		return fmt.Errorf("%s is a BigInt: convert it to a number or string", where)
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	if onPath[o] {
		return fmt.Errorf("%s contains a cycle", where)
	}
	if toJSON := o.Get("toJSON"); toJSON != nil {
		if _, ok := goja.AssertFunction(toJSON); ok {
			return nil // Date and friends serialise themselves
		}
	}
	onPath[o] = true
	defer delete(onPath, o)
	for _, k := range o.Keys() {
		if err := checkSerializable(o.Get(k), onPath, where+"."+k); err != nil {
			return err
		}
	}
	return nil
}
