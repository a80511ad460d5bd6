//go:build !linux && !windows

package shell

import (
	"errors"
	"os"
	"syscall"
)

func landlockABI() (int, string) { return 0, "Landlock exists on Linux only" }

func restrict(landlockSpec) (int, error) { return 0, errors.New("Landlock exists on Linux only") }

func execve(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }

func openBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, string, error) {
	return openFallback(root, rel, flag, perm)
}

func stateOf(info os.FileInfo) fileState {
	return fileState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
}

func procAttr(ownTerminal bool) *syscall.SysProcAttr {
	if ownTerminal {
		return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}
