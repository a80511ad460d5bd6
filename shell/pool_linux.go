//go:build linux

package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"
)

// A warm helper is the Landlock helper started ahead of need: it waits on
// a socket for one job (the ruleset, the program, its argv, environment,
// directory and standard files passed as descriptors), applies it and
// executes the program. Starting the (large) helper binary is most of what
// an external command costs; a warm one hides it.

// poolArg is the helper's argument for a warm start.
const poolArg = "--warm"

// warmJob is what a warm helper is sent.
type warmJob struct {
	Spec landlockSpec `json:"spec"`
	Path string       `json:"path"`
	Argv []string     `json:"argv"`
	Env  []string     `json:"env"`
	Dir  string       `json:"dir"`
}

type warm struct {
	cmd  *exec.Cmd
	sock *os.File
}

// helperPool keeps a few warm helpers.
type helperPool struct {
	r    *Runner
	size int

	mu      sync.Mutex
	idle    []*warm
	closed  bool
	filling int
}

func newHelperPool(r *Runner, size int) *helperPool { return &helperPool{r: r, size: size} }

// start launches one warm helper: its own process group from the start,
// killed if the kernel dies, an empty environment until the job's.
func (p *helperPool) start() (*warm, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	parent, child := os.NewFile(uintptr(fds[0]), "warm"), os.NewFile(uintptr(fds[1]), "warm-child")
	defer child.Close()
	cmd := exec.Command(p.r.helper[0], append(append([]string{}, p.r.helper[1:]...), poolArg)...)
	// One P: fewer threads for the ruleset to be applied to.
	cmd.Env = []string{"GOMAXPROCS=1"}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = procAttr(false)
	if err := cmd.Start(); err != nil {
		parent.Close()
		return nil, err
	}
	return &warm{cmd: cmd, sock: parent}, nil
}

// take returns a warm helper (or a fresh one) and tops the pool up in the
// background.
func (p *helperPool) take() (*warm, error) {
	p.mu.Lock()
	var w *warm
	if n := len(p.idle); n > 0 {
		w, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	need := p.size - len(p.idle) - p.filling
	if p.closed {
		need = 0
	}
	p.filling += max(need, 0)
	p.mu.Unlock()
	for i := 0; i < need; i++ {
		go func() {
			nw, err := p.start()
			p.mu.Lock()
			p.filling--
			if err == nil && !p.closed && len(p.idle) < p.size {
				p.idle = append(p.idle, nw)
				nw = nil
			}
			p.mu.Unlock()
			if nw != nil {
				nw.kill()
			}
		}()
	}
	if w != nil {
		return w, nil
	}
	return p.start()
}

func (w *warm) kill() {
	_ = w.sock.Close()
	_ = killGroup(w.cmd.Process.Pid)
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// close kills the idle helpers.
func (p *helperPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, w := range idle {
		w.kill()
	}
}

// spawnWarm runs one external command through a warm helper. ok is false
// when no warm helper could take the job (the caller starts one directly).
func (x *run) spawnWarm(ctx context.Context, hc interp.HandlerContext, path string, args []string) (err error, ok bool) {
	w, err := x.r.pool.take()
	if err != nil {
		return nil, false
	}
	job, err := json.Marshal(warmJob{Spec: x.spec(), Path: path, Argv: args, Env: x.childEnv(hc.Env), Dir: hc.Dir})
	if err != nil {
		w.kill()
		return x.stop(err), true
	}
	files, wait, cleanup, err := stdFiles(hc)
	if err != nil {
		w.kill()
		return x.stop(err), true
	}
	fds := []int{int(files[0].Fd()), int(files[1].Fd()), int(files[2].Fd())}
	serr := unix.Sendmsg(int(w.sock.Fd()), job, unix.UnixRights(fds...), nil, 0)
	cleanup() // the helper holds its copies now
	if serr != nil {
		w.kill()
		wait()
		return nil, false
	}
	pid := w.cmd.Process.Pid
	x.track(pid, true)
	stop := context.AfterFunc(ctx, func() { _ = killGroup(pid) })
	buf := make([]byte, 4096)
	n, _ := w.sock.Read(buf)
	_ = w.sock.Close()
	hs := strings.TrimSpace(string(buf[:max(n, 0)]))
	werr := w.cmd.Wait()
	stop()
	_ = killGroup(pid)
	x.track(pid, false)
	wait()
	if !strings.HasPrefix(hs, "ok ") && ctx.Err() == nil {
		if strings.HasPrefix(hs, "error ") {
			return x.stop(fmt.Errorf("shell: the Landlock helper refused to run %s: %s", args[0], strings.TrimPrefix(hs, "error "))), true
		}
		return x.stop(fmt.Errorf("shell: the Landlock helper %q did not answer (shell.WithHelper must name a program that serves `__shellexec` as shell.ServeExecIfRequested does; the tgp binary and any program linking package shell do): %v", x.r.helper[0], werr)), true
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return nil, true
	case errors.As(werr, &ee):
		if ctx.Err() != nil {
			return ctx.Err(), true
		}
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return interp.ExitStatus(128 + int(st.Signal())), true
		}
		return interp.ExitStatus(ee.ExitCode()), true
	}
	if ctx.Err() != nil {
		return ctx.Err(), true
	}
	return werr, true
}

// stdFiles gives the command's standard streams as files: the
// interpreter's own files where it has them, pipes copied to its writers
// elsewhere. wait waits (briefly) for the copies once the program ended;
// cleanup closes the parent's ends the helper received copies of.
func stdFiles(hc interp.HandlerContext) (files [3]*os.File, wait, cleanup func(), err error) {
	var toClose []*os.File
	var copies sync.WaitGroup
	fail := func(err error) ([3]*os.File, func(), func(), error) {
		for _, f := range toClose {
			f.Close()
		}
		return [3]*os.File{}, nil, nil, err
	}
	if f, ok := hc.Stdin.(*os.File); ok && f != nil {
		files[0] = f
	} else {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return fail(err)
		}
		files[0] = devnull
		toClose = append(toClose, devnull)
	}
	var readers []*os.File
	for i, w := range []io.Writer{hc.Stdout, hc.Stderr} {
		if f, ok := w.(*os.File); ok {
			files[i+1] = f
			continue
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		files[i+1] = pw
		toClose = append(toClose, pw)
		readers = append(readers, pr)
		copies.Add(1)
		go func(w io.Writer) {
			defer copies.Done()
			_, _ = io.Copy(w, pr)
		}(w)
	}
	cleanup = func() {
		for _, f := range toClose {
			f.Close()
		}
	}
	wait = func() {
		done := make(chan struct{})
		go func() { copies.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(250 * time.Millisecond):
			// A grandchild still holds the pipe: stop copying.
			for _, r := range readers {
				r.Close()
			}
			<-done
		}
		for _, r := range readers {
			r.Close()
		}
	}
	return files, wait, cleanup, nil
}

// serveWarm is the helper's side of a warm start: wait for one job on fd
// 3, take its files, directory and ruleset, answer, execute.
func serveWarm() int {
	buf := make([]byte, 4<<20)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := unix.Recvmsg(3, buf, oob, 0)
	if err != nil || n == 0 {
		return 126 // the pool closed: nothing to do
	}
	reply := func(format string, a ...any) { _, _ = unix.Write(3, []byte(fmt.Sprintf(format, a...))) }
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		reply("error no files")
		return 126
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		reply("error no files")
		return 126
	}
	var job warmJob
	if err := json.Unmarshal(buf[:n], &job); err != nil {
		reply("error bad job: %v", err)
		return 126
	}
	for i, fd := range fds {
		if err := unix.Dup3(fd, i, 0); err != nil {
			reply("error dup: %v", err)
			return 126
		}
		if fd > 2 {
			_ = unix.Close(fd)
		}
	}
	if err := unix.Chdir(job.Dir); err != nil {
		reply("error chdir %s: %v", job.Dir, err)
		return 126
	}
	abi, err := restrict(job.Spec)
	if err != nil {
		reply("error landlock: %v", err)
		return 126
	}
	reply("ok %d", abi)
	_ = unix.Close(3)
	err = execve(job.Path, job.Argv, job.Env)
	fmt.Fprintf(os.Stderr, "%s: %v\n", job.Argv[0], err)
	return 127
}
