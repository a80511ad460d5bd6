package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// The Codex-style envelope has no Go library; plain unified and git diffs
// are parsed and applied with github.com/bluekeyes/go-gitdiff.

type applyPatchArgs struct {
	Patch   string `json:"patch" minLength:"1" jsonschema:"a *** Begin Patch envelope or a unified diff"`
	Message string `json:"message,omitempty" jsonschema:"commit message"`
	Force   bool   `json:"force,omitempty" default:"false" jsonschema:"apply even if check_tool finds errors in a tool file (tools/**/*.ts) the patch writes"`
}

// FileStat is one file's part of an applied patch.
type FileStat struct {
	Path    string `json:"path"`
	Action  string `json:"action"` // add, update, delete, move
	From    string `json:"from,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// PatchError is a patch that does not parse or does not apply; nothing was
// changed.
type PatchError struct {
	Path    string
	Message string
}

func (e *PatchError) Error() string {
	if e.Path == "" {
		return "apply_patch: " + e.Message
	}
	return "apply_patch " + e.Path + ": " + e.Message
}

// fileOp is a planned change: new content (nil when deleted) at Path, and
// the path it replaces when moved.
type fileOp struct {
	stat    FileStat
	path    string
	from    string
	content []byte
	delete  bool
}

func (ft *fileTools) applyPatch() *Tool {
	return Define(Spec[applyPatchArgs]{
		Name: "apply_patch", Output: WriteResult{},
		Facts: Facts{Persists: true},
		Description: "Apply a patch atomically (all files or none) and persist it. Accepts the envelope\n" +
			"*** Begin Patch\n*** Add File: path\n+line\n*** Update File: path\n*** Move to: new/path\n@@ optional anchor line\n context\n-old\n+new\n*** End of File\n*** Delete File: path\n*** End Patch\n" +
			"(the format of OpenAI Codex's apply_patch; an apply_patch <<'EOF' or cat <<'EOF' heredoc wrapper, a *** Environment ID line " +
			"and blank lines between hunks are fine; cat <<'EOF' > path with plain text writes that file), " +
			"or a plain unified diff (--- a/x, +++ b/x, @@ hunks). Envelope context is matched exactly, then ignoring trailing " +
			"whitespace, then surrounding whitespace, then with typographic quotes/dashes normalised; a chunk of only + lines " +
			"is appended at the end of the file; Add File and Move to overwrite an existing file; updated files end with a newline. " +
			"Tool files (tools/**/*.ts) the patch writes are checked as check_tool does: errors refuse the whole patch (compile_error) unless force is true; " +
			"warnings come back in the result.",
		Annotations: Annotations{Risk: RiskMedium},
		Summary:     func(a applyPatchArgs) string { return "apply a patch of " + itoa(len(a.Patch)) + " bytes" },
		Run: func(ctx context.Context, a applyPatchArgs) (Result, error) {
			var ops []fileOp
			var err error
			patch := normaliseLineEnds(a.Patch)
			if dest, body, ok := catHeredoc(patch); ok && !isEnvelope(body) && !looksUnified(body) {
				// `cat <<'EOF' > file` (opencode's form): the body is the
				// file's whole content.
				ops, err = ft.planCatWrite(dest, body)
			} else if isEnvelope(patch) {
				ops, err = ft.planEnvelope(patch)
			} else {
				if ok {
					patch = body
				}
				ops, err = ft.planUnified(patch)
			}
			if err != nil {
				return Result{}, err
			}
			var writes []toolWrite
			for _, op := range ops {
				if !op.delete {
					writes = append(writes, toolWrite{op.path, op.content})
				}
			}
			errs, warns, err := ft.checkTools("patch", writes, a.Force)
			if err != nil {
				return Result{}, err
			}
			paths, err := ft.commitOps(ops)
			if err != nil {
				return Result{}, err
			}
			stats := make([]FileStat, len(ops))
			for i, op := range ops {
				stats[i] = op.stat
			}
			per, err := ft.commit(ctx, "apply_patch", paths, orDefault(a.Message, defaultMessage("apply_patch", paths)))
			if err != nil {
				return Result{}, err
			}
			return Result{Value: WriteResult{Paths: paths, Files: stats, Warnings: warns, Errors: errs, Persisted: per}}, nil
		},
	})
}

func patchErr(path, format string, args ...any) error {
	return &Error{Kind: KindBadArgs, Field: "patch", Message: (&PatchError{Path: path, Message: fmt.Sprintf(format, args...)}).Error(),
		Err: &PatchError{Path: path, Message: fmt.Sprintf(format, args...)}}
}

// commitOps writes every planned file; if one write fails, the files
// already written are put back, so the patch lands whole or not at all.
func (ft *fileTools) commitOps(ops []fileOp) ([]string, error) {
	type backup struct {
		path   string
		data   []byte
		link   string // a symlink's target: put back as a link
		exists bool
	}
	var done []backup
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			b := done[i]
			switch {
			case b.link != "":
				_ = ft.fs.Remove(b.path)
				_ = ft.fs.Symlink(b.link, b.path)
			case b.exists:
				_ = ft.fs.WriteFile(b.path, b.data, 0o644)
			default:
				_ = ft.fs.Remove(b.path)
			}
		}
	}
	save := func(p string) {
		if info, err := ft.fs.Lstat(p); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			if t, err := ft.fs.Readlink(p); err == nil {
				done = append(done, backup{path: p, link: t, exists: true})
				return
			}
		}
		data, err := ft.fs.ReadFile(p)
		done = append(done, backup{path: p, data: data, exists: err == nil})
	}
	var paths []string
	for _, op := range ops {
		if op.from != "" && op.from != op.path {
			save(op.from)
			if err := ft.fs.Remove(op.from); err != nil {
				rollback()
				return nil, err
			}
			paths = append(paths, op.from)
		}
		save(op.path)
		var err error
		if op.delete {
			err = ft.fs.Remove(op.path)
		} else {
			err = ft.fs.WriteFile(op.path, op.content, 0o644)
		}
		if err != nil {
			rollback()
			return nil, err
		}
		paths = append(paths, op.path)
	}
	return paths, nil
}

// ---- envelope ----
//
// The envelope follows OpenAI Codex's apply_patch (codex-rs/apply-patch),
// which models are trained against: markers may carry surrounding
// whitespace, a heredoc wrapper (<<'EOF' ... EOF) is stripped, blank lines
// between hunks are ignored, an Add File or Move to onto an existing file
// overwrites it (the old content stays in git history), a chunk with no
// old lines is appended at the end of the file, context is matched exactly,
// then ignoring trailing whitespace, then surrounding whitespace, then with
// typographic punctuation normalised, and every updated file ends with a
// newline. Lines a chunk keeps keep their own line ends; added lines end
// as the file's first line does. Unlike the reference, a patch applies
// whole or not at all, a patch that touches one file twice is refused, a
// file moved onto itself is kept (the reference deletes it), and blank
// lines between hunks are taken (TestApplyPatchMatchesCodex compares the
// two, given the reference's binary).

// heredocOpen matches the first line of a heredoc-wrapped envelope:
// Codex's `apply_patch <<'EOF'`, opencode's `cat <<'EOF'`, and either with
// a redirection (`> file`) after the word.
var heredocOpen = regexp.MustCompile(`^(?:(?:apply_patch|cat)\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)(?:\s*>\s*(\S+))?$`)

// normaliseLineEnds reads a line ending doubled by a second CRLF
// conversion (\r\r\n) as one CRLF, as an editor shows it.
func normaliseLineEnds(patch string) string {
	for strings.Contains(patch, "\r\r\n") {
		patch = strings.ReplaceAll(patch, "\r\r\n", "\r\n")
	}
	return patch
}

// catHeredoc splits `cat <<'EOF' > file` ... `EOF` into the file and the
// body; ok is false for another shape. The body of a wrapper without a
// redirection comes back with dest "".
func catHeredoc(patch string) (dest, body string, ok bool) {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(patch, "\r\n", "\n")), "\n")
	if len(lines) < 2 {
		return "", "", false
	}
	m := heredocOpen.FindStringSubmatch(strings.TrimSpace(lines[0]))
	if m == nil || m[1] != m[3] || strings.TrimSpace(lines[len(lines)-1]) != m[2] {
		return "", "", false
	}
	if len(lines) == 2 {
		return m[4], "", true
	}
	return m[4], strings.Join(lines[1:len(lines)-1], "\n") + "\n", true
}

// looksUnified says whether a text starts like a unified diff.
func looksUnified(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "diff --git ")
}

// planCatWrite is `cat <<'EOF' > file`: the file gets the body.
func (ft *fileTools) planCatWrite(dest, body string) ([]fileOp, error) {
	if dest == "" {
		return nil, patchErr("", "a heredoc without a patch inside and without '> file' changes nothing")
	}
	p, err := ft.writePath("patch", strings.Trim(dest, `'"`))
	if err != nil {
		return nil, err
	}
	if info, err := ft.fs.Lstat(p); err == nil && info.IsDir() {
		return nil, patchErr(p, "a directory is in the way")
	}
	return []fileOp{{path: p, content: []byte(body), stat: FileStat{Path: p, Action: "add", Added: len(splitLines(body))}}}, nil
}

// envelopeLines returns the lines between the Begin and End markers.
func envelopeLines(patch string) ([]string, error) {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(patch, "\r\n", "\n")), "\n")
	if len(lines) >= 4 {
		if m := heredocOpen.FindStringSubmatch(strings.TrimSpace(lines[0])); m != nil && m[1] == m[3] &&
			strings.TrimSpace(lines[len(lines)-1]) == m[2] {
			lines = lines[1 : len(lines)-1]
		}
	}
	// Codex puts `*** Environment ID: <id>` between the Begin marker and
	// the first file: it is metadata for Codex, not a hunk. As in Codex,
	// the id must not be empty and comes once.
	for seen := false; len(lines) > 1; seen = true {
		id, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "*** Environment ID:")
		if !ok {
			break
		}
		if seen {
			return nil, patchErr("", "invalid patch: apply_patch environment_id cannot be specified more than once")
		}
		if strings.TrimSpace(id) == "" {
			return nil, patchErr("", "invalid patch: apply_patch environment_id cannot be empty")
		}
		lines = append(lines[:1], lines[2:]...)
	}
	if strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, patchErr("", "the first line of the patch must be '*** Begin Patch'")
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, patchErr("", "the last line of the patch must be '*** End Patch'")
	}
	return lines[1 : len(lines)-1], nil
}

// isEnvelope says whether a patch is the *** Begin Patch format (possibly
// in a heredoc wrapper).
func isEnvelope(patch string) bool {
	t := strings.TrimSpace(strings.ReplaceAll(patch, "\r\n", "\n"))
	if strings.HasPrefix(t, "*** Begin Patch") {
		return true
	}
	first, rest, _ := strings.Cut(t, "\n")
	return heredocOpen.MatchString(strings.TrimSpace(first)) && strings.HasPrefix(strings.TrimSpace(rest), "*** Begin Patch")
}

func (ft *fileTools) planEnvelope(patch string) ([]fileOp, error) {
	lines, err := envelopeLines(patch)
	if err != nil {
		return nil, err
	}
	var ops []fileOp
	seen := map[string]bool{}
	claim := func(p string) error {
		if seen[p] {
			return patchErr(p, "the patch touches this file twice")
		}
		seen[p] = true
		return nil
	}
	header := func(l, marker string) (string, bool) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), marker)
		return strings.TrimSpace(rest), ok
	}
	i := 0
	for i < len(lines) {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			i++ // blank lines between hunks
			continue
		}
		if name, ok := header(line, "*** Add File: "); ok {
			p, err := ft.writePath("patch", name)
			if err != nil {
				return nil, err
			}
			if err := claim(p); err != nil {
				return nil, err
			}
			if info, err := ft.fs.Lstat(p); err == nil && info.IsDir() {
				return nil, patchErr(p, "Add File: a directory is in the way")
			}
			i++
			var b strings.Builder
			n := 0
			for i < len(lines) && strings.HasPrefix(lines[i], "+") {
				b.WriteString(lines[i][1:])
				b.WriteByte('\n')
				n++
				i++
			}
			ops = append(ops, fileOp{path: p, content: []byte(b.String()), stat: FileStat{Path: p, Action: "add", Added: n}})
			continue
		}
		if name, ok := header(line, "*** Delete File: "); ok {
			p, err := ft.linkPath("patch", name)
			if err != nil {
				return nil, err
			}
			if err := claim(p); err != nil {
				return nil, err
			}
			info, err := ft.fs.Lstat(p)
			if err != nil {
				return nil, patchErr(p, "Delete File: %v", err)
			}
			if info.IsDir() {
				return nil, patchErr(p, "Delete File: is a directory, not a file")
			}
			removed := 0
			if info.Mode()&fs.ModeSymlink == 0 { // a link is removed, not read
				data, err := ft.fs.ReadFile(p)
				if err != nil {
					return nil, patchErr(p, "Delete File: %v", err)
				}
				removed = len(splitLines(string(data)))
			}
			ops = append(ops, fileOp{path: p, delete: true, stat: FileStat{Path: p, Action: "delete", Removed: removed}})
			i++
			continue
		}
		name, ok := header(line, "*** Update File: ")
		if !ok {
			return nil, patchErr("", "%q is not a valid hunk header; valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", strings.TrimSpace(line))
		}
		p, err := ft.agentPath("patch", name)
		if err != nil {
			return nil, err
		}
		if err := claim(p); err != nil {
			return nil, err
		}
		i++
		dest := p
		if i < len(lines) {
			if to, ok := header(lines[i], "*** Move to: "); ok {
				if dest, err = ft.writePath("patch", to); err != nil {
					return nil, err
				}
				if dest != p {
					if err := claim(dest); err != nil {
						return nil, err
					}
					if info, err := ft.fs.Lstat(dest); err == nil && info.IsDir() {
						return nil, patchErr(dest, "Move to: a directory is in the way")
					}
				}
				i++
			}
		}
		// Updating in place rewrites p: git's rules hold there too.
		// Moving only removes it (which is how an odd name is fixed).
		if dest == p {
			if err := writable("patch", p); err != nil {
				return nil, err
			}
		}
		chunks, next, err := parseChunks(p, lines, i)
		if err != nil {
			return nil, err
		}
		i = next
		data, err := ft.fs.ReadFile(p)
		if err != nil {
			return nil, patchErr(p, "Update File: %v", err)
		}
		content, added, removed, err := applyChunks(p, string(data), chunks)
		if err != nil {
			return nil, err
		}
		op := fileOp{path: dest, content: []byte(content), stat: FileStat{Path: dest, Action: "update", Added: added, Removed: removed}}
		if dest != p {
			op.from, op.stat.From, op.stat.Action = p, p, "move"
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, patchErr("", "the patch changes no file")
	}
	return ops, nil
}

type chunk struct {
	anchor    string
	hasAnchor bool
	lines     []chunkLine
	eof       bool
}

// chunkLine is one line of a chunk: ' ' context, '-' removed, '+' added.
type chunkLine struct {
	kind byte
	text string
}

// sides returns the chunk's old and new lines.
func sides(ls []chunkLine) (old, nw []string) {
	for _, l := range ls {
		if l.kind != '+' {
			old = append(old, l.text)
		}
		if l.kind != '-' {
			nw = append(nw, l.text)
		}
	}
	return old, nw
}

// replacement is what a chunk matched at original lines orig (ending
// with origEnds) turns into: context lines keep the file's own text and
// line ends (a match that ignored whitespace or punctuation must not
// rewrite the lines around the change), added lines end with eol.
func replacement(ls []chunkLine, orig, origEnds []string, eol string) (out, ends []string) {
	o := 0
	for _, l := range ls {
		switch l.kind {
		case ' ':
			out, ends = append(out, orig[o]), append(ends, origEnds[o])
			o++
		case '-':
			o++
		default:
			out, ends = append(out, l.text), append(ends, eol)
		}
	}
	return out, ends
}

// lineEnds returns each line's end in content ("\r\n", "\n", or "" for a
// last line with none), line for line with splitLines.
func lineEnds(content string) []string {
	var ends []string
	for content != "" {
		i := strings.IndexByte(content, '\n')
		if i < 0 {
			return append(ends, "")
		}
		if i > 0 && content[i-1] == '\r' {
			ends = append(ends, "\r\n")
		} else {
			ends = append(ends, "\n")
		}
		content = content[i+1:]
	}
	return ends
}

// parseChunks reads an Update File's chunks from lines[i:], up to the next
// hunk header, and returns where it stopped.
func parseChunks(p string, lines []string, i int) ([]chunk, int, error) {
	var chunks []chunk
	for i < len(lines) {
		l := lines[i]
		t := strings.TrimSpace(l)
		if t == "" && len(chunks) > 0 {
			i++ // blank lines between chunks (before the first: context)
			continue
		}
		if strings.HasPrefix(t, "*** ") && t != "*** End of File" {
			break // the next hunk header
		}
		c := chunk{}
		switch {
		case t == "@@":
			c.hasAnchor = true
			i++
		case strings.HasPrefix(t, "@@ "):
			// The reference trims the line's end before taking the anchor.
			c.anchor, c.hasAnchor = strings.TrimPrefix(strings.TrimSpace(l), "@@ "), true
			i++
		case len(chunks) > 0:
			return nil, 0, patchErr(p, "expected the chunk to start with a @@ line, got %q", l)
		}
		n := 0
	body:
		for i < len(lines) {
			l := lines[i]
			switch {
			case strings.TrimSpace(l) == "*** End of File":
				if n == 0 {
					return nil, 0, patchErr(p, "a chunk has no lines")
				}
				c.eof = true
				i++
				break body
			case l == "":
				c.lines = append(c.lines, chunkLine{' ', ""})
			case l[0] == ' ' || l[0] == '+' || l[0] == '-':
				c.lines = append(c.lines, chunkLine{l[0], l[1:]})
			default:
				if n == 0 {
					return nil, 0, patchErr(p, "unexpected line %q in a chunk: every line starts with ' ' (context), '+' (added) or '-' (removed)", l)
				}
				break body
			}
			n++
			i++
		}
		if n == 0 {
			return nil, 0, patchErr(p, "a chunk has no lines")
		}
		// Blank lines a model put between chunks or before the next
		// header parse as empty context; they are trimmed here when the
		// chunk ends the hunk or is followed by another (the search below
		// tries the lines with them first).
		chunks = append(chunks, c)
	}
	if len(chunks) == 0 {
		return nil, 0, patchErr(p, "Update File has no chunks")
	}
	return chunks, i, nil
}

// applyChunks applies an Update File's chunks in order, as the reference
// does: an anchor (@@ line) moves the search past it; a chunk without old
// lines is appended at the end of the file; old lines are sought with
// decreasing strictness (seekLines). As in the reference, the lines the
// patch keeps keep their own line ends, and the lines it adds (and a last
// line that had none) end as the file's first line does: the result
// always ends with a line end.
func applyChunks(p, content string, chunks []chunk) (string, int, int, error) {
	lines, ends := splitLines(content), lineEnds(content)
	eol := "\n"
	if len(ends) > 0 && ends[0] == "\r\n" {
		eol = "\r\n"
	}
	type repl struct {
		at, n     int
		new, ends []string
	}
	var repls []repl
	pos, added, removed := 0, 0, 0
	for k, c := range chunks {
		if c.anchor != "" {
			at := seekLines(lines, []string{c.anchor}, pos, false)
			if at < 0 {
				return "", 0, 0, patchErr(p, "chunk %d: the @@ line %q was not found (from line %d)", k+1, c.anchor, pos+1)
			}
			pos = at + 1
		}
		ls := c.lines
		old, nw := sides(ls)
		if len(old) == 0 {
			repls = append(repls, repl{at: len(lines), new: nw, ends: repeatEnd(eol, len(nw))})
		} else {
			at := seekLines(lines, old, pos, c.eof)
			for retry := 0; at < 0; retry++ {
				// A last empty old line stands for the file's last line
				// end (or was a blank separator): retry without it, and
				// without a last empty new line, as the reference does
				// (once). No old line left: the new ones go where the
				// search is. Beyond the reference, more blank lines that
				// end the chunk are taken as separators.
				if retry > 0 && (len(ls) == 0 || ls[len(ls)-1] != (chunkLine{' ', ""})) {
					break
				}
				shorter := dropTrailingEmpty(ls)
				if shorter == nil {
					break
				}
				ls = shorter
				if old, _ = sides(ls); len(old) == 0 {
					at = pos
					break
				}
				at = seekLines(lines, old, pos, c.eof)
			}
			if at < 0 {
				o, _ := sides(c.lines)
				return "", 0, 0, patchErr(p, "chunk %d does not match; these lines were not found in order (from line %d):\n%s",
					k+1, pos+1, strings.Join(o, "\n"))
			}
			var ne []string
			nw, ne = replacement(ls, lines[at:at+len(old)], ends[at:at+len(old)], eol)
			repls = append(repls, repl{at: at, n: len(old), new: nw, ends: ne})
			pos = at + len(old)
		}
		for _, d := range diffCount(old, nw) {
			added += d[0]
			removed += d[1]
		}
	}
	sort.SliceStable(repls, func(a, b int) bool { return repls[a].at < repls[b].at })
	for k := len(repls) - 1; k >= 0; k-- {
		r := repls[k]
		tail := append([]string{}, lines[r.at+r.n:]...)
		tailEnds := append([]string{}, ends[r.at+r.n:]...)
		lines = append(append(lines[:r.at], r.new...), tail...)
		ends = append(append(ends[:r.at], r.ends...), tailEnds...)
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if ends[i] == "" {
			b.WriteString(eol)
		} else {
			b.WriteString(ends[i])
		}
	}
	return b.String(), added, removed, nil
}

func repeatEnd(eol string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = eol
	}
	return out
}

// dropTrailingEmpty drops a chunk's last old line when it is empty, and
// its last new line when that is empty too (a context line is on both
// sides: dropped from the old side only, it stays as an added line); nil
// when the last old line is not empty.
func dropTrailingEmpty(ls []chunkLine) []chunkLine {
	last := func(skip byte) int {
		for i := len(ls) - 1; i >= 0; i-- {
			if ls[i].kind != skip {
				return i
			}
		}
		return -1
	}
	io, in := last('+'), last('-')
	if io < 0 || ls[io].text != "" {
		return nil
	}
	out := append([]chunkLine{}, ls...)
	drop := map[int]bool{}
	if ls[io].kind == ' ' && in != io {
		out[io].kind = '+' // the new side keeps it
	} else {
		drop[io] = true
	}
	if in >= 0 && ls[in].text == "" {
		drop[in] = true
	}
	kept := []chunkLine{}
	for k, l := range out {
		if !drop[k] {
			kept = append(kept, l)
		}
	}
	return kept
}

// seekLines finds pattern in lines at or after start: exactly, then
// ignoring trailing whitespace, then surrounding whitespace, then with
// typographic dashes, quotes and spaces normalised. With eof the pattern
// must end the file.
func seekLines(lines, pattern []string, start int, eof bool) int {
	if len(pattern) == 0 {
		return start
	}
	if len(pattern) > len(lines) {
		return -1
	}
	if eof {
		start = len(lines) - len(pattern)
	}
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t\r\v\f") },
		strings.TrimSpace,
		normalisePunctuation,
	} {
		for i := start; i+len(pattern) <= len(lines); i++ {
			ok := true
			for j, pl := range pattern {
				if norm(lines[i+j]) != norm(pl) {
					ok = false
					break
				}
			}
			if ok {
				return i
			}
		}
	}
	return -1
}

// punctuation maps the typographic characters models and editors swap for
// ASCII ones.
var punctuation = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", "\"", "\u201D", "\"", "\u201E", "\"", "\u201F", "\"",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

func normalisePunctuation(s string) string { return punctuation.Replace(strings.TrimSpace(s)) }

// diffCount counts added and removed lines of a hunk (context excluded).
func diffCount(old, new []string) [][2]int {
	pre := 0
	for pre < len(old) && pre < len(new) && old[pre] == new[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(new)-pre && old[len(old)-1-suf] == new[len(new)-1-suf] {
		suf++
	}
	return [][2]int{{len(new) - pre - suf, len(old) - pre - suf}}
}

// ---- unified diff ----

func (ft *fileTools) planUnified(patch string) ([]fileOp, error) {
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return nil, patchErr("", "cannot parse the diff: %v", err)
	}
	if len(files) == 0 {
		return nil, patchErr("", "no file changes found; expected *** Begin Patch or --- a/path / +++ b/path headers")
	}
	var ops []fileOp
	seen := map[string]bool{}
	gitStyle := strings.Contains(patch, "diff --git ")
	for _, f := range files {
		if !gitStyle {
			// Traditional diffs keep their a/ b/ prefixes: strip them like `patch -p1`.
			f.OldName = stripSide(f.OldName)
			f.NewName = stripSide(f.NewName)
		}
		if f.IsBinary {
			return nil, patchErr(f.NewName, "binary patches are not supported")
		}
		oldName, newName := f.OldName, f.NewName
		var op fileOp
		var src []byte
		if !f.IsNew {
			p, err := ft.agentPath("patch", oldName)
			if err != nil {
				return nil, err
			}
			src, err = ft.fs.ReadFile(p)
			if err != nil {
				return nil, patchErr(oldName, "%v", err)
			}
			oldName = p
		}
		target := oldName
		if !f.IsDelete {
			p, err := ft.writePath("patch", newName)
			if err != nil {
				return nil, err
			}
			target = p
			if f.IsNew {
				if _, err := ft.fs.Lstat(p); err == nil {
					return nil, patchErr(p, "the diff creates a file that already exists")
				}
			}
		}
		if seen[target] {
			return nil, patchErr(target, "the diff touches this file twice")
		}
		seen[target] = true
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(src), f); err != nil {
			return nil, unifiedApplyError(target, f, err)
		}
		added, removed := 0, 0
		for _, frag := range f.TextFragments {
			added += int(frag.LinesAdded)
			removed += int(frag.LinesDeleted)
		}
		switch {
		case f.IsDelete:
			op = fileOp{path: oldName, delete: true, stat: FileStat{Path: oldName, Action: "delete", Removed: removed}}
		case f.IsNew:
			op = fileOp{path: target, content: dst.Bytes(), stat: FileStat{Path: target, Action: "add", Added: added}}
		default:
			op = fileOp{path: target, content: dst.Bytes(), stat: FileStat{Path: target, Action: "update", Added: added, Removed: removed}}
			if target != oldName {
				op.from, op.stat.From, op.stat.Action = oldName, oldName, "move"
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func unifiedApplyError(p string, f *gitdiff.File, err error) error {
	var conflict *gitdiff.Conflict
	var ae *gitdiff.ApplyError
	if errors.As(err, &conflict) || errors.As(err, &ae) || errors.Is(err, &gitdiff.Conflict{}) {
		var want []string
		for i, frag := range f.TextFragments {
			var old []string
			for _, l := range frag.Lines {
				if l.Op != gitdiff.OpAdd {
					old = append(old, strings.TrimSuffix(l.Line, "\n"))
				}
			}
			want = append(want, fmt.Sprintf("hunk %d (@@ -%d,%d):\n%s", i+1, frag.OldPosition, frag.OldLines, strings.Join(old, "\n")))
		}
		return patchErr(p, "does not apply (%v); the hunks look for these lines:\n%s", err, strings.Join(want, "\n"))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return patchErr(p, "%v", err)
	}
	return patchErr(p, "%v", err)
}

// stripSide removes the a/ or b/ side prefix of a traditional diff's name
// (go-gitdiff may report either side's name for both).
func stripSide(name string) string {
	if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
		return name[2:]
	}
	return name
}
