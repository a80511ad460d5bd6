package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// The Codex-style envelope has no Go library; plain unified and git diffs
// are parsed and applied with github.com/bluekeyes/go-gitdiff.

type applyPatchArgs struct {
	Patch   string `json:"patch" minLength:"1" jsonschema:"a *** Begin Patch envelope or a unified diff"`
	Message string `json:"message,omitempty" jsonschema:"commit message"`
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
		Name: "apply_patch",
		Description: "Apply a patch atomically (all files or none) and persist it. Accepts the envelope\n" +
			"*** Begin Patch\n*** Add File: path\n+line\n*** Update File: path\n*** Move to: new/path\n@@ optional anchor line\n context\n-old\n+new\n*** End of File\n*** Delete File: path\n*** End Patch\n" +
			"or a plain unified diff (--- a/x, +++ b/x, @@ hunks). Hunks must match exactly.",
		Annotations: Annotations{Risk: RiskMedium},
		Summary:     func(a applyPatchArgs) string { return "apply a patch of " + itoa(len(a.Patch)) + " bytes" },
		Run: func(ctx context.Context, a applyPatchArgs) (Result, error) {
			var ops []fileOp
			var err error
			if strings.HasPrefix(strings.TrimSpace(a.Patch), "*** Begin Patch") {
				ops, err = ft.planEnvelope(a.Patch)
			} else {
				ops, err = ft.planUnified(a.Patch)
			}
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
			return Result{Value: WriteResult{Paths: paths, Files: stats, Persisted: per}}, nil
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
		exists bool
	}
	var done []backup
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			b := done[i]
			if b.exists {
				_ = ft.fs.WriteFile(b.path, b.data, 0o644)
			} else {
				_ = ft.fs.Remove(b.path)
			}
		}
	}
	save := func(p string) {
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

func (ft *fileTools) planEnvelope(patch string) ([]fileOp, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(patch), "\r\n", "\n"), "\n")
	if lines[len(lines)-1] != "*** End Patch" {
		return nil, patchErr("", "the patch must end with the line \"*** End Patch\"")
	}
	lines = lines[1 : len(lines)-1]
	var ops []fileOp
	seen := map[string]bool{}
	claim := func(p string) error {
		if seen[p] {
			return patchErr(p, "the patch touches this file twice")
		}
		seen[p] = true
		return nil
	}
	i := 0
	for i < len(lines) {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			p, err := ft.writePath("patch", strings.TrimSpace(strings.TrimPrefix(line, "*** Add File: ")))
			if err != nil {
				return nil, err
			}
			if err := claim(p); err != nil {
				return nil, err
			}
			if _, err := ft.fs.Lstat(p); err == nil {
				return nil, patchErr(p, "Add File: the file already exists; use *** Update File")
			}
			i++
			var b strings.Builder
			n := 0
			for i < len(lines) && !strings.HasPrefix(lines[i], "*** ") {
				if !strings.HasPrefix(lines[i], "+") {
					return nil, patchErr(p, "Add File: every line must start with '+', got %q", lines[i])
				}
				b.WriteString(lines[i][1:])
				b.WriteByte('\n')
				n++
				i++
			}
			ops = append(ops, fileOp{path: p, content: []byte(b.String()), stat: FileStat{Path: p, Action: "add", Added: n}})
		case strings.HasPrefix(line, "*** Delete File: "):
			p, err := ft.agentPath("patch", strings.TrimSpace(strings.TrimPrefix(line, "*** Delete File: ")))
			if err != nil {
				return nil, err
			}
			if err := claim(p); err != nil {
				return nil, err
			}
			data, err := ft.fs.ReadFile(p)
			if err != nil {
				return nil, patchErr(p, "Delete File: %v", err)
			}
			ops = append(ops, fileOp{path: p, delete: true, stat: FileStat{Path: p, Action: "delete", Removed: len(splitLines(string(data)))}})
			i++
		case strings.HasPrefix(line, "*** Update File: "):
			p, err := ft.agentPath("patch", strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: ")))
			if err != nil {
				return nil, err
			}
			if err := claim(p); err != nil {
				return nil, err
			}
			i++
			dest := p
			if i < len(lines) && strings.HasPrefix(lines[i], "*** Move to: ") {
				dest, err = ft.writePath("patch", strings.TrimSpace(strings.TrimPrefix(lines[i], "*** Move to: ")))
				if err != nil {
					return nil, err
				}
				if dest != p {
					if err := claim(dest); err != nil {
						return nil, err
					}
					if _, err := ft.fs.Lstat(dest); err == nil {
						return nil, patchErr(dest, "Move to: the destination already exists")
					}
				}
				i++
			}
			// Updating in place rewrites p: git's rules hold there too.
			// Moving only removes it (which is how an odd name is fixed).
			if dest == p {
				if err := writable("patch", p); err != nil {
					return nil, err
				}
			}
			start := i
			for i < len(lines) && !(strings.HasPrefix(lines[i], "*** ") && lines[i] != "*** End of File") {
				i++
			}
			data, err := ft.fs.ReadFile(p)
			if err != nil {
				return nil, patchErr(p, "Update File: %v", err)
			}
			content, added, removed, err := applyChunks(p, string(data), lines[start:i])
			if err != nil {
				return nil, err
			}
			op := fileOp{path: dest, content: []byte(content), stat: FileStat{Path: dest, Action: "update", Added: added, Removed: removed}}
			if dest != p {
				op.from, op.stat.From, op.stat.Action = p, p, "move"
			}
			ops = append(ops, op)
		case strings.TrimSpace(line) == "":
			i++
		default:
			return nil, patchErr("", "unexpected line %q; expected *** Add File:, *** Update File: or *** Delete File:", line)
		}
	}
	if len(ops) == 0 {
		return nil, patchErr("", "the patch changes no file")
	}
	return ops, nil
}

type chunk struct {
	anchor   string
	old, new []string
	eof      bool
}

// applyChunks applies envelope hunks in order; each must match exactly,
// after its @@ anchor line if it has one.
func applyChunks(p, content string, body []string) (string, int, int, error) {
	var chunks []chunk
	cur := chunk{}
	started := false
	flush := func() {
		if started && (len(cur.old) > 0 || len(cur.new) > 0) {
			chunks = append(chunks, cur)
		}
		cur, started = chunk{}, false
	}
	for _, l := range body {
		switch {
		case strings.HasPrefix(l, "@@"):
			flush()
			cur.anchor = strings.TrimSpace(strings.TrimPrefix(l, "@@"))
			started = true
		case l == "*** End of File":
			cur.eof = true
		case strings.HasPrefix(l, "+"):
			cur.new = append(cur.new, l[1:])
			started = true
		case strings.HasPrefix(l, "-"):
			cur.old = append(cur.old, l[1:])
			started = true
		case strings.HasPrefix(l, " "):
			cur.old = append(cur.old, l[1:])
			cur.new = append(cur.new, l[1:])
			started = true
		case l == "":
			cur.old = append(cur.old, "")
			cur.new = append(cur.new, "")
			started = true
		default:
			return "", 0, 0, patchErr(p, "hunk line %q must start with ' ', '+' or '-'", l)
		}
	}
	flush()
	if len(chunks) == 0 {
		return "", 0, 0, patchErr(p, "Update File has no hunks")
	}
	trailingNL := strings.HasSuffix(content, "\n") || content == ""
	lines := splitLines(content)
	crlf := strings.Contains(content, "\r\n")
	pos, added, removed := 0, 0, 0
	for n, c := range chunks {
		if c.anchor != "" {
			found := -1
			for j := pos; j < len(lines); j++ {
				if lines[j] == c.anchor {
					found = j
					break
				}
			}
			if found < 0 {
				return "", 0, 0, patchErr(p, "hunk %d: anchor line not found after line %d:\n%s", n+1, pos, c.anchor)
			}
			pos = found + 1
		}
		at := -1
		if c.eof {
			if j := len(lines) - len(c.old); j >= pos && equalLines(lines[j:], c.old) {
				at = j
			}
		} else {
			for j := pos; j+len(c.old) <= len(lines); j++ {
				if equalLines(lines[j:j+len(c.old)], c.old) {
					at = j
					break
				}
			}
		}
		if at < 0 {
			return "", 0, 0, patchErr(p, "hunk %d does not match; these lines were not found in order (from line %d):\n%s",
				n+1, pos+1, strings.Join(c.old, "\n"))
		}
		repl := append(append(append([]string{}, lines[:at]...), c.new...), lines[at+len(c.old):]...)
		lines = repl
		pos = at + len(c.new)
		for _, d := range diffCount(c.old, c.new) {
			added += d[0]
			removed += d[1]
		}
	}
	sep := "\n"
	if crlf {
		sep = "\r\n"
	}
	out := strings.Join(lines, sep)
	if trailingNL && len(lines) > 0 {
		out += sep
	}
	return out, added, removed, nil
}

func equalLines(a, b []string) bool {
	if len(a) < len(b) {
		return false
	}
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

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
