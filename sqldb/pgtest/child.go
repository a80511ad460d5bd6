package pgtest

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// child is the server process. It is started from a goroutine that keeps
// its OS thread until the server has exited: on Linux the parent death
// signal fires when the thread that forked the child ends, not the
// process (prctl(2), PR_SET_PDEATHSIG), and Go ends a thread whose
// goroutine exits while locked to it.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

func startChild(cmd *exec.Cmd) (*child, error) {
	dieWithParent(cmd)
	c := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, after
		// the child.
		runtime.LockOSThread()
		defer close(c.done)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop shuts the server down as pg_ctl -m immediate does (SIGQUIT), and
// kills it if it has not exited after a while.
func (c *child) stop() error {
	if c == nil || c.exited() {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
		return errors.New("postgres did not shut down on SIGQUIT; killed")
	case <-time.After(10 * time.Second):
		return errors.New("postgres did not exit on SIGKILL")
	}
}
