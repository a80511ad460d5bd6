//go:build linux

package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"golang.org/x/sys/unix"
)

// checkoutFresh writes entries (in index order) into dir, an empty
// directory on disk that nothing else writes to (a clone's staging
// directory, made by MkdirTemp), as git's checkout does but with fewer
// system calls and several files in flight: the directories are made
// first, in order; then this goroutine reads the blobs (go-git's storage
// is not safe for concurrent use) and checkoutWorkers goroutines create
// the files beneath the directory's descriptor (openat O_EXCL|O_NOFOLLOW:
// never a link followed at the last component, nothing else in the
// staging directory), write them, and take their stat data from the open
// file for the index (no lstat of every path afterwards). It returns the
// stat data of each entry (zero for gitlinks). ok is false when it could
// not: the caller then empties dir and checks out with checkoutAll.
//
// mem, when not nil, makes readers of a pack in memory that holds every
// blob (the one just fetched): with no end-of-line conversion to apply,
// each worker then reads its own blobs too, nothing handed between
// goroutines.
func checkoutFresh(ctx context.Context, s storer.EncodedObjectStorer, mem func() blobReader, dir string, entries []checkoutEntry, environ []string) ([]checkoutStat, bool, error) {
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, nil
	}
	defer unix.Close(root)
	// The directories, each once (entries are sorted: a directory's
	// entries are contiguous), and the gitlinks' empty directories.
	made := map[string]bool{}
	mkdirs := func(p string) bool {
		for i := 0; i < len(p); i++ {
			if p[i] != '/' || made[p[:i]] {
				continue
			}
			if err := unix.Mkdirat(root, p[:i], 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return false
			}
			made[p[:i]] = true
		}
		return true
	}
	for _, e := range entries {
		if !mkdirs(e.path) {
			return nil, false, nil
		}
		if e.mode == filemode.Submodule {
			// git clone without --recurse-submodules: an empty directory.
			if err := unix.Mkdirat(root, e.path, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				return nil, false, nil
			}
		}
	}
	stats := make([]checkoutStat, len(entries))
	smudge := checkoutSmudger(s, entries, environ)
	if mem != nil && smudge == nil {
		return checkoutParallel(ctx, mem, root, entries, stats)
	}
	type job struct {
		i       int
		content []byte
	}
	jobs := make(chan job, 64)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < checkoutWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if failed.Load() {
					continue
				}
				st, ok := writeCheckoutFile(root, entries[j.i], j.content)
				if !ok {
					failed.Store(true)
					continue
				}
				stats[j.i] = st
			}
		}()
	}
	var rerr error
	for i, e := range entries {
		if failed.Load() {
			break
		}
		if i%64 == 0 {
			if rerr = ctx.Err(); rerr != nil {
				break
			}
		}
		if e.mode == filemode.Submodule {
			continue
		}
		content, err := readBlob(s, e.hash)
		if err != nil {
			rerr = fmt.Errorf("check out %s: %w", e.path, err)
			break
		}
		if smudge != nil && e.mode != filemode.Symlink {
			content = smudge(e.path, content)
		}
		jobs <- job{i, content}
	}
	close(jobs)
	wg.Wait()
	if rerr != nil {
		return nil, true, rerr
	}
	if failed.Load() {
		return nil, false, nil
	}
	return stats, true, nil
}

// checkoutParallel writes the files on checkoutWorkers goroutines, each
// taking the next run of entries and reading their blobs from its own
// reader of the pack in memory. ok is false when a blob is not there or
// a file could not be made.
func checkoutParallel(ctx context.Context, mem func() blobReader, root int, entries []checkoutEntry, stats []checkoutStat) ([]checkoutStat, bool, error) {
	const run = 16
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < checkoutWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := mem()
			for !failed.Load() && ctx.Err() == nil {
				lo := int(next.Add(run)) - run
				if lo >= len(entries) {
					return
				}
				for i := lo; i < min(lo+run, len(entries)); i++ {
					e := entries[i]
					if e.mode == filemode.Submodule {
						continue
					}
					content, ok := read(e.hash)
					if !ok {
						failed.Store(true)
						return
					}
					st, ok := writeCheckoutFile(root, e, content)
					if !ok {
						failed.Store(true)
						return
					}
					stats[i] = st
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, true, err
	}
	if failed.Load() {
		return nil, false, nil
	}
	return stats, true, nil
}

// checkoutWorkers is how many files a checkout creates at once: creating a
// file waits on the filesystem's journal more than on a CPU.
const checkoutWorkers = 4

// writeCheckoutFile creates one file or link of a fresh checkout beneath
// root and returns its stat data.
func writeCheckoutFile(root int, e checkoutEntry, content []byte) (checkoutStat, bool) {
	var st unix.Stat_t
	if e.mode == filemode.Symlink {
		if unix.Symlinkat(string(content), root, e.path) != nil || unix.Fstatat(root, e.path, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return checkoutStat{}, false
		}
		return statOfUnix(&st), true
	}
	perm := uint32(0o644)
	if e.mode == filemode.Executable {
		perm = 0o755
	}
	fd, err := unix.Openat(root, e.path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return checkoutStat{}, false
	}
	return fillFile(fd, perm, content)
}

// fillFile writes content to the file open at fd, gives it the mode git's
// checkout gives (an existing file's mode or a umask may differ), closes
// it and returns its stat data; ok false when any step failed.
func fillFile(fd int, perm uint32, content []byte) (checkoutStat, bool) {
	var st unix.Stat_t
	ok := writeAll(fd, content) && unix.Fstat(fd, &st) == nil
	if ok && uint32(st.Mode)&0o777 != perm {
		ok = unix.Fchmod(fd, perm) == nil && unix.Fstat(fd, &st) == nil
	}
	if cerr := unix.Close(fd); cerr != nil || !ok {
		return checkoutStat{}, false
	}
	return statOfUnix(&st), true
}

func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func statOfUnix(st *unix.Stat_t) checkoutStat {
	return checkoutStat{ok: true, sec: int64(st.Mtim.Sec), nsec: int64(st.Mtim.Nsec), size: st.Size,
		dev: uint64(st.Dev), ino: uint64(st.Ino), uid: st.Uid, gid: st.Gid}
}
