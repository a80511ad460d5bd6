package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// plan is what a checked argv runs as.
type plan struct {
	path   string       // the program, resolved in TrustedPath or the root
	script *syntax.File // sh -c / bash -c / sh FILE: interpreted here
	opts   []string     // shell options for the script (-e, -u, -o pipefail)
	params []string     // $0 and positional parameters of the script
}

// maxDepth bounds wrapper and nested-shell nesting.
const maxDepth = 8

var shells = map[string]bool{"sh": true, "bash": true, "dash": true}

// check validates one argv about to run in dir: the seed 004 pipeline
// (deny → category → directory scope), then the wrapped command, the
// paths named in the arguments, and approval for dangerous commands.
func (x *run) check(ctx context.Context, dir string, argv []string, depth int) (plan, error) {
	_, p, err := x.validate(ctx, dir, argv, depth, true)
	return p, err
}

func (x *run) validate(ctx context.Context, dir string, argv []string, depth int, top bool) (Category, plan, error) {
	name := argv[0]
	if depth > maxDepth {
		return "", plan{}, &Violation{Reason: ReasonNotAllowed, Command: name, Message: "commands nested more than 8 deep in wrappers or shells"}
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		realDir = dir
	}
	relDir, ok := x.r.rel(realDir)
	if !ok {
		return "", plan{}, &Violation{Reason: ReasonDirNotInScope, Command: name, Directory: dir, RequiredScope: ScopeRead, AllowedPatterns: x.sc.Allowed(ScopeRead),
			Message: fmt.Sprintf("%s would run in %s, outside the root; stay inside the root", name, dir)}
	}
	base := path.Base(name)
	if shells[base] && (!strings.Contains(name, "/") || underSystem(name)) {
		if x.sc.Denies(name) || x.sc.Denies(base) {
			_, err := x.sc.Categorize(name)
			return "", plan{}, err
		}
		if !top {
			return "", plan{}, &Violation{Reason: ReasonNotAllowed, Command: name,
				Message: fmt.Sprintf("%s inside a wrapper would run a real shell, outside the checks; run `%s -c ...` directly instead", base, base)}
		}
		p, err := x.shellPlan(ctx, realDir, argv)
		return ReadOnly, p, err
	}
	cat, err := x.sc.Categorize(name)
	if err != nil {
		return "", plan{}, err
	}
	if base == "find" && hasArg(argv, "-delete") {
		cat = maxCat(cat, Dangerous)
	}
	own := cat
	// Wrappers: the inner command is checked as if it ran here.
	inner, writes, reads, err := unwrap(base, argv)
	if err != nil {
		return "", plan{}, err
	}
	if len(inner) > 0 {
		icat, _, err := x.validate(ctx, dir, inner, depth+1, false)
		if err != nil {
			return "", plan{}, err
		}
		cat = maxCat(cat, icat)
	}
	if len(writes) > 0 {
		cat = maxCat(cat, SafeWrite)
	}
	if err := x.sc.CheckDir(name, relDir, cat); err != nil {
		return "", plan{}, err
	}
	if err := x.checkArgs(realDir, name, base, argv, cat, writes, reads, len(inner) > 0); err != nil {
		return "", plan{}, err
	}
	if own == Dangerous {
		if err := x.approveNow(ctx, argv); err != nil {
			return "", plan{}, err
		}
	}
	var prog string
	if top {
		if prog, err = x.lookPath(realDir, name); err != nil {
			return "", plan{}, err
		}
	}
	return cat, plan{path: prog}, nil
}

func maxCat(a, b Category) Category {
	rank := map[Category]int{ReadOnly: 0, SafeWrite: 1, Dangerous: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func hasArg(argv []string, a string) bool {
	for _, s := range argv[1:] {
		if s == a {
			return true
		}
	}
	return false
}

// shellPlan turns sh/bash invocations into a script for this interpreter.
func (x *run) shellPlan(ctx context.Context, dir string, argv []string) (plan, error) {
	var opts []string
	var script, file string
	hasScript := false
	i := 1
loop:
	for ; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-c":
			if i+1 >= len(argv) {
				return plan{}, &Violation{Reason: ReasonNotAllowed, Command: argv[0], Message: argv[0] + " -c needs a command string"}
			}
			script, hasScript = argv[i+1], true
			i += 2
			break loop
		case a == "-o" || a == "+o":
			if i+1 < len(argv) {
				opts = append(opts, a, argv[i+1])
				i++
			}
		case a == "--":
			i++
			break loop
		case strings.HasPrefix(a, "-") && len(a) > 1 && strings.Trim(a[1:], "euxvfnaC") == "":
			opts = append(opts, a)
		case strings.HasPrefix(a, "-") && len(a) > 1 && strings.Contains(a, "c") && strings.Trim(a[1:], "euxvfnaCc") == "":
			// -ec, -euc ...
			if i+1 >= len(argv) {
				return plan{}, &Violation{Reason: ReasonNotAllowed, Command: argv[0], Message: argv[0] + " -c needs a command string"}
			}
			opts = append(opts, strings.Replace(a, "c", "", 1))
			script, hasScript = argv[i+1], true
			i += 2
			break loop
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			return plan{}, &Violation{Reason: ReasonNotAllowed, Command: argv[0],
				Message: fmt.Sprintf("%s %s: only -c, -e, -u, -x, -o OPTION and a script file are supported (interactive shells are not allowed)", argv[0], a)}
		default:
			break loop
		}
	}
	var params []string
	if hasScript {
		if i < len(argv) {
			params = argv[i:]
		} else {
			params = []string{argv[0]}
		}
	} else {
		if i >= len(argv) {
			return plan{}, &Violation{Reason: ReasonNotAllowed, Command: argv[0],
				Message: fmt.Sprintf("an interactive %s is not allowed; use `%s -c 'commands'` or a script file", argv[0], argv[0])}
		}
		file = argv[i]
		params = argv[i:]
		real := resolve(dir, file)
		rel, ok := x.r.rel(real)
		if !ok {
			return plan{}, &Violation{Reason: ReasonPathNotScope, Command: argv[0], Path: file, RequiredScope: ScopeRead,
				AllowedPatterns: x.sc.Allowed(ScopeRead), Message: fmt.Sprintf("script %s is outside the root", file)}
		}
		if err := x.sc.CheckPath(argv[0], rel, ScopeRead); err != nil {
			return plan{}, err
		}
		b, err := os.ReadFile(real)
		if err != nil {
			return plan{}, fmt.Errorf("shell: %s %s: %w", argv[0], file, err)
		}
		script = string(b)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(script), params[0])
	if err != nil {
		return plan{}, &SyntaxError{Err: err}
	}
	if err := x.precheck(f, dir); err != nil {
		return plan{}, err
	}
	return plan{script: f, opts: opts, params: params}, nil
}

// unwrap finds the command a wrapper runs, and the arguments it names as
// files to write or read.
func unwrap(base string, argv []string) (inner, writes, reads []string, err error) {
	args := argv[1:]
	bad := func(format string, a ...any) error {
		return &Violation{Reason: ReasonNotAllowed, Command: argv[0], Message: fmt.Sprintf(format, a...)}
	}
	switch base {
	case "env":
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-i" || a == "--ignore-environment" || a == "-0" || a == "--null" || a == "-":
			case a == "-u" || a == "--unset":
				i++
			case strings.HasPrefix(a, "--unset="):
			case a == "--":
				return args[i+1:], nil, nil, nil
			case strings.HasPrefix(a, "-"):
				return nil, nil, nil, bad("env %s is not supported here (it could change directory or split a command string unchecked)", a)
			case strings.Contains(a, "="):
				name, _, _ := strings.Cut(a, "=")
				if name == "PATH" || strings.HasPrefix(name, "LD_") || name == "BASH_ENV" || name == "ENV" || name == "GCONV_PATH" {
					return nil, nil, nil, bad("env %s=...: setting %s for a command is not allowed (it would change what runs)", name, name)
				}
			default:
				return args[i:], nil, nil, nil
			}
		}
		return nil, nil, nil, nil
	case "nice":
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-n" || a == "--adjustment":
				i++
			case strings.HasPrefix(a, "--adjustment=") || (strings.HasPrefix(a, "-") && len(a) > 1 && strings.Trim(a[1:], "0123456789") == ""):
			case a == "--":
				return args[i+1:], nil, nil, nil
			case strings.HasPrefix(a, "-"):
				return nil, nil, nil, bad("nice %s is not supported here", a)
			default:
				return args[i:], nil, nil, nil
			}
		}
		return nil, nil, nil, nil
	case "timeout":
		seenDuration := false
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-s" || a == "--signal" || a == "-k" || a == "--kill-after":
				i++
			case strings.HasPrefix(a, "--signal=") || strings.HasPrefix(a, "--kill-after=") || a == "--preserve-status" || a == "--foreground" || a == "-v" || a == "--verbose":
			case strings.HasPrefix(a, "-") && !seenDuration:
				return nil, nil, nil, bad("timeout %s is not supported here", a)
			case !seenDuration:
				seenDuration = true
			default:
				return args[i:], nil, nil, nil
			}
		}
		return nil, nil, nil, nil
	case "xargs":
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-a" || a == "--arg-file":
				if i+1 < len(args) {
					reads = append(reads, args[i+1])
				}
				i++
			case a == "-n" || a == "-L" || a == "-P" || a == "-s" || a == "-d" || a == "-E" || a == "-I" || a == "-e":
				i++
			case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
				if strings.HasPrefix(a, "--arg-file=") {
					reads = append(reads, strings.TrimPrefix(a, "--arg-file="))
				}
			case a == "--":
				inner = args[i+1:]
				i = len(args)
			case strings.HasPrefix(a, "-"):
				// -0 -r -t -x -p, --null, --no-run-if-empty, -n1, -I{} ...
				if strings.HasPrefix(a, "-p") || a == "--interactive" {
					return nil, nil, nil, bad("xargs -p is interactive; not supported here")
				}
			default:
				inner = args[i:]
				i = len(args)
			}
		}
		if len(inner) == 0 {
			inner = []string{"echo"}
		}
		return inner, nil, reads, nil
	case "find":
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(args) && args[j] != ";" && args[j] != "+" {
					j++
				}
				if j == i+1 {
					return nil, nil, nil, bad("find %s without a command", args[i])
				}
				if inner != nil {
					return nil, nil, nil, bad("find with more than one -exec is not supported here; use xargs")
				}
				inner = args[i+1 : j]
				i = j
			case "-fprint", "-fprint0", "-fls", "-fprintf":
				if i+1 < len(args) {
					writes = append(writes, args[i+1])
				}
				i++
			}
		}
		return inner, writes, nil, nil
	case "sort":
		for i, a := range args {
			switch {
			case strings.HasPrefix(a, "--compress-program"):
				return nil, nil, nil, bad("sort --compress-program runs a program unchecked; not supported here")
			case (a == "-T" || a == "--temporary-directory") && i+1 < len(args):
				writes = append(writes, args[i+1])
			case strings.HasPrefix(a, "--temporary-directory="):
				writes = append(writes, strings.TrimPrefix(a, "--temporary-directory="))
			case a == "-o" && i+1 < len(args):
				writes = append(writes, args[i+1])
			case strings.HasPrefix(a, "--output="):
				writes = append(writes, strings.TrimPrefix(a, "--output="))
			case strings.HasPrefix(a, "-o") && len(a) > 2:
				writes = append(writes, a[2:])
			}
		}
	}
	return nil, writes, reads, nil
}

// targetsAll are commands whose every path argument is written (or
// removed); for cp, mv the last one is.
var targetsAll = map[string]bool{"touch": true, "mkdir": true, "rm": true, "rmdir": true, "chmod": true, "shred": true, "tee": true, "truncate": true}
var targetsLast = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true}

// checkArgs checks the arguments that name files: inside the root they
// need the scope of the command (write for what it writes); outside it
// only system files may be named, for reading.
func (x *run) checkArgs(dir, name, base string, argv []string, cat Category, writes, reads []string, wrapper bool) error {
	var cands []string
	for _, a := range argv[1:] {
		if a == "" || a == "{}" || a == ";" || a == "+" {
			continue
		}
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok && v != "" {
				cands = append(cands, v)
			}
			continue
		}
		cands = append(cands, a)
	}
	isWrite := map[string]bool{}
	for _, w := range writes {
		isWrite[w] = true
	}
	if !wrapper && cat != ReadOnly {
		switch {
		case targetsAll[base]:
			for _, c := range cands {
				isWrite[c] = true
			}
		case targetsLast[base] && len(cands) > 0:
			isWrite[cands[len(cands)-1]] = true
		}
	}
	all := append(append(cands, writes...), reads...)
	for _, a := range all {
		sc := ScopeRead
		if isWrite[a] {
			sc = ScopeWrite
		}
		if !x.pathLike(dir, a) && !isWrite[a] {
			continue
		}
		real := resolve(dir, a)
		rel, ok := x.r.rel(real)
		if !ok {
			if sc == ScopeRead && underSystem(real) {
				x.warn("%s names %s, outside the root (system files are readable); prefer paths relative to the working directory", name, a)
				continue
			}
			return &Violation{Reason: ReasonPathNotScope, Command: name, Path: a, RequiredScope: sc, AllowedPatterns: x.sc.Allowed(sc),
				Message: fmt.Sprintf("%s: path %s is outside the root (%s); use paths inside the root, relative to the working directory", name, a, real)}
		}
		if err := x.sc.CheckPath(name, rel, sc); err != nil {
			return err
		}
		if sc == ScopeWrite && holdsGit(real) {
			return &Violation{Reason: ReasonPathNotScope, Command: name, Path: a, RequiredScope: sc, AllowedPatterns: x.sc.Allowed(sc),
				Message: fmt.Sprintf("%s: %s holds .git, which is always denied; name the files or directories inside it instead", name, a)}
		}
	}
	return nil
}

// holdsGit: a directory with a .git entry (the root): writing it as a
// whole (chmod -R, rm -r, mv) would reach .git.
func holdsGit(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// pathLike: an argument is checked as a path when it looks like one or
// names something that exists.
func (x *run) pathLike(dir, a string) bool {
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || a == ".." || strings.HasPrefix(a, "../") || strings.Contains(a, "/") {
		return true
	}
	if strings.ContainsAny(a, "\n\x00") {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, a))
	return err == nil
}

// lookPath finds the program: bare names in TrustedPath only, paths
// inside the root (or system directories).
func (x *run) lookPath(dir, name string) (string, error) {
	if strings.Contains(name, "/") {
		real := resolve(dir, name)
		if _, ok := x.r.rel(real); !ok && !underSystem(real) {
			return "", &Violation{Reason: ReasonPathNotScope, Command: name, Path: name, RequiredScope: ScopeRead,
				AllowedPatterns: x.sc.Allowed(ScopeRead), Message: fmt.Sprintf("program %s is outside the root and the system directories", name)}
		}
		if info, err := os.Stat(real); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return "", nil
		}
		return real, nil
	}
	for _, d := range filepath.SplitList(TrustedPath) {
		p := filepath.Join(d, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", nil
}

// ---- approval ----

// approveNow asks for one dangerous argv at run time, unless this exact
// argv was approved with the line (an approval covers what the approver
// was shown, not every use of the command).
func (x *run) approveNow(ctx context.Context, argv []string) error {
	key := strings.Join(argv, " ")
	x.mu.Lock()
	ok := x.approved[key]
	x.mu.Unlock()
	if ok {
		return nil
	}
	return x.ask(context.WithValue(ctx, midRunKey{}, true), []string{key}, []string{key})
}

type midRunKey struct{}

// MidRun reports whether an Approver is asked while the command line is
// already running (a dangerous command found only at run time): the line
// may have changed files before, so a host that can only ask by running
// the whole call again must refuse instead.
func MidRun(ctx context.Context) bool { v, _ := ctx.Value(midRunKey{}).(bool); return v }

func (x *run) ask(ctx context.Context, lines, names []string) error {
	if x.preApproved {
		return nil
	}
	if x.useOnce(names) {
		return nil
	}
	msg := fmt.Sprintf("dangerous command(s) need approval: %s", strings.Join(lines, "; "))
	if x.r.approve == nil {
		return &ApprovalError{Commands: lines, Message: msg + " (no approver is configured; shell.categories.dangerous commands run only when the host approves them)"}
	}
	ok, err := x.r.approve(ctx, lines)
	if errors.Is(err, ErrNoApprover) {
		why := "no approver is configured"
		if err != ErrNoApprover {
			why = strings.TrimPrefix(err.Error(), ErrNoApprover.Error()+": ")
		}
		return &ApprovalError{Commands: lines, Message: msg + " (" + why + "; shell.categories.dangerous commands run only when the host approves them)"}
	}
	if err != nil {
		return &ApprovalError{Commands: lines, Message: msg + ": " + err.Error(), Err: err}
	}
	if !ok {
		return &ApprovalError{Commands: lines, Message: msg + ": the approver said no"}
	}
	x.mu.Lock()
	for _, n := range names {
		x.approved[n] = true
	}
	x.mu.Unlock()
	return nil
}

// useOnce approves the dangerous commands of lines (names: the dangerous
// argv of each, wrappers stripped) when a Grant's "once" covers every one
// of them, and spends those uses: a
// command the host allowed once runs once, and the next use is asked
// about as usual.
func (x *run) useOnce(names []string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.once) == 0 {
		return false
	}
	need := map[string]int{}
	for _, n := range names {
		need[onceName(n)]++
	}
	for name, n := range need {
		if x.once[name] < n {
			return false
		}
	}
	for name, n := range need {
		x.once[name] -= n
	}
	for _, n := range names {
		x.approved[n] = true
	}
	return true
}

// onceName is the command a dangerous argv runs: its first word, as the
// category lists name it.
func onceName(line string) string {
	name, _, _ := strings.Cut(line, " ")
	return name
}

// ---- static pass ----

// precheck looks at every command whose name is written literally in the
// line before anything runs: a denied or unknown command fails the whole
// line up front, and dangerous ones are put to the approver in one
// question. The run-time checks still see every command after expansion.
func (x *run) precheck(f *syntax.File, dir string) error {
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	var firstErr error
	var lines, names []string
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || firstErr != nil {
			return firstErr == nil
		}
		var argv []string
		for _, w := range ce.Args {
			lit := w.Lit()
			if lit == "" {
				break
			}
			argv = append(argv, lit)
		}
		literal := len(argv) == len(ce.Args)
		argv = stripPrefixes(argv)
		if len(argv) == 0 || funcs[argv[0]] || interp.IsBuiltin(argv[0]) {
			return true
		}
		dangerous, err := x.staticCheck(argv, 0)
		if err != nil {
			firstErr = err
			return false
		}
		// Only a fully literal call is approved up front: the argv it
		// runs is the one the approver sees. Others are asked about
		// when they run.
		if dangerous != nil && literal {
			lines = append(lines, strings.Join(argv, " "))
			names = append(names, strings.Join(dangerous, " "))
		}
		return true
	})
	if firstErr != nil {
		return firstErr
	}
	if len(lines) > 0 {
		return x.ask(x.ctx, lines, names)
	}
	return nil
}

// staticCheck categorises a literal argv and its wrapped commands; it
// returns the dangerous argv (as the run-time check will see it), if any.
func (x *run) staticCheck(argv []string, depth int) ([]string, error) {
	if depth > maxDepth {
		return nil, nil
	}
	name := argv[0]
	base := path.Base(name)
	if shells[base] && !x.sc.Denies(name) && !x.sc.Denies(base) {
		return nil, nil // checked when it runs (the script may be dynamic)
	}
	cat, err := x.sc.Categorize(name)
	if err != nil {
		return nil, err
	}
	inner, _, _, err := unwrap(base, argv)
	if err != nil {
		return nil, err
	}
	if len(inner) > 0 {
		if d, err := x.staticCheck(inner, depth+1); err != nil || d != nil {
			return d, err
		}
	}
	if cat == Dangerous || (base == "find" && hasArg(argv, "-delete")) {
		return argv, nil
	}
	return nil, nil
}

// Classify is the highest category of the commands written literally in
// line (a static look, for approval policies: the run-time checks see
// every command). Dynamic command names count as safe_write; a denied or
// unknown command is returned as the error.
func Classify(s *Scopes, line string) (Category, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return "", &SyntaxError{Err: err}
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	cat := ReadOnly
	var firstErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || firstErr != nil {
			return firstErr == nil
		}
		var argv []string
		for _, w := range ce.Args {
			lit := w.Lit()
			if lit == "" {
				break
			}
			argv = append(argv, lit)
		}
		argv = stripPrefixes(argv)
		switch {
		case len(argv) == 0:
			cat = maxCat(cat, SafeWrite) // a dynamic command name
		case funcs[argv[0]] || interp.IsBuiltin(argv[0]):
		case shells[path.Base(argv[0])]:
			cat = maxCat(cat, SafeWrite)
		default:
			c, err := s.Categorize(argv[0])
			if err != nil {
				firstErr = err
				return false
			}
			cat = maxCat(cat, c)
			if inner, writes, _, err := unwrap(path.Base(argv[0]), argv); err == nil {
				if len(writes) > 0 {
					cat = maxCat(cat, SafeWrite)
				}
				if len(inner) > 0 {
					if ic, err := s.Categorize(inner[0]); err == nil {
						cat = maxCat(cat, ic)
					}
				}
			}
			if path.Base(argv[0]) == "find" && hasArg(argv, "-delete") {
				cat = maxCat(cat, Dangerous)
			}
		}
		return true
	})
	// Redirections that write make the line at least safe_write.
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok {
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
				cat = maxCat(cat, SafeWrite)
			}
		}
		return true
	})
	return cat, firstErr
}

// stripPrefixes drops exec/command/builtin in front of a literal command;
// `command -v` and `exec` with options run nothing here (nil).
func stripPrefixes(argv []string) []string {
	for len(argv) > 0 && (argv[0] == "exec" || argv[0] == "command" || argv[0] == "builtin") {
		if len(argv) > 1 && strings.HasPrefix(argv[1], "-") {
			return nil
		}
		argv = argv[1:]
	}
	return argv
}
