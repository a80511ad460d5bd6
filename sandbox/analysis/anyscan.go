package analysis

// checkAny finds the `any` type in TS source, skipping comments, strings
// and template literals. `any` counts as the type when it follows ':',
// 'as', '<', '|', '&' or '=' (type aliases), or a ',' inside angle
// brackets, or is followed by '[' ']'.
func (a *analyzer) checkAny() {
	src := a.src
	line, col := 1, 1
	type tok struct {
		text      string
		line, col int
	}
	var toks []tok
	advance := func(n int) {
		for i := 0; i < n && len(src) > 0; i++ {
			if src[0] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			src = src[1:]
		}
	}
	isIdent := func(c byte) bool {
		return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	for len(src) > 0 {
		c := src[0]
		switch {
		case c == '/' && len(src) > 1 && src[1] == '/':
			for len(src) > 0 && src[0] != '\n' {
				advance(1)
			}
		case c == '/' && len(src) > 1 && src[1] == '*':
			advance(2)
			for len(src) > 0 && !(src[0] == '*' && len(src) > 1 && src[1] == '/') {
				advance(1)
			}
			advance(2)
		case c == '"' || c == '\'' || c == '`':
			q := c
			advance(1)
			for len(src) > 0 && src[0] != q {
				if src[0] == '\\' {
					advance(1)
				}
				advance(1)
			}
			advance(1)
			toks = append(toks, tok{text: "\"", line: line, col: col})
		case isIdent(c):
			l, cl := line, col
			n := 0
			for n < len(src) && isIdent(src[n]) {
				n++
			}
			toks = append(toks, tok{text: src[:n], line: l, col: cl})
			advance(n)
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			advance(1)
		default:
			toks = append(toks, tok{text: string(c), line: line, col: col})
			advance(1)
		}
	}
	depth := 0
	for i, t := range toks {
		switch t.text {
		case "<":
			depth++
		case ">":
			if depth > 0 {
				depth--
			}
		}
		if t.text != "any" {
			continue
		}
		prev, next := "", ""
		if i > 0 {
			prev = toks[i-1].text
		}
		if i+1 < len(toks) {
			next = toks[i+1].text
		}
		typePos := prev == ":" || prev == "as" || prev == "<" || prev == "|" || prev == "&" ||
			(prev == "=" && i > 2 && toks[i-3].text == "type") || (prev == "," && depth > 0) || next == "["
		if prev == "." || next == "(" && prev != ":" {
			typePos = false
		}
		if typePos {
			a.add(RuleNoAny, t.line, t.col, "usage of 'any' is prohibited (Standard 3): use a specific type or a generic constraint")
		}
	}
}
