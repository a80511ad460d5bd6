package gitconfig

import "errors"

// ErrSyntax is a file git refuses to read as configuration ("bad config
// line"): the variables before the bad line were read.
var ErrSyntax = errors.New("bad config syntax")

// Parse is git's config grammar (config.c: git_parse_source,
// get_base_var, get_extended_base_var, get_value, parse_value): fn gets
// each variable as it is read, "section[.subsection].key" with the
// section and key lower-cased (a key with no '=' has a nil value), and a
// syntax error stops the parse after the variables before it, as in git
// (ErrSyntax). Every configuration file is read with it, and so is a
// pushed .gitmodules that fsck checks: a file git and this package read
// differently could otherwise slip past the checks.
func Parse(buf []byte, fn func(key string, value *string)) error {
	pos := 0
	eof := false
	next := func() byte {
		if pos >= len(buf) {
			eof = true
			return '\n'
		}
		c := buf[pos]
		pos++
		if c == '\r' && pos < len(buf) && buf[pos] == '\n' {
			pos++
			return '\n'
		}
		return c
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	isAlpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isKeyChar := func(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	var section []byte
	baseVar := func() bool {
		section = section[:0]
		for {
			c := next()
			if eof {
				return false
			}
			if c == ']' {
				return len(section) > 0
			}
			if isSpace(c) {
				// [section "subsection"]
				for ; isSpace(c); c = next() {
					if c == '\n' {
						return false
					}
				}
				if c != '"' {
					return false
				}
				section = append(section, '.')
				for {
					c = next()
					if c == '\n' {
						return false
					}
					if c == '"' {
						break
					}
					if c == '\\' {
						if c = next(); c == '\n' {
							return false
						}
					}
					section = append(section, c)
				}
				return next() == ']' && len(section) > 0
			}
			if !isKeyChar(c) && c != '.' {
				return false
			}
			section = append(section, lower(c))
		}
	}
	parseValue := func() (string, bool) {
		var v []byte
		quote, comment, space := false, false, 0
		for {
			c := next()
			if c == '\n' {
				return string(v), !quote
			}
			if comment {
				continue
			}
			if isSpace(c) && !quote {
				if len(v) > 0 {
					space++
				}
				continue
			}
			if !quote && (c == ';' || c == '#') {
				comment = true
				continue
			}
			for ; space > 0; space-- {
				v = append(v, ' ')
			}
			if c == '\\' {
				switch c = next(); c {
				case '\n':
					continue
				case 't':
					c = '\t'
				case 'b':
					c = '\b'
				case 'n':
					c = '\n'
				case '\\', '"':
				default:
					return "", false
				}
				v = append(v, c)
				continue
			}
			if c == '"' {
				quote = !quote
				continue
			}
			v = append(v, c)
		}
	}
	comment := false
	for {
		c := next()
		if c == '\n' {
			if eof {
				return nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			if !baseVar() {
				return ErrSyntax
			}
			continue
		}
		if !isAlpha(c) {
			return ErrSyntax
		}
		name := []byte{lower(c)}
		for {
			c = next()
			if eof || !isKeyChar(c) {
				break
			}
			name = append(name, lower(c))
		}
		for c == ' ' || c == '\t' {
			c = next()
		}
		key := string(name)
		if len(section) > 0 {
			key = string(section) + "." + key
		}
		if c == '\n' {
			fn(key, nil)
			if eof {
				return nil
			}
			continue
		}
		if c != '=' {
			return ErrSyntax
		}
		v, ok := parseValue()
		if !ok {
			return ErrSyntax
		}
		fn(key, &v)
		if eof {
			return nil
		}
	}
}
