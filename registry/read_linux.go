//go:build linux

package registry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A root on disk is read by file descriptor: directories listed with
// getdents (their entries' types come with the names: no lstat each),
// every directory opened beneath its parent and every file beneath its
// directory with O_NOFOLLOW, so no link is ever followed and no path is
// resolved from the root again (the VFS resolves and checks each
// component of every path it is given). Anything unusual (tools/ a link,
// an error) leaves the work to the VFS, whose answer is the reference.

// osRoot is the OS directory of a source on disk ("" otherwise).
func osRoot(src Source) string {
	if r, ok := src.(interface{ Root() string }); ok {
		return r.Root()
	}
	return ""
}

// diskTools is the tools/ tree of a root on disk, listed once: its tool
// files (sorted) and the open directories that hold them.
type diskTools struct {
	paths []string
	dirs  map[string]int // directory (relative to the root) -> descriptor
	dirOf []string       // each path's directory
}

func (d *diskTools) close() {
	for _, fd := range d.dirs {
		unix.Close(fd)
	}
}

// listDiskTools lists the tool files under root/tools as ToolPaths does
// (node_modules and .git not entered, regular files only); ok is false
// when the VFS must do it.
func listDiskTools(root string) (*diskTools, bool) {
	rfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(rfd)
	d := &diskTools{dirs: map[string]int{}}
	tfd, err := unix.Openat(rfd, ToolsDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return d, true
	}
	if err != nil {
		return nil, false
	}
	d.dirs[ToolsDir] = tfd
	if !d.walk(tfd, ToolsDir) {
		d.close()
		return nil, false
	}
	order := make([]int, len(d.paths))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return d.paths[order[a]] < d.paths[order[b]] })
	paths, dirOf := make([]string, len(order)), make([]string, len(order))
	for i, k := range order {
		paths[i], dirOf[i] = d.paths[k], d.dirOf[k]
	}
	d.paths, d.dirOf = paths, dirOf
	return d, true
}

func (d *diskTools) walk(fd int, rel string) bool {
	var buf [16 << 10]byte
	for {
		n, err := unix.Getdents(fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false
		}
		if n <= 0 {
			return true
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return false
			}
			typ, name := b[18], b[19:reclen]
			if z := bytes.IndexByte(name, 0); z >= 0 {
				name = name[:z]
			}
			b = b[reclen:]
			s := string(name)
			if s == "." || s == ".." {
				continue
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, s, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue // vanished between list and stat
				}
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					typ = unix.DT_DIR
				case unix.S_IFREG:
					typ = unix.DT_REG
				}
			}
			p := rel + "/" + s
			switch typ {
			case unix.DT_DIR:
				if s == "node_modules" || s == ".git" {
					continue
				}
				sub, err := unix.Openat(fd, s, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return false
				}
				d.dirs[p] = sub
				if !d.walk(sub, p) {
					return false
				}
			case unix.DT_REG:
				if IsTool(p) {
					d.paths = append(d.paths, p)
					d.dirOf = append(d.dirOf, rel)
				}
			}
		}
	}
}

// read reads paths[i] beneath its directory (O_NOFOLLOW).
func (d *diskTools) read(i int) ([]byte, error) {
	p := d.paths[i]
	name := p[strings.LastIndexByte(p, '/')+1:]
	fd, err := unix.Openat(d.dirs[d.dirOf[i]], name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	out := make([]byte, 0, st.Size+1)
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		n, err := unix.Read(fd, out[len(out):cap(out)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = out[:len(out)+n]
	}
}

// readDiskTools reads every listed tool on buildWorkers goroutines; ok is
// false when one could not be read (the VFS then reads them all).
func (d *diskTools) readAll() ([][]byte, bool) {
	data := make([][]byte, len(d.paths))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := min(buildWorkers, len(d.paths)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(d.paths) {
					return
				}
				b, err := d.read(i)
				if err != nil {
					failed.Store(true)
					return
				}
				data[i] = b
			}
		}()
	}
	wg.Wait()
	return data, !failed.Load()
}
