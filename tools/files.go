package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/internal/xdiff"
	"github.com/tgp-go/tgp/registry"
)

// FileTools returns the jailed file tools.
func FileTools(fsys FileSystem, p Persister, cfg FileToolsConfig) []*Tool {
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = 10 << 20
	}
	ft := &fileTools{fs: fsys, persist: p, cfg: cfg}
	return []*Tool{ft.listFiles(), ft.listDir(), ft.readFile(), ft.writeFile(), ft.patchFile(),
		ft.applyPatch(), ft.grepFiles(), ft.deleteFile()}
}

// BlobHash is the git blob SHA-1 of content (what `git hash-object` prints),
// used as read_file's content hash and write_file's expected_hash.
func BlobHash(content []byte) string { return registry.BlobHash(content) }

func itoa(n int) string { return strconv.Itoa(n) }

// ---- list_files ----

type listFilesArgs struct {
	Dir string `json:"dir,omitempty" default:"\".\"" jsonschema:"directory to list, relative to the root"`
}

// ListFilesResult is list_files' result.
type ListFilesResult struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

func (ft *fileTools) listFiles() *Tool {
	return Define(Spec[listFilesArgs]{
		Name:        "list_files",
		Facts:       Facts{ReadsToolbox: true},
		Output:      ListFilesResult{},
		Description: "List every file under a directory, recursively, sorted, as paths relative to the root (.git excluded).",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, Risk: RiskLow},
		Summary:     func(a listFilesArgs) string { return "list files under " + a.Dir },
		Run: func(ctx context.Context, a listFilesArgs) (Result, error) {
			dir, err := ft.agentPath("dir", a.Dir)
			if err != nil {
				return Result{}, err
			}
			files := []string{}
			err = ft.fs.Walk(dir, func(rel string, info fs.FileInfo, err error) error {
				if err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if info.IsDir() && path.Base(rel) == ".git" {
					return fs.SkipDir
				}
				if !info.IsDir() {
					files = append(files, rel)
				}
				return nil
			})
			if err != nil {
				return Result{}, err
			}
			sort.Strings(files)
			return Result{Value: ListFilesResult{Dir: dir, Files: files}}, nil
		},
	})
}

// ---- list_dir ----

type listDirArgs struct {
	Path   string `json:"path,omitempty" default:"\".\"" jsonschema:"directory to list"`
	Depth  int    `json:"depth,omitempty" default:"2" minimum:"1" maximum:"10" jsonschema:"how many levels to descend"`
	Offset int    `json:"offset,omitempty" default:"0" minimum:"0" jsonschema:"entries to skip (for paging)"`
	Limit  int    `json:"limit,omitempty" default:"200" minimum:"1" maximum:"5000" jsonschema:"entries to return"`
}

func (ft *fileTools) listDir() *Tool {
	return Define(Spec[listDirArgs]{
		Name:  "list_dir",
		Facts: Facts{ReadsToolbox: true},
		Description: "List a directory breadth-first to a depth, sorted, one entry a line relative to the directory; " +
			"markers: / directory, @ symlink, * executable. Page with offset/limit.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, Risk: RiskLow},
		Summary:     func(a listDirArgs) string { return "list " + a.Path },
		Run: func(ctx context.Context, a listDirArgs) (Result, error) {
			dir, err := ft.agentPath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			info, err := ft.fs.Stat(dir)
			if err != nil {
				return Result{}, err
			}
			if !info.IsDir() {
				return Result{}, BadArg("path", "%s is not a directory", a.Path)
			}
			type item struct{ rel string }
			var lines []string
			queue := []item{{""}}
			for depth := 1; depth <= a.Depth && len(queue) > 0; depth++ {
				var next []item
				for _, q := range queue {
					if err := ctx.Err(); err != nil {
						return Result{}, err
					}
					entries, err := ft.fs.ReadDir(path.Join(dir, q.rel))
					if err != nil {
						return Result{}, err
					}
					sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
					for _, e := range entries {
						if e.Name() == ".git" {
							continue
						}
						rel := path.Join(q.rel, e.Name())
						mark := ""
						switch {
						case e.Mode()&fs.ModeSymlink != 0:
							mark = "@"
						case e.IsDir():
							mark = "/"
							next = append(next, item{rel})
						case e.Mode()&0o111 != 0:
							mark = "*"
						}
						lines = append(lines, rel+mark)
					}
				}
				queue = next
			}
			total := len(lines)
			if a.Offset > total {
				a.Offset = total
			}
			end := a.Offset + a.Limit
			more := end < total
			if end > total {
				end = total
			}
			out := strings.Join(lines[a.Offset:end], "\n")
			if more {
				out += fmt.Sprintf("\n[%d more entries; call again with offset %d]", total-end, end)
			}
			return Result{Value: out}, nil
		},
	})
}

// ---- read_file ----

type readFileArgs struct {
	Path        string           `json:"path" jsonschema:"file to read, relative to the root"`
	Offset      int              `json:"offset,omitempty" default:"1" minimum:"1" jsonschema:"first line to return (1-based)"`
	Limit       int              `json:"limit,omitempty" default:"2000" minimum:"1" jsonschema:"number of lines to return"`
	Mode        string           `json:"mode,omitempty" default:"\"slice\"" enum:"slice,indentation" jsonschema:"slice: lines offset..offset+limit; indentation: the block around indentation.anchor_line (default: offset), found by indentation"`
	Indentation *IndentationArgs `json:"indentation,omitempty" jsonschema:"options of the indentation mode"`
}

// ReadFileResult is read_file's result.
type ReadFileResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Hash       string `json:"hash"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Binary     bool   `json:"binary,omitempty"`
}

// maxLineChars is where read_file cuts long lines (seed 002).
const maxLineChars = 400

// LineTruncationMarker ends a line read_file cut.
const LineTruncationMarker = "… [truncated line]"

func (ft *fileTools) readFile() *Tool {
	return Define(Spec[readFileArgs]{
		Name: "read_file", Output: ReadFileResult{},
		Facts: Facts{ReadsToolbox: true},
		Description: "Read a text file as `cat -n` numbered lines; lines over 400 characters are cut (truncated says so). " +
			"mode slice (default) returns limit lines from offset (1-based); mode indentation returns the block around " +
			"indentation.anchor_line (default: offset) found by indentation, max_levels levels out (0: all), with the comment " +
			"header above it and, with include_siblings, the neighbouring blocks: read one function of a long file without guessing line ranges. " +
			"The result's hash is the content's git blob SHA-1: pass it to write_file as expected_hash to avoid overwriting someone else's change.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, Risk: RiskLow},
		Summary:     func(a readFileArgs) string { return "read " + a.Path },
		Run: func(ctx context.Context, a readFileArgs) (Result, error) {
			p, err := ft.agentPath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			info, err := ft.fs.Stat(p)
			if err != nil {
				return Result{}, err
			}
			if info.IsDir() {
				return Result{}, BadArg("path", "%s is a directory; use list_dir", a.Path)
			}
			if info.Size() > ft.cfg.MaxReadBytes {
				return Result{}, BadArg("path", "%s is %d bytes, over the %d byte read limit", a.Path, info.Size(), ft.cfg.MaxReadBytes)
			}
			data, err := ft.fs.ReadFile(p)
			if err != nil {
				return Result{}, err
			}
			res := ReadFileResult{Path: p, Hash: BlobHash(data)}
			if xdiff.IsBinary(data) {
				res.Binary = true
				res.Content = fmt.Sprintf("[binary file, %d bytes]", len(data))
				return Result{Value: res}, nil
			}
			lines := splitLines(string(data))
			res.TotalLines = len(lines)
			if len(lines) == 0 {
				return Result{Value: res}, nil
			}
			var b strings.Builder
			truncated := false
			emit := func(i int) {
				line := lines[i]
				if utf8.RuneCountInString(line) > maxLineChars {
					line = cutRunes(line, maxLineChars) + LineTruncationMarker
					truncated = true
				}
				fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
			}
			if a.Mode == "indentation" {
				o := IndentationArgs{}
				if a.Indentation != nil {
					o = *a.Indentation
				}
				anchor := a.Offset
				if o.AnchorLine > 0 {
					anchor = o.AnchorLine
				}
				if anchor > len(lines) {
					return Result{}, BadArg("indentation.anchor_line", "anchor line %d is past the end of the file (%d lines)", anchor, len(lines))
				}
				limit := a.Limit
				if o.MaxLines > 0 && o.MaxLines < limit {
					limit = o.MaxLines
				}
				block := indentationBlock(lines, anchor-1, min(limit, len(lines)), o)
				for _, i := range block {
					emit(i)
				}
				if len(block) > 0 {
					res.StartLine, res.EndLine = block[0]+1, block[len(block)-1]+1
				}
				res.Content = b.String()
				return Result{Value: res, Truncated: truncated}, nil
			}
			if a.Offset > len(lines) {
				return Result{}, BadArg("offset", "offset %d is past the end of the file (%d lines)", a.Offset, len(lines))
			}
			end := a.Offset - 1 + a.Limit
			if end > len(lines) {
				end = len(lines)
			}
			for i := a.Offset - 1; i < end; i++ {
				emit(i)
			}
			res.Content, res.StartLine, res.EndLine = b.String(), a.Offset, end
			return Result{Value: res, Truncated: truncated || end < len(lines)}, nil
		},
	})
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// ---- write_file ----

type writeFileArgs struct {
	Path         string  `json:"path" jsonschema:"file to create or overwrite"`
	Content      string  `json:"content" jsonschema:"the whole new content"`
	ExpectedHash *string `json:"expected_hash,omitempty" jsonschema:"hash from read_file; the write is refused if the file changed since"`
	Message      string  `json:"message,omitempty" jsonschema:"commit message (default: forge: <path>)"`
	Force        bool    `json:"force,omitempty" default:"false" jsonschema:"write a tool file (tools/**/*.ts) even if check_tool finds errors in it"`
}

// WriteResult is the result of the mutating file tools.
type WriteResult struct {
	Path         string     `json:"path,omitempty"`
	Paths        []string   `json:"paths,omitempty"`
	Bytes        int        `json:"bytes,omitempty"`
	Hash         string     `json:"hash,omitempty"`
	Created      bool       `json:"created,omitempty"`
	Replacements int        `json:"replacements,omitempty"`
	Deleted      bool       `json:"deleted,omitempty"`
	Files        []FileStat `json:"files,omitempty"`
	// Encoding names a file's legacy encoding that an edit kept
	// (patch_file on a file that is not UTF-8).
	Encoding string `json:"encoding,omitempty"`
	// Warnings are check_tool's warnings on the tool files written, and
	// Errors its errors when force wrote them anyway.
	Warnings []Diagnostic `json:"warnings,omitempty"`
	Errors   []Diagnostic `json:"errors,omitempty"`
	*Persisted
}

func (ft *fileTools) writeFile() *Tool {
	return Define(Spec[writeFileArgs]{
		Name: "write_file", Output: WriteResult{},
		Facts: Facts{Persists: true, OnlyPath: "path"},
		Description: "Create or overwrite a file (parent directories are created) and persist it. " +
			"With expected_hash the write is refused with a conflict if the file changed since you read it. " +
			"A tool file (tools/**/*.ts) is checked first, as check_tool does: errors refuse the write (compile_error) unless force is true; warnings come back in the result.",
		Annotations: Annotations{Risk: RiskMedium, Idempotent: true},
		Summary:     func(a writeFileArgs) string { return fmt.Sprintf("write %d bytes to %s", len(a.Content), a.Path) },
		Run: func(ctx context.Context, a writeFileArgs) (Result, error) {
			p, err := ft.writePath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			old, err := ft.fs.ReadFile(p)
			created := errors.Is(err, fs.ErrNotExist)
			if err != nil && !created {
				return Result{}, err
			}
			if a.ExpectedHash != nil {
				cur := ""
				if !created {
					cur = BlobHash(old)
				}
				if !strings.EqualFold(cur, *a.ExpectedHash) {
					return Result{}, &Error{Kind: KindConflict,
						Message: fmt.Sprintf("%s changed since it was read (hash %s, expected %s); read it again and redo your edit", a.Path, orNone(cur), *a.ExpectedHash),
						Details: map[string]any{"path": p, "current_hash": cur}}
				}
			}
			errs, warns, err := ft.checkTools("content", []toolWrite{{p, []byte(a.Content)}}, a.Force)
			if err != nil {
				return Result{}, err
			}
			if err := ft.fs.WriteFile(p, []byte(a.Content), 0o644); err != nil {
				return Result{}, err
			}
			per, err := ft.commit(ctx, "write_file", []string{p}, orDefault(a.Message, defaultMessage("write_file", []string{p})))
			if err != nil {
				return Result{}, err
			}
			return Result{Value: WriteResult{Path: p, Bytes: len(a.Content), Hash: BlobHash([]byte(a.Content)), Created: created,
				Warnings: warns, Errors: errs, Persisted: per}}, nil
		},
	})
}

// writePath is agentPath for a path the tool will create or overwrite:
// git's path rules apply (gitpath.Verify), so no commit holds a name that
// some filesystem reads as .git (".GIT", "git~1", ".git\u200c", ...),
// which would be code execution for whoever clones it there. The rule
// applies to where the path resolves, which is what gets committed.
func (ft *fileTools) writePath(field, p string) (string, error) {
	if rel, err := ft.fs.Resolve(p); err == nil {
		if err := writable(field, rel); err != nil {
			return "", err
		}
	}
	return ft.agentPath(field, p)
}

// writable checks a resolved path against git's path rules; the message
// starts with git's own ("invalid path '<p>'").
func writable(field, rel string) error {
	err := gitpath.Verify(rel, false)
	if err == nil {
		return nil
	}
	reason := "git refuses this path"
	var ipe *gitpath.InvalidPathError
	if errors.As(err, &ipe) {
		reason = ipe.Reason
	}
	if q := strconv.Quote(rel); q[1:len(q)-1] != rel {
		reason += " (the path is " + q + ")" // make invisible code points visible
	}
	return &Error{Kind: KindSandboxViolation, Field: field, Err: err,
		Message: fmt.Sprintf("%v: %s; git refuses to store this path (on macOS or Windows it can be read as .git or break the clone), choose another name", err, reason)}
}

func orNone(s string) string {
	if s == "" {
		return "none: the file does not exist"
	}
	return s
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// ---- patch_file ----

type patchFileArgs struct {
	Path       string `json:"path" jsonschema:"file to edit"`
	OldString  string `json:"old_string" minLength:"1" jsonschema:"exact text to replace (alias: search)"`
	NewString  string `json:"new_string" jsonschema:"replacement text (alias: replace)"`
	ReplaceAll bool   `json:"replace_all,omitempty" default:"false" jsonschema:"replace every occurrence instead of exactly one"`
	Message    string `json:"message,omitempty" jsonschema:"commit message"`
	Force      bool   `json:"force,omitempty" default:"false" jsonschema:"edit a tool file (tools/**/*.ts) even if check_tool finds errors in the result"`
}

func (ft *fileTools) patchFile() *Tool {
	return Define(Spec[patchFileArgs]{
		Name: "patch_file", Output: WriteResult{},
		Facts: Facts{Persists: true},
		Description: "Replace an exact string in a file and persist it. old_string must occur exactly once " +
			"unless replace_all is true. Aliases: search/replace. An edited tool file (tools/**/*.ts) is checked as check_tool does: " +
			"errors refuse the edit (compile_error) unless force is true; warnings come back in the result.",
		Annotations: Annotations{Risk: RiskMedium},
		Aliases:     map[string]string{"search": "old_string", "replace": "new_string"},
		Summary:     func(a patchFileArgs) string { return "edit " + a.Path },
		Validate: func(a patchFileArgs) error {
			if a.OldString == a.NewString {
				return BadArg("new_string", "new_string is identical to old_string; nothing to change")
			}
			return nil
		},
		Run: func(ctx context.Context, a patchFileArgs) (Result, error) {
			p, err := ft.writePath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			data, err := ft.fs.ReadFile(p)
			if err != nil {
				return Result{}, err
			}
			s := string(data)
			oldS, newS, encName := a.OldString, a.NewString, ""
			// A file in a legacy encoding (cp1251...) is edited in it: the
			// strings are encoded as the file is and the rest is untouched.
			if name, ob, encode, ok := legacyEdit(data, a.OldString); ok {
				nb, err := encode(a.NewString)
				if err != nil {
					return Result{}, BadArg("new_string", "new_string has a character the file's encoding (%s) cannot hold; the file keeps its encoding", name)
				}
				oldS, newS, encName = string(ob), string(nb), name
			}
			n := strings.Count(s, oldS)
			switch {
			case n == 0:
				return Result{}, &Error{Kind: KindNotFound, Field: "old_string", Message: "String to replace not found in file."}
			case n > 1 && !a.ReplaceAll:
				return Result{}, BadArg("old_string", "Found %d matches of the string to replace, but replace_all is false. "+
					"To replace all occurrences, set replace_all to true. To replace only one, add more surrounding context to make it unique.", n)
			}
			if a.ReplaceAll {
				s = strings.ReplaceAll(s, oldS, newS)
			} else {
				s = strings.Replace(s, oldS, newS, 1)
			}
			errs, warns, err := ft.checkTools("new_string", []toolWrite{{p, []byte(s)}}, a.Force)
			if err != nil {
				return Result{}, err
			}
			if err := ft.fs.WriteFile(p, []byte(s), modeOf(ft.fs, p)); err != nil {
				return Result{}, err
			}
			per, err := ft.commit(ctx, "patch_file", []string{p}, orDefault(a.Message, defaultMessage("patch_file", []string{p})))
			if err != nil {
				return Result{}, err
			}
			return Result{Value: WriteResult{Path: p, Replacements: n, Hash: BlobHash([]byte(s)), Encoding: encName,
				Warnings: warns, Errors: errs, Persisted: per}}, nil
		},
	})
}

func modeOf(fsys FileSystem, p string) fs.FileMode {
	if info, err := fsys.Stat(p); err == nil {
		return info.Mode().Perm()
	}
	return 0o644
}

// ---- grep_files ----

type grepArgs struct {
	Pattern string `json:"pattern" minLength:"1" jsonschema:"RE2 regular expression"`
	Path    string `json:"path,omitempty" default:"\".\"" jsonschema:"directory or file to search"`
	Include string `json:"include,omitempty" jsonschema:"glob on file names or paths, e.g. *.ts or tools/**/*.ts"`
	Limit   int    `json:"limit,omitempty" default:"200" minimum:"1" maximum:"10000" jsonschema:"maximum matching lines"`
}

func (ft *fileTools) grepFiles() *Tool {
	return Define(Spec[grepArgs]{
		Name:        "grep_files",
		Facts:       Facts{ReadsToolbox: true},
		Description: "Search files for an RE2 regular expression; prints file:line:text, stopping at the limit.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, Risk: RiskLow},
		Summary:     func(a grepArgs) string { return "search for " + a.Pattern + " in " + a.Path },
		Run: func(ctx context.Context, a grepArgs) (Result, error) {
			re, err := regexp.Compile(a.Pattern)
			if err != nil {
				return Result{}, BadArg("pattern", "invalid regular expression: %v", err)
			}
			if a.Include != "" {
				if _, err := path.Match(a.Include, "x"); err != nil {
					return Result{}, BadArg("include", "invalid glob %q: %v", a.Include, err)
				}
			}
			root, err := ft.agentPath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			var out []string
			stop := errors.New("limit")
			err = ft.fs.Walk(root, func(rel string, info fs.FileInfo, err error) error {
				if err != nil {
					return err
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if info.IsDir() {
					if path.Base(rel) == ".git" || path.Base(rel) == "node_modules" {
						return fs.SkipDir
					}
					return nil
				}
				if !info.Mode().IsRegular() || (a.Include != "" && !globMatch(a.Include, rel)) {
					return nil
				}
				data, err := ft.fs.ReadFile(rel)
				if err != nil || xdiff.IsBinary(data) {
					return nil
				}
				for i, line := range splitLines(string(data)) {
					if re.MatchString(line) {
						if len(out) == a.Limit {
							return stop
						}
						out = append(out, fmt.Sprintf("%s:%d:%s", rel, i+1, line))
					}
				}
				return nil
			})
			truncated := errors.Is(err, stop)
			if err != nil && !truncated {
				return Result{}, err
			}
			text := strings.Join(out, "\n")
			if truncated {
				text += fmt.Sprintf("\n[stopped at the limit of %d matches; narrow the pattern or path, or raise limit]", a.Limit)
			} else if len(out) == 0 {
				text = "No matches found."
			}
			return Result{Value: text, Truncated: truncated}, nil
		},
	})
}

// globMatch matches a glob against the base name, or against the whole
// path when the glob has a slash; `**/` matches any number of directories.
func globMatch(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(rel))
		return ok
	}
	return doubleStarMatch(strings.Split(glob, "/"), strings.Split(rel, "/"))
}

func doubleStarMatch(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if doubleStarMatch(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

// ---- delete_file ----

type deleteArgs struct {
	Path    string `json:"path" jsonschema:"file to delete"`
	Message string `json:"message,omitempty" jsonschema:"commit message"`
}

func (ft *fileTools) deleteFile() *Tool {
	return Define(Spec[deleteArgs]{
		Name:        "delete_file",
		Facts:       Facts{Persists: true},
		Output:      WriteResult{},
		Description: "Delete a file and persist the deletion.",
		Annotations: Annotations{Destructive: true, Risk: RiskMedium},
		Summary:     func(a deleteArgs) string { return "delete " + a.Path },
		Run: func(ctx context.Context, a deleteArgs) (Result, error) {
			p, err := ft.linkPath("path", a.Path)
			if err != nil {
				return Result{}, err
			}
			info, err := ft.fs.Lstat(p)
			if err != nil {
				return Result{}, err
			}
			if info.IsDir() {
				return Result{}, BadArg("path", "%s is a directory; delete_file deletes files", a.Path)
			}
			if err := ft.fs.Remove(p); err != nil {
				return Result{}, err
			}
			per, err := ft.commit(ctx, "delete_file", []string{p}, orDefault(a.Message, "forge: delete "+p))
			if err != nil {
				return Result{}, err
			}
			return Result{Value: WriteResult{Path: p, Deleted: true, Persisted: per}}, nil
		},
	})
}
