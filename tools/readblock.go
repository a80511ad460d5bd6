package tools

import "strings"

// IndentationArgs shape read_file's indentation mode, after the parameters
// of OpenAI Codex's read_file: the block around an anchor line is found by
// indentation, so a model can read one function of a long file without
// guessing line ranges.
type IndentationArgs struct {
	AnchorLine      int   `json:"anchor_line,omitempty" minimum:"1" jsonschema:"line the block is around (1-based; default: offset)"`
	MaxLevels       int   `json:"max_levels,omitempty" minimum:"0" jsonschema:"indentation levels above the anchor's to include (0: all the way out)"`
	IncludeSiblings bool  `json:"include_siblings,omitempty" jsonschema:"also include the blocks beside the anchor's at the outermost level"`
	IncludeHeader   *bool `json:"include_header,omitempty" jsonschema:"include the comment lines just above the block (default true)"`
	MaxLines        int   `json:"max_lines,omitempty" minimum:"1" jsonschema:"cap on the lines returned (default: limit)"`
}

// tabWidth is how many columns a tab counts for when measuring indentation.
const tabWidth = 4

var commentPrefixes = []string{"#", "//", "--"}

func measureIndent(s string) int {
	n := 0
	for _, c := range s {
		switch c {
		case ' ':
			n++
		case '\t':
			n += tabWidth
		default:
			return n
		}
	}
	return n
}

// indentationBlock returns the 0-based indexes of the lines read_file's
// indentation mode shows around anchor (0-based): it grows the block up
// and down one line at a time while lines are indented at least
// maxLevels levels less than the anchor (blank lines take the indentation
// of the line before), stops at the second line at that outermost level
// unless siblings are wanted (a comment above counts as a header), and
// trims blank lines at both ends.
func indentationBlock(lines []string, anchor, limit int, o IndentationArgs) []int {
	eff := make([]int, len(lines))
	prev := 0
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			prev = measureIndent(l)
		}
		eff[i] = prev
	}
	minIndent := 0
	if o.MaxLevels > 0 {
		minIndent = max(eff[anchor]-o.MaxLevels*tabWidth, 0)
	}
	header := o.IncludeHeader == nil || *o.IncludeHeader
	isComment := func(i int) bool {
		t := strings.TrimSpace(lines[i])
		for _, p := range commentPrefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
		return false
	}
	if limit <= 1 {
		return []int{anchor}
	}
	out := []int{anchor} // kept in order: prepend up, append down
	up, down := anchor-1, anchor+1
	upAtMin, downAtMin := 0, 0
	for len(out) < limit {
		progressed := false
		if up >= 0 {
			if eff[up] >= minIndent {
				take := true
				if eff[up] == minIndent && !o.IncludeSiblings {
					if (header && isComment(up)) || upAtMin == 0 {
						upAtMin++
					} else {
						take = false
					}
				}
				if take {
					out = append([]int{up}, out...)
					up--
					progressed = true
				} else {
					up = -1
				}
				if len(out) >= limit {
					break
				}
			} else {
				up = -1
			}
		}
		if down < len(lines) {
			if eff[down] >= minIndent {
				take := true
				if eff[down] == minIndent && !o.IncludeSiblings {
					if downAtMin > 0 {
						take = false
					}
					downAtMin++
				}
				if take {
					out = append(out, down)
					down++
					progressed = true
				} else {
					down = len(lines)
				}
			} else {
				down = len(lines)
			}
		}
		if !progressed {
			break
		}
	}
	for len(out) > 0 && strings.TrimSpace(lines[out[0]]) == "" {
		out = out[1:]
	}
	for len(out) > 0 && strings.TrimSpace(lines[out[len(out)-1]]) == "" {
		out = out[:len(out)-1]
	}
	return out
}
