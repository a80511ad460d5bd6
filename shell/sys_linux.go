//go:build linux

package shell

import (
	"fmt"
	"os"
	"syscall"

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
	readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	rwRights   = ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
		ll.AccessFSMakeSym | ll.AccessFSMakeFifo | ll.AccessFSRefer
	fileRW = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// restrict applies the spec to the calling thread, which must be locked
// to its goroutine and exec the target next (the helper does): Landlock
// domains and no_new_privs belong to a thread and pass through execve,
// so nothing needs the slow all-threads broadcast. It returns the ABI in
// force. File system (read/write scopes), TCP (no bind, no connect) and,
// from ABI 6, signals and abstract sockets are restricted.
func restrict(s landlockSpec) (int, error) {
	abi, why := landlockABI()
	if abi == 0 {
		return 0, fmt.Errorf("%s", why)
	}
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(abi)}
	if abi >= 4 {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return 0, fmt.Errorf("create ruleset: %w", err)
	}
	defer unix.Close(fd)
	add := func(p string, rights uint64) error {
		pfd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // missing: nothing to grant
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= fileRights
		}
		rights &= attr.HandledAccessFS
		if rights == 0 {
			return nil
		}
		if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: pfd}, 0); err != nil {
			return fmt.Errorf("rule for %s: %w", p, err)
		}
		return nil
	}
	type grant struct {
		paths  []string
		rights uint64
	}
	for _, g := range []grant{
		{s.RO, readRights}, {s.RW, rwRights}, {s.ListOnly, ll.AccessFSReadDir}, {s.MkdirOnly, ll.AccessFSMakeDir},
		{s.CreateOnly, ll.AccessFSMakeDir | ll.AccessFSMakeReg}, {s.Dev, fileRW | ll.AccessFSIoctlDev},
	} {
		for _, p := range g.paths {
			if err := add(p, g.rights); err != nil {
				return 0, err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return 0, fmt.Errorf("restrict: %w", err)
	}
	// No core dumps; no file larger than MaxFileBytes (a disk-filling
	// loop ends with EFBIG).
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	_ = unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: MaxFileBytes, Max: MaxFileBytes})
	return abi, nil
}

// handledFS are the file-system rights the ABI knows: all of them are
// restricted, and granted back by the rules.
func handledFS(abi int) uint64 {
	h := uint64(ll.AccessFSMakeSym<<1 - 1) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		h |= ll.AccessFSIoctlDev
	}
	return h
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

// killGroup kills a child's whole process group.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}
