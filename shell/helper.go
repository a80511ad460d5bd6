package shell

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
// directories; the root's entries the read and write scopes cover (listed
// now, so directories made earlier in the same command line count); never
// .git; the run's private temporary directory.
func (x *run) spec() landlockSpec {
	r := x.r
	s := landlockSpec{RO: append([]string{}, systemRead...), Dev: append([]string{}, systemDev...), RW: []string{x.tmp}}
	readBases, writeBases := map[string]bool{}, map[string]bool{}
	for _, g := range r.scopes.Allowed(ScopeRead) {
		readBases[literalBase(g)] = true
	}
	for _, g := range r.scopes.write {
		writeBases[literalBase(g)] = true
	}
	entries, _ := os.ReadDir(r.root)
	add := func(bases map[string]bool, list *[]string) {
		for b := range bases {
			if b != "" {
				if p, ok := r.inside(filepath.Join(r.root, filepath.FromSlash(b))); ok && !r.scopes.Denied(b) {
					*list = append(*list, p)
				}
				continue
			}
			for _, e := range entries {
				if isGitPath(e.Name()) || r.scopes.Denied(e.Name()) {
					continue
				}
				if p, ok := r.inside(filepath.Join(r.root, e.Name())); ok {
					*list = append(*list, p)
				}
			}
		}
	}
	add(readBases, &s.RO)
	add(writeBases, &s.RW)
	if readBases[""] {
		s.ListOnly = append(s.ListOnly, r.root)
	}
	if writeBases[""] {
		s.MkdirOnly = append(s.MkdirOnly, r.root)
	}
	return s
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

// literalBase is the part of a glob before its first wildcard segment
// ("tools/**" → "tools", "**" → "").
func literalBase(g string) string {
	var out []string
	for _, seg := range strings.Split(g, "/") {
		if strings.ContainsAny(seg, "*?[") {
			break
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/")
}

// ServeExecIfRequested makes this program the shell's Landlock helper
// when it was started as one (first argument [ExecSubcommand]): it
// restricts itself, executes the target and never returns. Otherwise it
// returns at once. A program embedding the kernel calls it first thing in
// main (and TestMain), as the tgp binary does through `tgp __shellexec`.
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
