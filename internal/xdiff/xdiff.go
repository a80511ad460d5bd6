// Package xdiff is git's xdiff library (git 2.39's xdiff/): the line diff
// every git command runs (Myers with git's cost cut-offs, "minimal",
// patience and histogram, then the slide of change groups with the indent
// heuristic) and xdl_merge, the three-way text merge behind merge-file,
// stash apply and the kernel's replays. It is ported from the algorithms'
// descriptions and git's sources so that its change scripts and merge
// output are the bytes git computes; its tests compare it with the git CLI.
//
// Like xdiff, it knows nothing of repositories: it works on byte slices
// split into records (lines with their terminators).
package xdiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Change is xdchange_t: Chg1 records of the first file from I1 became Chg2
// records of the second from I2 (0-based). A pure insertion has Chg1 == 0
// and I1 the record it precedes; a pure deletion, Chg2 == 0.
type Change struct{ I1, Chg1, I2, Chg2 int }

// ErrFailed is what git reports as "unable to generate diff": the
// histogram index gave up (a hash chain of 64 distinct lines).
var ErrFailed = errors.New("xdiff: unable to generate diff")

// Params are xpparam_t's fields this port honours.
type Params struct {
	// Algorithm is diff.algorithm: "myers" (also "default" and ""),
	// "minimal", "patience" or "histogram", case-insensitive.
	Algorithm string
	// IndentHeuristic is diff.indentHeuristic (XDF_INDENT_HEURISTIC).
	IndentHeuristic bool
	// TrimTail drops the identical 1 KiB blocks both files end with first,
	// as xdi_diff does when no context lines are asked for (blame, -U0);
	// a patch with context diffs the whole files.
	TrimTail bool
}

// Diff is xdi_diff: the change script turning a into b, in file order.
//
// Myers is xdl_do_diff ("minimal" sets need_min, so xdl_split never takes
// its cost cut-offs); patience (xpatience.c) and histogram (xhistogram.c)
// work on the whole records (xdl_prepare_env skips xdl_optimize_ctxs for
// them) and hand sub-ranges they cannot split to xdl_fall_back_diff. Every
// algorithm is followed by xdl_change_compact on both sides, as xdl_diff
// does. A cancelled ctx stops the work with ctx's error.
func Diff(ctx context.Context, a, b []byte, p Params) ([]Change, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	algo := strings.ToLower(p.Algorithm)
	switch algo {
	case "", "myers", "default", "minimal", "patience", "histogram":
	default:
		return nil, fmt.Errorf("xdiff: unknown diff algorithm %q", p.Algorithm)
	}
	if p.TrimTail {
		a, b = trimCommonTail(a, b)
	}
	x1, x2, len1, len2 := xdlClassify(Records(a), Records(b))
	var err error
	switch algo {
	case "", "myers", "default":
		err = xdlMyersDiff(ctx, x1, x2, len1, len2, false)
	case "minimal":
		err = xdlMyersDiff(ctx, x1, x2, len1, len2, true)
	case "patience":
		p := &xrange{ctx: ctx, x1: x1, x2: x2}
		err = p.patience(1, x1.nrec(), 1, x2.nrec())
	case "histogram":
		h := &xrange{ctx: ctx, x1: x1, x2: x2}
		// xdl_do_histogram_diff starts from dstart/dend, which are the
		// whole files as nothing trimmed them.
		err = h.histogram(1, x1.nrec(), 1, x2.nrec())
	}
	if err != nil {
		return nil, err
	}
	changeCompact(x1, x2, p.IndentHeuristic)
	changeCompact(x2, x1, p.IndentHeuristic)
	return xdlBuildScript(x1, x2), nil
}

// Records splits b into xdiff's records: lines that keep their "\n", the
// last one without it when b does not end in a newline, so joining them
// gives b back byte for byte.
func Records(b []byte) [][]byte {
	out := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// IsBinary is xdiff-interface.c's buffer_is_binary: a NUL in the first
// 8000 bytes. Git neither diffs nor merges such content line by line.
func IsBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}
