package pgtest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// dieWithParent has the kernel send the server SIGQUIT (PostgreSQL's
// immediate shutdown, which takes its backends with it) when this
// process dies, whatever kills it. Go sets the signal after switching
// credentials, so it holds for a server run as the postgres user.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
}

// isPostgres tells a postmaster from a process that took its PID since.
func isPostgres(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(b)) == "postgres"
}

// zombie reports a process that has exited and waits to be reaped (a
// container's PID 1 may never reap what is reparented to it): it is no
// server any more.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
