//go:build linux

package gittools

import (
	"bytes"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/tgp-go/tgp/gitbackend"
)

// newDirSource reads a root on disk by file descriptor, anything else
// through the billy view.
func newDirSource(wt billy.Filesystem) dirSource {
	if root, ok := gitbackend.OSRoot(wt); ok {
		return fdSource{dir: root}
	}
	return billySource{fs: wt}
}

// fdSource lists directories with getdents and stats entries with fstatat
// relative to their directory's descriptor: one path component resolved
// per call, and a subdirectory opened with O_NOFOLLOW beneath its parent
// (the walk never leaves the root through a link).
type fdSource struct{ dir string }

func (s fdSource) root() (dirRef, error) {
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirRef{}, err
	}
	return dirRef{fd: fd}, nil
}

func (s fdSource) open(parent dirRef, name, p string) (dirRef, error) {
	fd, err := unix.Openat(parent.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirRef{}, err
	}
	return dirRef{path: p, fd: fd}, nil
}

func (s fdSource) close(d dirRef) { _ = unix.Close(d.fd) }

func (s fdSource) list(d dirRef) ([]dirent, error) {
	var buf [16 << 10]byte
	var out []dirent
	for {
		n, err := unix.Getdents(d.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// name (NUL-terminated). The names are substrings of one copy of
		// the buffer.
		b := buf[:n]
		all := string(b)
		for len(b) >= 19 {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			if z := bytes.IndexByte(name, 0); z >= 0 {
				name = name[:z]
			}
			kind := kindUnknown
			switch b[18] {
			case unix.DT_REG:
				kind = kindFile
			case unix.DT_LNK:
				kind = kindLink
			case unix.DT_DIR:
				kind = kindDir
			case unix.DT_UNKNOWN:
			default:
				kind = kindOther
			}
			if !(len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.') {
				at := n - len(b) + 19
				out = append(out, dirent{name: all[at : at+len(name)], kind: kind})
			}
			b = b[reclen:]
		}
	}
}

func (s fdSource) stat(d dirRef, e *dirent) wstat {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return wstat{}
		}
		break
	}
	w := wstat{ok: true, kind: kindFile, size: st.Size, exec: st.Mode&0o111 != 0,
		sec: int64(st.Mtim.Sec), nsec: int64(st.Mtim.Nsec),
		ids: true, csec: int64(st.Ctim.Sec), ino: st.Ino, uid: st.Uid, gid: st.Gid}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		w.kind = kindLink
	case unix.S_IFDIR:
		w.kind = kindDir
	case unix.S_IFREG:
	default:
		w.kind = kindOther
	}
	return w
}

func (s fdSource) readFile(d dirRef, name string) ([]byte, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return io.ReadAll(f)
}

func (s fdSource) readEntry(d dirRef, name string, st *wstat) (worktreeFile, bool) {
	switch st.kind {
	case kindLink:
		buf := make([]byte, st.size+1)
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil || n > int(st.size) {
			return worktreeFile{}, false // changed since: read it again by path
		}
		return worktreeFile{data: buf[:n], mode: filemode.Symlink}, true
	case kindFile:
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return worktreeFile{}, false
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		data := make([]byte, 0, st.size+1)
		for {
			n, err := f.Read(data[len(data):cap(data)])
			data = data[:len(data)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return worktreeFile{}, false
			}
			if len(data) == cap(data) {
				data = append(data, 0)[:len(data)]
			}
		}
		mode := filemode.Regular
		if st.exec {
			mode = filemode.Executable
		}
		return worktreeFile{data: data, mode: mode}, true
	}
	return worktreeFile{}, false
}

// sysStat adds what lstat gave beyond fs.FileInfo (ctime, inode, owner)
// to st.
func sysStat(info fs.FileInfo, st *wstat) {
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ids, st.csec, st.ino, st.uid, st.gid = true, int64(sys.Ctim.Sec), sys.Ino, sys.Uid, sys.Gid
	}
}
