package trust

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Signer is one line of an allowed_signers file: the principals (a
// pattern list of emails) a key may sign for, and when and in which
// namespaces it may.
type Signer struct {
	// Principals is the pattern list as written: comma-separated
	// patterns with * and ?, a leading ! excludes ("*@example.com,!eve@example.com").
	Principals string
	// Namespaces, when not empty, is the pattern list of namespaces the
	// key signs in (namespaces="git,file"); empty: any.
	Namespaces string
	// ValidAfter and ValidBefore bound when (the commit's committer
	// time) the key may have signed; zero: unbounded.
	ValidAfter, ValidBefore time.Time
	// CertAuthority marks a CA key: it vouches for certificates it
	// signed, which this package does not verify (such lines match no
	// signature, so a commit signed by a certificate is refused).
	CertAuthority bool
	Key           ssh.PublicKey
	// Line is the line's number in the file, for messages.
	Line int
}

// AllowedSigners is a parsed allowed_signers file.
type AllowedSigners struct {
	Signers []Signer
}

// SyntaxError is a line of an allowed_signers file OpenSSH would refuse.
type SyntaxError struct {
	Line    int
	Problem string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("allowed_signers line %d: %s", e.Line, e.Problem)
}

// LoadAllowedSigners reads and parses the file at path.
func LoadAllowedSigners(path string) (*AllowedSigners, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted signers: %w", err)
	}
	a, err := ParseAllowedSigners(b)
	if err != nil {
		return nil, fmt.Errorf("trusted signers %s: %w", path, err)
	}
	return a, nil
}

// ParseAllowedSigners parses git's allowed_signers format (ssh-keygen(1),
// ALLOWED SIGNERS): one key a line, "principals [options] keytype key
// [comment]", blank lines and # comments skipped. Any line OpenSSH would
// refuse is an error: a file the kernel trusts must mean one thing.
func ParseAllowedSigners(data []byte) (*AllowedSigners, error) {
	a := &AllowedSigners{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, &SyntaxError{Line: n, Problem: err.Error()}
		}
		s.Line = n
		a.Signers = append(a.Signers, s)
	}
	if err := sc.Err(); err != nil {
		return nil, &SyntaxError{Line: n + 1, Problem: err.Error()}
	}
	return a, nil
}

// parseLine reads one non-blank, non-comment line.
func parseLine(line string) (Signer, error) {
	var s Signer
	principals, rest, err := principalsField(line)
	if err != nil {
		return s, err
	}
	s.Principals = principals
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" {
		return s, errors.New("no key after the principals")
	}
	// What follows has authorized_keys' shape, [options] keytype key
	// [comment]: x/crypto/ssh reads it, options split at commas outside
	// quotes. Its key type field is not checked against the key there.
	key, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return s, errors.New("no valid key")
	}
	s.Key = key
	typ := rest
	if len(opts) > 0 {
		typ = strings.TrimLeft(typ[optionsEnd(typ):], " \t")
	}
	if i := strings.IndexAny(typ, " \t"); i >= 0 {
		typ = typ[:i]
	}
	if typ != key.Type() {
		return s, fmt.Errorf("key type %q does not match the key (%s)", typ, key.Type())
	}
	for _, o := range opts {
		if err := s.setOption(o); err != nil {
			return s, err
		}
	}
	if !s.ValidAfter.IsZero() && !s.ValidBefore.IsZero() && !s.ValidBefore.After(s.ValidAfter) {
		return s, errors.New(`"valid-before" time is before "valid-after"`)
	}
	return s, nil
}

// principalsField splits the first field off: a quoted string (OpenSSH's
// strdelimw: up to the next quote, no escapes) or a run of non-blanks.
func principalsField(line string) (field, rest string, err error) {
	if line[0] == '"' {
		end := strings.IndexByte(line[1:], '"')
		if end < 0 {
			return "", "", errors.New("unterminated quoted principals")
		}
		field, rest = line[1:1+end], line[2+end:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return "", "", errors.New("no space after the quoted principals")
		}
	} else {
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			return "", "", errors.New("no key after the principals")
		}
		field, rest = line[:end], line[end:]
		if strings.Contains(field, `"`) {
			return "", "", errors.New("a quote inside the principals")
		}
	}
	if field == "" {
		return "", "", errors.New("empty principals")
	}
	return field, rest, nil
}

// optionsEnd is where the options field of s ends: the first blank
// outside quotes (the split ssh.ParseAuthorizedKey makes).
func optionsEnd(s string) int {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' && (i == 0 || s[i-1] != '\\'):
			inQuote = !inQuote
		case !inQuote && (c == ' ' || c == '\t'):
			return i
		}
	}
	return len(s)
}

// setOption applies one option (sshsig.c's sshsigopt_parse: names match
// case-insensitively, values are quoted).
func (s *Signer) setOption(o string) error {
	name, value, hasValue := strings.Cut(o, "=")
	switch strings.ToLower(name) {
	case "cert-authority":
		if hasValue {
			return fmt.Errorf("option %q takes no value", name)
		}
		s.CertAuthority = true
		return nil
	case "namespaces":
		if s.Namespaces != "" {
			return errors.New(`multiple "namespaces" clauses`)
		}
		v, err := dequote(value, hasValue)
		if err != nil {
			return fmt.Errorf("namespaces: %w", err)
		}
		if v == "" {
			return errors.New("namespaces: empty")
		}
		s.Namespaces = v
		return nil
	case "valid-after", "valid-before":
		v, err := dequote(value, hasValue)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		t, err := parseTime(v)
		if err != nil {
			return fmt.Errorf("invalid %q time %q: %w", strings.ToLower(name), v, err)
		}
		dst := &s.ValidAfter
		if strings.EqualFold(name, "valid-before") {
			dst = &s.ValidBefore
		}
		if !dst.IsZero() {
			return fmt.Errorf("multiple %q clauses", strings.ToLower(name))
		}
		*dst = t
		return nil
	}
	return fmt.Errorf("unsupported option %q", name)
}

// dequote is OpenSSH's opt_dequote: a value in double quotes, \" for a
// quote inside, nothing after the closing quote.
func dequote(v string, hasValue bool) (string, error) {
	if !hasValue || len(v) < 2 || v[0] != '"' {
		return "", errors.New("missing start quote")
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == '"':
			b.WriteByte('"')
			i++
		case v[i] == '"':
			if i != len(v)-1 {
				return "", errors.New("text after the end quote")
			}
			return b.String(), nil
		default:
			b.WriteByte(v[i])
		}
	}
	return "", errors.New("missing end quote")
}

// parseTime reads OpenSSH's absolute time: YYYYMMDD[HHMM[SS]], in local
// time unless it ends in Z or UTC (misc.c's parse_absolute_time).
func parseTime(v string) (time.Time, error) {
	loc := time.Local
	upper := strings.ToUpper(v)
	switch {
	case len(v) > 1 && strings.HasSuffix(upper, "Z"):
		loc, v = time.UTC, v[:len(v)-1]
	case len(v) > 3 && strings.HasSuffix(upper, "UTC"):
		loc, v = time.UTC, v[:len(v)-3]
	}
	var layout string
	switch len(v) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, errors.New("want YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally ending in Z")
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return time.Time{}, errors.New("not all digits")
		}
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return time.Time{}, err
	}
	if t.Unix() <= 0 {
		return time.Time{}, errors.New("before 1970")
	}
	return t, nil
}

// matchPatternList is OpenSSH's match_pattern_list: 1 when s matches a
// positive pattern of the comma-separated list and no negated one, -1
// when a negated one (!pattern) matches, 0 otherwise.
func matchPatternList(s, list string) int {
	positive := 0
	for _, p := range strings.Split(list, ",") {
		negated := strings.HasPrefix(p, "!")
		if negated {
			p = p[1:]
		}
		if matchPattern(s, p) {
			if negated {
				return -1
			}
			positive = 1
		}
	}
	return positive
}

// matchPattern is OpenSSH's match_pattern: * any run, ? any one byte.
func matchPattern(s, p string) bool {
	// Iterative glob with one backtrack point: linear in practice, and no
	// recursion a hostile pattern could blow up.
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si, pi = si+1, pi+1
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			si, pi = mark, star+1
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// String renders the signer as an allowed_signers line that parses back
// to it.
func (s Signer) String() string {
	var b strings.Builder
	if strings.ContainsAny(s.Principals, " \t") || s.Principals == "" {
		b.WriteString(`"` + s.Principals + `"`)
	} else {
		b.WriteString(s.Principals)
	}
	var opts []string
	if s.CertAuthority {
		opts = append(opts, "cert-authority")
	}
	if s.Namespaces != "" {
		opts = append(opts, `namespaces="`+strings.ReplaceAll(s.Namespaces, `"`, `\"`)+`"`)
	}
	if !s.ValidAfter.IsZero() {
		opts = append(opts, `valid-after="`+s.ValidAfter.UTC().Format("20060102150405")+`Z"`)
	}
	if !s.ValidBefore.IsZero() {
		opts = append(opts, `valid-before="`+s.ValidBefore.UTC().Format("20060102150405")+`Z"`)
	}
	if len(opts) > 0 {
		b.WriteString(" " + strings.Join(opts, ","))
	}
	if s.Key != nil {
		b.WriteString(" " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.Key))))
	}
	return b.String()
}
