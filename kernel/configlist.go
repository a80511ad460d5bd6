package kernel

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// appendToList adds item to the list at key (dotted path) of a YAML
// document and returns the new text. Only the text of the list changes:
// comments, order, blank lines and every other byte stay as the user left
// them. A list the file does not have yet is written with effective (the
// list the kernel runs with now, defaults included: a YAML list replaces
// the default, it does not extend it) plus item, in flow style, under the
// nearest section the file has.
func appendToList(data []byte, key string, item string, effective []string) ([]byte, error) {
	path := strings.Split(key, ".")
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var root *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		// Empty, or comments only: the whole path goes at the end.
		return appendLines(lines, len(lines), nest(path, "", effective, item)), nil
	}
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, errors.New("the document is not a block mapping; edit it by hand")
	}
	m := root
	for i, name := range path {
		k, v := lookup(m, name)
		if k == nil {
			// The section has no such key: write the rest of the path
			// after the section's last line, indented as its keys are.
			indent := strings.Repeat(" ", m.Content[0].Column-1)
			at := lastLine(m)
			if m == root {
				at = len(lines)
			}
			return appendLines(lines, at, nest(path[i:], indent, effective, item)), nil
		}
		last := i == len(path)-1
		switch {
		case last && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle != 0:
			return appendFlow(lines, v, item)
		case last && v.Kind == yaml.SequenceNode:
			return appendBlock(lines, v, item)
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			// "key:" with nothing (or ~, null) after it.
			var text string
			if last {
				text = flowList(append(slices.Clone(effective), item))
				return replaceNull(lines, k, text)
			}
			indent := strings.Repeat(" ", k.Column-1+2)
			return appendLines(lines, k.Line, nest(path[i+1:], indent, effective, item)), nil
		case !last && v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0:
			m = v
		default:
			return nil, fmt.Errorf("%s is not a list or block section this editor can extend; edit it by hand", strings.Join(path[:i+1], "."))
		}
	}
	return nil, errors.New("unreachable")
}

func lookup(m *yaml.Node, name string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			k, v = m.Content[i], m.Content[i+1]
		}
	}
	return k, v
}

// lastLine is the last line (1-based) a node's content reaches.
func lastLine(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		if c.Line > l {
			l = c.Line
		}
		if cl := lastLine(c); cl > l {
			l = cl
		}
	}
	// A block scalar (| or >) and a multi-line quoted scalar run past the
	// line they start on.
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "\n") {
		l += strings.Count(n.Value, "\n")
	}
	return l
}

// nest renders path as nested block keys under indent, the last one a
// flow list.
func nest(path []string, indent string, effective []string, item string) []string {
	var out []string
	for i, name := range path {
		pad := indent + strings.Repeat("  ", i)
		if i == len(path)-1 {
			out = append(out, pad+name+": "+flowList(append(slices.Clone(effective), item))+"\n")
		} else {
			out = append(out, pad+name+":\n")
		}
	}
	return out
}

func appendLines(lines []string, at int, add []string) []byte {
	if at > 0 && at <= len(lines) && !strings.HasSuffix(lines[at-1], "\n") {
		lines[at-1] += "\n"
	}
	out := slices.Concat(lines[:at], add, lines[at:])
	return []byte(strings.Join(out, ""))
}

// appendFlow inserts item after the last item of a flow list (before
// its closing bracket, after a trailing comma).
func appendFlow(lines []string, v *yaml.Node, item string) ([]byte, error) {
	li, col := v.Line-1, v.Column-1
	if li >= len(lines) || col >= len(lines[li]) || lines[li][col] != '[' {
		return nil, errors.New("cannot find the list's opening bracket; edit it by hand")
	}
	depth := 0
	var quote byte
	// lastLi, lastCol: just past the last character of the list that is
	// neither blank nor comment.
	lastLi, lastCol, lastChar := li, col, byte('[')
	for ; li < len(lines); li, col = li+1, 0 {
		line := lines[li]
		for ; col < len(line); col++ {
			c := line[col]
			switch {
			case quote == '"' && c == '\\':
				col++
			case quote != 0:
				if c == quote {
					if quote == '\'' && col+1 < len(line) && line[col+1] == '\'' {
						col++
						break
					}
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '#' && (col == 0 || line[col-1] == ' ' || line[col-1] == '\t'):
				col = len(line) // a comment runs to the end of the line
				continue
			case c == ']' && depth == 1:
				sep := ", "
				switch lastChar {
				case '[':
					sep = ""
				case ',':
					sep = " "
				}
				l := lines[lastLi]
				lines[lastLi] = l[:lastCol] + sep + yamlScalar(item) + l[lastCol:]
				return []byte(strings.Join(lines, "")), nil
			case c == '[':
				depth++
			case c == ']':
				depth--
			}
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				lastLi, lastCol, lastChar = li, col+1, c
			}
		}
	}
	return nil, errors.New("cannot find the list's closing bracket; edit it by hand")
}

// appendBlock adds "- item" after a block list's last item, indented as
// that item is.
func appendBlock(lines []string, v *yaml.Node, item string) ([]byte, error) {
	if len(v.Content) == 0 {
		return nil, errors.New("empty block list; edit it by hand")
	}
	lastItem := v.Content[len(v.Content)-1]
	line := lines[lastItem.Line-1]
	dash := strings.LastIndex(line[:min(lastItem.Column-1, len(line))], "-")
	if dash < 0 {
		return nil, errors.New("cannot find the list's last item; edit it by hand")
	}
	return appendLines(lines, lastLine(lastItem), []string{line[:dash] + "- " + yamlScalar(item) + "\n"}), nil
}

// replaceNull writes text as the value of k, whose value is null.
func replaceNull(lines []string, k *yaml.Node, text string) ([]byte, error) {
	li := k.Line - 1
	line := lines[li]
	colon := strings.Index(line[k.Column-1:], ":")
	if colon < 0 {
		return nil, errors.New("cannot find the key's colon; edit it by hand")
	}
	at := k.Column - 1 + colon + 1
	rest := line[at:]
	body := strings.TrimLeft(rest, " \t")
	for _, tok := range []string{"null", "Null", "NULL", "~"} {
		if strings.HasPrefix(body, tok) {
			body = body[len(tok):]
			break
		}
	}
	nl := ""
	if strings.HasSuffix(body, "\n") {
		body, nl = strings.TrimSuffix(body, "\n"), "\n"
	}
	if b := strings.TrimLeft(body, " \t"); b != "" {
		body = " " + b // a comment stays
	} else {
		body = ""
	}
	lines[li] = line[:at] + " " + text + body + nl
	return []byte(strings.Join(lines, "")), nil
}

var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+/-]*$`)

// yamlScalar writes s so YAML reads it back as the string s, in flow and
// block context alike.
func yamlScalar(s string) string {
	if plainScalar.MatchString(s) {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err == nil {
			if str, ok := v.(string); ok && str == s {
				return s
			}
		}
	}
	return strconv.Quote(s)
}

func flowList(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = yamlScalar(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// listAt reads the string list at a dotted key of a YAML document (for
// checking an edit).
func listAt(data []byte, key string) ([]string, bool) {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, false
	}
	var cur any = m
	for _, name := range strings.Split(key, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = mm[name]
	}
	l, ok := cur.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
