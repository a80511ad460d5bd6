//go:build windows

package shell

import (
	"errors"
	"os"
	"syscall"
)

// Windows has no Landlock, process groups as used here, or exec: the
// shell runs children directly, killing them one by one.

func landlockABI() (int, string) { return 0, "Landlock exists on Linux only" }

func restrict(landlockSpec) (int, error) { return 0, errors.New("Landlock exists on Linux only") }

func execve(string, []string, []string) error { return errors.New("exec is not supported on Windows") }

func openBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, string, error) {
	return openFallback(root, rel, flag, perm)
}

func stateOf(info os.FileInfo) fileState {
	return fileState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
}

func procAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
