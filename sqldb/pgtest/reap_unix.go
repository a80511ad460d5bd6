//go:build unix

package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reapLeftovers stops the servers and removes the clusters under root
// whose owner is dead: a test process killed where no parent death
// signal took its server along (or before this package set one). A
// cluster whose owner lives is another test process's, and is left
// alone; so is one being made (no owner file yet).
func reapLeftovers(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "tgp-pg-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || alive(owner) {
			continue
		}
		if pid, ok := postmasterPID(filepath.Join(d, "data")); ok && alive(pid) && isPostgres(pid) {
			stopPID(pid)
		}
		_ = os.RemoveAll(d)
	}
}

// postmasterPID reads the server's PID from the first line of
// postmaster.pid in its data directory.
func postmasterPID(data string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return pid, err == nil && pid > 0
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return (err == nil || errors.Is(err, syscall.EPERM)) && !zombie(pid)
}

// stopPID shuts a leftover server down (SIGQUIT), then kills it.
func stopPID(pid int) {
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	for i := 0; i < 100 && alive(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
