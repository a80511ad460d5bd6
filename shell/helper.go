package shell

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// MaxFileBytes is the largest file a child may write under Landlock
// (RLIMIT_FSIZE).
const MaxFileBytes = 256 << 20

// landlockSpec is what the helper restricts itself to before it executes
// the target. Paths are absolute.
type landlockSpec struct {
	// RO: read, list and execute beneath (directories or files).
	RO []string `json:"ro"`
	// RW: read, list, create, write, remove, rename beneath (no execute
	// unless RO also covers them).
	RW []string `json:"rw"`
	// ListOnly directories may be listed (ReadDir), nothing beneath them
	// read through this rule.
	ListOnly []string `json:"ls,omitempty"`
	// MkdirOnly directories may get new subdirectories.
	MkdirOnly []string `json:"mkdir,omitempty"`
	// CreateOnly directories may get new files and subdirectories.
	CreateOnly []string `json:"create,omitempty"`
	// Dev are device files opened read-write (/dev/null...).
	Dev []string `json:"dev"`
}

// systemRead are the directories children may read and execute from:
// programs and their libraries, not /etc (so /etc/passwd stays out), not
// /home, not /proc.
var systemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl/certs"}

// systemDev are the device files children may open.
var systemDev = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// underSystem reports whether abs is readable system data (a command may
// name it: /usr/share/dict/words, /dev/null).
func underSystem(abs string) bool {
	for _, d := range append(append([]string{}, systemRead...), systemDev...) {
		if abs == d || strings.HasPrefix(abs, d+"/") {
			return true
		}
	}
	return false
}

// spec computes the Landlock rules for a child started now: system
// directories; the paths of the root the read and write scopes cover,
// exactly (a directory is granted whole only when everything beneath it
// is in the scope; elsewhere its entries one by one, so .git, paths.deny
// and files outside a glob stay out); the run's private temporary
// directory.
func (x *run) spec() landlockSpec {
	s := landlockSpec{RO: append([]string{}, systemRead...), Dev: append([]string{}, systemDev...), RW: []string{x.tmp}}
	x.mu.Lock()
	if x.read == nil {
		snap := x.snap
		if snap == nil {
			snap, _ = x.r.snapshot()
		}
		if snap == nil {
			snap = &snapshot{files: map[string]fileState{}, dirs: []string{""}}
		}
		x.read = x.r.grantTree(snap, func(rel string) bool { return x.sc.Covers(rel, ScopeRead) })
		x.write = x.r.grantTree(snap, func(rel string) bool { return x.sc.Covers(rel, ScopeWrite) })
	}
	read, write := x.read, x.write
	x.mu.Unlock()
	s.RO = append(s.RO, x.r.abs(read.whole)...)
	s.RW = append(s.RW, x.r.abs(write.whole)...)
	s.ListOnly = x.r.abs(read.partial)
	// New entries in a directory granted piecemeal: files too, unless a
	// .git lies beneath (new empty files there could upset git).
	for _, d := range write.partial {
		if write.gitBelow[d] {
			s.MkdirOnly = append(s.MkdirOnly, x.r.abs([]string{d})...)
		} else {
			s.CreateOnly = append(s.CreateOnly, x.r.abs([]string{d})...)
		}
	}
	// Entries made since the scan (by this line) in directories granted
	// piecemeal: new, so nothing beneath them is out of scope yet.
	for _, g := range []struct {
		t    *grantSet
		cov  Scope
		dest *[]string
	}{{read, ScopeRead, &s.RO}, {write, ScopeWrite, &s.RW}} {
		for _, d := range g.t.partial {
			ents, _ := os.ReadDir(filepath.Join(x.r.root, filepath.FromSlash(d)))
			for _, e := range ents {
				rel := path.Join(d, e.Name())
				if !g.t.known[rel] && x.sc.Covers(rel, g.cov) {
					*g.dest = append(*g.dest, x.r.abs([]string{rel})...)
				}
			}
		}
	}
	return s
}

// grantSet is what Landlock grants for one scope.
type grantSet struct {
	whole   []string        // directories and files granted with all beneath
	partial []string        // directories granted piecemeal (listed, not whole)
	known   map[string]bool // every path the scan saw
	// gitBelow are the directories with a .git at or beneath them.
	gitBelow map[string]bool
}

// grantTree finds, in a scan of the root, the largest directories whose
// every path is allowed, and the allowed files elsewhere.
func (r *Runner) grantTree(s *snapshot, allowed func(rel string) bool) *grantSet {
	parent := func(p string) string {
		if d := path.Dir(p); d != "." {
			return d
		}
		return ""
	}
	full := map[string]bool{}
	subDirs, files := map[string][]string{}, map[string][]string{}
	g := &grantSet{known: map[string]bool{}, gitBelow: map[string]bool{}}
	for _, d := range s.dirs {
		full[d] = allowed(d) && !s.hasGit[d]
		g.known[d] = true
		if d != "" {
			subDirs[parent(d)] = append(subDirs[parent(d)], d)
		}
	}
	markUp := func(d string) {
		for {
			full[d] = false
			if d == "" {
				return
			}
			d = parent(d)
		}
	}
	for _, d := range s.dirs {
		if !full[d] && d != "" {
			markUp(parent(d))
		}
		if s.hasGit[d] {
			markUp(d)
			for p := d; ; p = parent(p) {
				g.gitBelow[p] = true
				if p == "" {
					break
				}
			}
		}
	}
	for f, st := range s.files {
		g.known[f] = true
		files[parent(f)] = append(files[parent(f)], f)
		// A symlink is granted as what it points to: only inside the root
		// and in the scope.
		if !allowed(f) || (st.mode&os.ModeSymlink != 0 && !r.linkAllowed(f, allowed)) {
			markUp(parent(f))
		}
	}
	var walk func(d string)
	walk = func(d string) {
		if full[d] {
			g.whole = append(g.whole, d)
			return
		}
		if allowed(d) {
			g.partial = append(g.partial, d)
		}
		for _, f := range files[d] {
			if allowed(f) && (s.files[f].mode&os.ModeSymlink == 0 || r.linkAllowed(f, allowed)) {
				g.whole = append(g.whole, f)
			}
		}
		for _, c := range subDirs[d] {
			walk(c)
		}
	}
	walk("")
	sort.Strings(g.whole)
	return g
}

// linkAllowed: a symlink's target is inside the root and allowed.
func (r *Runner) linkAllowed(rel string, allowed func(string) bool) bool {
	real, err := filepath.EvalSymlinks(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	trel, ok := r.rel(real)
	return ok && allowed(trel) && !holdsGit(real)
}

// abs maps root-relative paths to absolute ones, symlinks resolved, inside
// the root only.
func (r *Runner) abs(rels []string) []string {
	out := make([]string, 0, len(rels))
	for _, rel := range rels {
		if p, ok := r.inside(filepath.Join(r.root, filepath.FromSlash(rel))); ok {
			out = append(out, p)
		}
	}
	return out
}

// inside resolves p's symlinks and keeps it only if it stays inside the
// root (a symlinked entry pointing out must not widen the ruleset).
func (r *Runner) inside(p string) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	if _, ok := r.rel(real); !ok {
		return "", false
	}
	return real, true
}

// ServeExecIfRequested makes this program the shell's Landlock helper
// when it was started as one (first argument [ExecSubcommand]): it
// restricts itself, executes the target and never returns. Otherwise it
// returns at once. The package's init calls it, before any main: a
// program embedding the kernel need not (calling it is harmless).
func ServeExecIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != ExecSubcommand {
		return
	}
	os.Exit(ServeExec(os.Args[2:]))
}

// ServeExec is the helper's body: args are the JSON spec, the program's
// path and its argv. The handshake on file descriptor 3 tells the parent
// the ruleset is in force ("ok <abi>") or why not; it closes on exec.
// It returns only on failure, with the exit status to use.
func ServeExec(args []string) int {
	// The ruleset is applied to this thread, which then executes the
	// target: it must stay this goroutine's.
	runtime.LockOSThread()
	if len(args) == 1 && args[0] == poolArg {
		return serveWarm()
	}
	hs := os.NewFile(3, "handshake")
	fail := func(code int, format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if hs != nil {
			_, _ = fmt.Fprintf(hs, "error %s\n", msg)
		}
		fmt.Fprintf(os.Stderr, "tgp shell helper: %s\n", msg)
		return code
	}
	if len(args) < 3 {
		return fail(126, "usage: %s SPEC PROGRAM ARGV0 [ARGS...]", ExecSubcommand)
	}
	var spec landlockSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fail(126, "bad spec: %v", err)
	}
	abi, err := restrict(spec)
	if err != nil {
		return fail(126, "landlock: %v", err)
	}
	if hs != nil {
		_, _ = fmt.Fprintf(hs, "ok %d\n", abi)
		_ = hs.Close()
	}
	err = execve(args[1], args[2:], os.Environ())
	return fail(127, "%s: %v", args[2], err)
}
