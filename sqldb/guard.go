package sqldb

import (
	"fmt"
	"strings"
)

// processWidePragmas are the SQLite pragmas that reach past the database:
// they set a process-wide directory SQLite then creates files in, for
// every connection of every session (sqlite3_temp_directory). SQLite
// changes it while the statement is prepared, so EXPLAIN does not make it
// harmless. The driver has no authorizer to refuse them, so the statement
// is read here.
var processWidePragmas = map[string]bool{
	"temp_store_directory": true,
	"data_store_directory": true,
}

// ErrRefused is returned for a statement that would reach outside the
// configured database (errors.Is).
var ErrRefused = fmt.Errorf("sqldb: statement refused")

// checkSQLite refuses statements that would reach outside the database
// file: the process-wide directory pragmas. ATTACH and VACUUM INTO are
// refused by SQLite itself (SQLITE_LIMIT_ATTACHED is 0 on every session's
// connection).
func checkSQLite(q string) error {
	toks := sqliteTokens(q, 6)
	i := 0
	if i < len(toks) && strings.EqualFold(toks[i], "EXPLAIN") {
		i++
		if i+1 < len(toks) && strings.EqualFold(toks[i], "QUERY") && strings.EqualFold(toks[i+1], "PLAN") {
			i += 2
		}
	}
	if i >= len(toks) || !strings.EqualFold(toks[i], "PRAGMA") {
		return nil
	}
	name := ""
	if i+1 < len(toks) {
		name = toks[i+1]
	}
	if i+3 < len(toks) && toks[i+2] == "." {
		name = toks[i+3] // schema.name
	}
	if processWidePragmas[strings.ToLower(name)] {
		return &Error{Message: fmt.Sprintf("PRAGMA %s is refused: it makes SQLite create files outside the database, for every session", strings.ToLower(name)), Err: ErrRefused}
	}
	return nil
}

// sqliteTokens returns up to max leading tokens of q as SQLite's tokenizer
// would see them: comments and white space skipped, quoted identifiers
// ("x", [x], `x`) unquoted, any other character a token of its own.
func sqliteTokens(q string, max int) []string {
	var out []string
	for len(out) < max {
		q = strings.TrimLeft(q, " \t\n\f\r")
		switch {
		case q == "":
			return out
		case strings.HasPrefix(q, "--"):
			if i := strings.IndexByte(q, '\n'); i >= 0 {
				q = q[i+1:]
			} else {
				q = ""
			}
			continue
		case strings.HasPrefix(q, "/*"):
			if i := strings.Index(q[2:], "*/"); i >= 0 {
				q = q[i+4:]
			} else {
				q = ""
			}
			continue
		}
		switch c := q[0]; {
		case c == '"' || c == '`' || c == '[' || c == '\'':
			end := c
			if c == '[' {
				end = ']'
			}
			var b strings.Builder
			i := 1
			for i < len(q) {
				if q[i] == end {
					if end != ']' && i+1 < len(q) && q[i+1] == end {
						b.WriteByte(end) // doubled quote
						i += 2
						continue
					}
					break
				}
				b.WriteByte(q[i])
				i++
			}
			out = append(out, b.String())
			q = q[min(i+1, len(q)):]
		case isIdentByte(c):
			i := 1
			for i < len(q) && (isIdentByte(q[i]) || q[i] >= '0' && q[i] <= '9' || q[i] == '$') {
				i++
			}
			out = append(out, q[:i])
			q = q[i:]
		default:
			out = append(out, q[:1])
			q = q[1:]
		}
	}
	return out
}

// isIdentByte: SQLite takes every byte ≥ 0x80 as part of an identifier.
func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
