//go:build linux

package shell

import (
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI probes the kernel: the ABI version, or 0 and why not.
func landlockABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v <= 0 {
		if err == nil {
			err = fmt.Errorf("ABI %d", v)
		}
		return 0, "the kernel does not support Landlock: " + err.Error()
	}
	return v, ""
}

const (
	rwRights = ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
		ll.AccessFSMakeSym | ll.AccessFSMakeFifo | ll.AccessFSRefer
	fileRW = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// restrict applies the spec to this process (all threads) and returns the
// ABI in force. File system (read/write scopes), TCP (no bind, no
// connect) and, from ABI 6, signals and abstract sockets are restricted.
func restrict(s landlockSpec) (int, error) {
	abi, why := landlockABI()
	if abi == 0 {
		return 0, fmt.Errorf("%s", why)
	}
	var rules []landlock.Rule
	for _, p := range s.RO {
		if isDir(p) {
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	for _, p := range s.RW {
		if isDir(p) {
			rules = append(rules, landlock.PathAccess(rwRights, p).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.PathAccess(fileRW, p).IgnoreIfMissing())
		}
	}
	for _, p := range s.ListOnly {
		rules = append(rules, landlock.PathAccess(ll.AccessFSReadDir, p).IgnoreIfMissing())
	}
	for _, p := range s.MkdirOnly {
		rules = append(rules, landlock.PathAccess(ll.AccessFSMakeDir, p).IgnoreIfMissing())
	}
	for _, p := range s.CreateOnly {
		rules = append(rules, landlock.PathAccess(ll.AccessFSMakeDir|ll.AccessFSMakeReg, p).IgnoreIfMissing())
	}
	for _, p := range s.Dev {
		rules = append(rules, landlock.PathAccess(fileRW, p).WithIoctlDev().IgnoreIfMissing())
	}
	if err := landlock.V7.BestEffort().Restrict(rules...); err != nil {
		return 0, err
	}
	// No core dumps; no file larger than MaxFileBytes (a disk-filling
	// loop ends with EFBIG).
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	_ = unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: MaxFileBytes, Max: MaxFileBytes})
	return abi, nil
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

func execve(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }

// openBeneath opens rel beneath the root directory without ever leaving
// it, whatever symlinks or .. components say (openat2 RESOLVE_BENEATH),
// and returns the file and its real path.
func openBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, string, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", err
	}
	defer unix.Close(dir)
	how := &unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	fd, err := unix.Openat2(dir, rel, how)
	if err == unix.ENOSYS {
		return openFallback(root, rel, flag, perm)
	}
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		_ = f.Close()
		return nil, "", err
	}
	return f, real, nil
}

func stateOf(info os.FileInfo) fileState {
	st := fileState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ctime = sys.Ctim.Nano()
		st.ino = sys.Ino
	}
	return st
}

// procAttr: a child gets its own process group (or session, owning the
// terminal) and dies with the kernel (SIGKILL when its parent goes).
func procAttr(ownTerminal bool) *syscall.SysProcAttr {
	if ownTerminal {
		return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
