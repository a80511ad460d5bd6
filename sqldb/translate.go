package sqldb

import (
	"fmt"
	"strconv"
	"strings"
)

// translate checks for a single statement and, for PostgreSQL, rewrites
// `?` placeholders to $1..$n. It skips string literals ('...', E'...'),
// quoted identifiers ("..."), comments (-- and /* */) and dollar-quoted
// bodies ($tag$...$tag$). A `?` directly followed by `|` or `&`, or written
// `??`, is PostgreSQL's JSON operator: `??` becomes `?`, and `?|`/`?&` are
// kept. A `;` followed by anything but whitespace and comments is a second
// statement and is refused.
func translate(q string, postgres bool) (string, int, error) {
	var b strings.Builder
	n := 0
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				if q[j] == '\\' && c == '\'' && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e') {
					j++
				}
				j++
			}
			if j >= len(q) {
				return "", 0, fmt.Errorf("unterminated quote starting at offset %d", i)
			}
			b.WriteString(q[i : j+1])
			i = j + 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return "", 0, fmt.Errorf("unterminated comment starting at offset %d", i)
			}
			b.WriteString(q[i : i+j+4])
			i += j + 4
		case c == '$' && postgres && dollarTag(q[i:]) != "":
			tag := dollarTag(q[i:])
			j := strings.Index(q[i+len(tag):], tag)
			if j < 0 {
				return "", 0, fmt.Errorf("unterminated dollar-quoted string %s", tag)
			}
			end := i + len(tag) + j + len(tag)
			b.WriteString(q[i:end])
			i = end
		case c == '?':
			if postgres {
				if i+1 < len(q) && q[i+1] == '?' {
					b.WriteByte('?')
					i += 2
					continue
				}
				if i+1 < len(q) && (q[i+1] == '|' || q[i+1] == '&') {
					b.WriteByte('?')
					i++
					continue
				}
				n++
				b.WriteString("$" + strconv.Itoa(n))
			} else {
				n++
				b.WriteByte('?')
			}
			i++
		case c == ';':
			rest := strings.TrimSpace(stripLeadingComments(q[i+1:]))
			for strings.HasPrefix(rest, ";") {
				rest = strings.TrimSpace(stripLeadingComments(rest[1:]))
			}
			if rest != "" {
				return "", 0, fmt.Errorf("multiple statements are not allowed: run one statement per call")
			}
			i = len(q)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), n, nil
}

// dollarTag returns "$tag$" if s starts with a dollar-quote opener.
func dollarTag(s string) string {
	if len(s) < 2 || s[0] != '$' {
		return ""
	}
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1]
		}
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (j > 1 && c >= '0' && c <= '9')) {
			return ""
		}
	}
	return ""
}

// containsWordOutsideLiterals reports whether word appears as a keyword
// outside strings and comments.
func containsWordOutsideLiterals(q, word string) bool {
	stripped, _, err := translate(q, false)
	if err != nil {
		stripped = q
	}
	var b strings.Builder
	inStr := byte(0)
	for i := 0; i < len(stripped); i++ {
		c := stripped[i]
		if inStr != 0 {
			if c == inStr {
				inStr = 0
			}
			b.WriteByte(' ')
			continue
		}
		if c == '\'' || c == '"' {
			inStr = c
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(c)
	}
	for _, f := range strings.FieldsFunc(strings.ToUpper(b.String()), func(r rune) bool {
		return !(r == '_' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if f == word {
			return true
		}
	}
	return false
}
