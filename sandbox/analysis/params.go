package analysis

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Params is what a tool's default export declares it takes: the type of
// its first parameter, read from the TypeScript source (esbuild strips
// types before anything runs, so this is the only place they are seen).
// exec_tool checks a call's args against it (Check) and check_tool
// reports it as JSON Schema (Schema), so an agent calling
// `(a: {x: number, y: number}) => a.x + a.y` with {"x":"1"} is told
// "args.x: want a number" instead of getting "12".
//
// Only the types whose runtime shape is plain are read: string, number,
// boolean, null, literals, arrays, tuples, object literals (optional
// members, index signatures), Record, unions, parentheses, and interfaces
// and type aliases of the same file built from them. Anything else (a
// generic, an intersection, an imported or zod type, a method member)
// makes the whole declaration unknown and nothing is checked: a check
// never refuses what the tool would accept.
type Params struct {
	// Optional: the parameter has a ? or a default value, or there is
	// none: args may be omitted.
	Optional bool
	t        *tsType
}

// tsType is one node of a parameter's type.
type tsType struct {
	kind     string // string number boolean null any literal array tuple object union
	literal  any    // the value of a literal type
	elem     *tsType
	items    []*tsType // tuple elements, union members
	props    map[string]*tsType
	optional map[string]bool
	index    *tsType // [k: string]: T; nil: no other keys
}

// ParamsOf reads the default export's parameter type. ok is false when
// the source declares none that this reader understands (then nothing is
// checked).
func ParamsOf(src string) (p *Params, ok bool) {
	defer func() {
		if recover() != nil {
			p, ok = nil, false
		}
	}()
	toks := tokenize(src)
	decls := declarations(toks)
	params, found := defaultExportParams(toks, decls)
	if !found {
		return nil, false
	}
	if len(params) == 0 {
		return &Params{Optional: true}, true
	}
	ps := &tsParser{toks: params, decls: decls, seen: map[string]bool{}}
	// The parameter's name, or a destructuring pattern.
	if !ps.skipBinding() {
		return nil, false
	}
	opt := false
	if ps.peek() == "?" {
		ps.next()
		opt = true
	}
	if ps.peek() != ":" {
		return nil, false // untyped: any
	}
	ps.next()
	t := ps.parseType()
	if t == nil {
		return nil, false
	}
	if ps.peek() == "=" {
		opt = true
	} else if ps.peek() != "" && ps.peek() != "," {
		return nil, false
	}
	return &Params{Optional: opt, t: t}, true
}

// ArgError is a value of args that the declared type refuses; Field is a
// path such as args.x or args.items[2].name.
type ArgError struct {
	Field   string
	Message string
}

func (e *ArgError) Error() string { return e.Field + ": " + e.Message }

// Check reports the first value of args (decoded JSON; nil when omitted)
// that the declared type refuses.
func (p *Params) Check(args any, present bool) *ArgError {
	if p == nil || p.t == nil {
		return nil
	}
	if !present || args == nil {
		if p.Optional || p.t.accepts(nil) {
			return nil
		}
		return &ArgError{Field: "args", Message: "required: the tool takes " + p.t.describe()}
	}
	return p.t.check("args", args)
}

// Schema is the declared type as JSON Schema (nil when nothing is
// declared).
func (p *Params) Schema() map[string]any {
	if p == nil || p.t == nil {
		return nil
	}
	return p.t.schema()
}

func (t *tsType) accepts(v any) bool { return t.check("", v) == nil }

func (t *tsType) check(field string, v any) *ArgError {
	bad := func() *ArgError {
		return &ArgError{Field: field, Message: fmt.Sprintf("want %s, got %s", t.describe(), jsonKind(v))}
	}
	switch t.kind {
	case "any":
		return nil
	case "string":
		if _, ok := v.(string); !ok {
			return bad()
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return bad()
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case "null":
		if v != nil {
			return bad()
		}
	case "literal":
		if v != t.literal {
			return bad()
		}
	case "array":
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, x := range xs {
			if err := t.elem.check(fmt.Sprintf("%s[%d]", field, i), x); err != nil {
				return err
			}
		}
	case "tuple":
		xs, ok := v.([]any)
		if !ok || len(xs) != len(t.items) {
			return bad()
		}
		for i, x := range xs {
			if err := t.items[i].check(fmt.Sprintf("%s[%d]", field, i), x); err != nil {
				return err
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, k := range sortedNames(t.props) {
			x, has := m[k]
			if !has {
				if !t.optional[k] {
					return &ArgError{Field: field + "." + k, Message: "required: want " + t.props[k].describe()}
				}
				continue
			}
			if x == nil && t.optional[k] {
				continue // an explicit null for an optional member: omitted
			}
			if err := t.props[k].check(field+"."+k, x); err != nil {
				return err
			}
		}
		extra := make([]string, 0, len(m))
		for k := range m {
			if _, ok := t.props[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			if t.index == nil {
				return &ArgError{Field: field + "." + k, Message: "unknown field; the tool takes " + t.describe()}
			}
			if err := t.index.check(field+"."+k, m[k]); err != nil {
				return err
			}
		}
	case "union":
		for _, it := range t.items {
			if it.accepts(v) {
				return nil
			}
		}
		// One object member: say which of its fields is wrong.
		var objs []*tsType
		for _, it := range t.items {
			if it.kind == "object" {
				objs = append(objs, it)
			}
		}
		if _, isObj := v.(map[string]any); isObj && len(objs) == 1 {
			return objs[0].check(field, v)
		}
		return bad()
	}
	return nil
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string " + strconv.Quote(shorten(x))
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func (t *tsType) describe() string {
	switch t.kind {
	case "any":
		return "any value"
	case "string", "number", "boolean":
		return "a " + t.kind
	case "null":
		return "null"
	case "literal":
		b, _ := json.Marshal(t.literal)
		return string(b)
	case "array":
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(t.elem.describe(), "a "), "an ") + " values"
	case "tuple":
		return fmt.Sprintf("an array of %d values", len(t.items))
	case "object":
		names := sortedNames(t.props)
		for i, n := range names {
			if t.optional[n] {
				names[i] += "?"
			}
		}
		return "an object {" + strings.Join(names, ", ") + "}"
	case "union":
		parts := make([]string, len(t.items))
		for i, it := range t.items {
			parts[i] = it.describe()
		}
		return strings.Join(parts, " or ")
	}
	return t.kind
}

func (t *tsType) schema() map[string]any {
	switch t.kind {
	case "any":
		return map[string]any{}
	case "string", "number", "boolean", "null":
		return map[string]any{"type": t.kind}
	case "literal":
		return map[string]any{"const": t.literal}
	case "array":
		return map[string]any{"type": "array", "items": t.elem.schema()}
	case "tuple":
		items := make([]any, len(t.items))
		for i, it := range t.items {
			items[i] = it.schema()
		}
		return map[string]any{"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
	case "object":
		props := map[string]any{}
		var req []string
		for k, v := range t.props {
			props[k] = v.schema()
			if !t.optional[k] {
				req = append(req, k)
			}
		}
		sort.Strings(req)
		s := map[string]any{"type": "object", "properties": props}
		if len(req) > 0 {
			s["required"] = req
		}
		if t.index == nil {
			s["additionalProperties"] = false
		} else {
			s["additionalProperties"] = t.index.schema()
		}
		return s
	case "union":
		alts := make([]any, len(t.items))
		for i, it := range t.items {
			alts[i] = it.schema()
		}
		return map[string]any{"anyOf": alts}
	}
	return map[string]any{}
}

func sortedNames(m map[string]*tsType) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tokenize splits TypeScript into the tokens this reader needs:
// identifiers, numbers, strings (quoted, as written), punctuation (=> as
// one); comments and template literals are dropped.
func tokenize(src string) []string {
	var out []string
	rs := []rune(src)
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '/' && i+1 < len(rs) && rs[i+1] == '/':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(rs) && rs[i+1] == '*':
			i += 2
			for i+1 < len(rs) && !(rs[i] == '*' && rs[i+1] == '/') {
				i++
			}
			i += 2
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(rs) && rs[j] != c {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			if c != '`' {
				out = append(out, string(rs[i:min(j+1, len(rs))]))
			} else {
				out = append(out, "`")
			}
			i = j + 1
		case c == '_' || c == '$' || unicode.IsLetter(c):
			j := i
			for j < len(rs) && (rs[j] == '_' || rs[j] == '$' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			out = append(out, string(rs[i:j]))
			i = j
		case unicode.IsDigit(c) || (c == '-' && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) && len(out) > 0 && strings.Contains(":|(<[,", out[len(out)-1])):
			j := i + 1
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == 'e' || rs[j] == '_') {
				j++
			}
			out = append(out, string(rs[i:j]))
			i = j
		case c == '=' && i+1 < len(rs) && rs[i+1] == '>':
			out = append(out, "=>")
			i += 2
		case c == '.' && i+2 < len(rs) && rs[i+1] == '.' && rs[i+2] == '.':
			out = append(out, "...")
			i += 3
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

// declarations finds `interface X {...}` and `type X = ...;` at any
// depth: name -> the tokens of the type (an interface as an object type).
func declarations(toks []string) map[string][]string {
	out := map[string][]string{}
	for i := 0; i+2 < len(toks); i++ {
		switch {
		case toks[i] == "interface" && isIdent(toks[i+1]) && toks[i+2] == "{":
			if end := matching(toks, i+2); end > 0 {
				out[toks[i+1]] = toks[i+2 : end+1]
			}
		case toks[i] == "type" && isIdent(toks[i+1]) && toks[i+2] == "=":
			j, depth := i+3, 0
			for ; j < len(toks); j++ {
				switch toks[j] {
				case "{", "(", "[", "<":
					depth++
				case "}", ")", "]", ">":
					depth--
				}
				if depth == 0 && (toks[j] == ";" || (j+1 < len(toks) && depth == 0 && startsStatement(toks[j+1]) && toks[j] != "|" && toks[j] != "&")) {
					break
				}
			}
			end := j
			if end < len(toks) && toks[end] != ";" {
				end++
			}
			out[toks[i+1]] = toks[i+3 : min(end, len(toks))]
		}
	}
	return out
}

func startsStatement(t string) bool {
	switch t {
	case "export", "const", "let", "var", "function", "type", "interface", "import", "async", "class":
		return true
	}
	return false
}

// matching is the index of the bracket closing the one at i, or -1.
func matching(toks []string, i int) int {
	open := toks[i]
	close := map[string]string{"{": "}", "(": ")", "[": "]", "<": ">"}[open]
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func isIdent(t string) bool {
	if t == "" {
		return false
	}
	r := []rune(t)[0]
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// defaultExportParams returns the tokens between the parentheses of the
// default export's parameter list.
func defaultExportParams(toks []string, decls map[string][]string) ([]string, bool) {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i] != "export" || toks[i+1] != "default" {
			continue
		}
		j := i + 2
		if toks[j] == "async" {
			j++
		}
		if j < len(toks) && toks[j] == "function" {
			j++
			if j < len(toks) && toks[j] == "*" {
				return nil, false
			}
			if j < len(toks) && isIdent(toks[j]) {
				j++
			}
			return paramList(toks, j)
		}
		if j < len(toks) && toks[j] == "(" {
			return paramList(toks, j)
		}
		if j < len(toks) && isIdent(toks[j]) && j+1 < len(toks) && toks[j+1] == "=>" {
			return []string{toks[j]}, true // x => ...: untyped
		}
		if j < len(toks) && isIdent(toks[j]) {
			return namedFunction(toks, toks[j])
		}
		return nil, false
	}
	// export { name as default }: not read.
	return nil, false
}

// namedFunction finds `function name(` or `const name = [async] (` /
// `const name: ... = (`.
func namedFunction(toks []string, name string) ([]string, bool) {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i] == "function" && toks[i+1] == name {
			return paramList(toks, i+2)
		}
		if (toks[i] == "const" || toks[i] == "let" || toks[i] == "var") && toks[i+1] == name && toks[i+2] == "=" {
			j := i + 3
			if j < len(toks) && toks[j] == "async" {
				j++
			}
			if j < len(toks) && toks[j] == "function" {
				j++
				if j < len(toks) && isIdent(toks[j]) {
					j++
				}
			}
			if j < len(toks) && toks[j] == "(" {
				return paramList(toks, j)
			}
			return nil, false
		}
	}
	return nil, false
}

// paramList returns the tokens of the first parameter of the list that
// opens at toks[i] (a generic list <...> first is not read).
func paramList(toks []string, i int) ([]string, bool) {
	if i >= len(toks) || toks[i] != "(" {
		return nil, false
	}
	end := matching(toks, i)
	if end < 0 {
		return nil, false
	}
	inner := toks[i+1 : end]
	// The first parameter ends at a comma at depth 0.
	depth := 0
	for k, t := range inner {
		switch t {
		case "{", "(", "[", "<":
			depth++
		case "}", ")", "]", ">":
			depth--
		case ",":
			if depth == 0 {
				return inner[:k], true
			}
		}
	}
	return inner, true
}

// tsParser reads a type from tokens.
type tsParser struct {
	toks  []string
	pos   int
	decls map[string][]string
	seen  map[string]bool // aliases being expanded (a recursive type is not read)
	fail  bool
}

func (p *tsParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *tsParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

// skipBinding passes a parameter's name or destructuring pattern.
func (p *tsParser) skipBinding() bool {
	switch t := p.peek(); {
	case t == "{" || t == "[":
		end := matching(p.toks, p.pos)
		if end < 0 {
			return false
		}
		p.pos = end + 1
		return true
	case t == "...":
		return false
	case isIdent(t):
		p.pos++
		return true
	}
	return false
}

func (p *tsParser) parseType() *tsType {
	t := p.parseUnion()
	if p.fail {
		return nil
	}
	return t
}

func (p *tsParser) parseUnion() *tsType {
	if p.peek() == "|" {
		p.next()
	}
	first := p.parsePostfix()
	if p.peek() != "|" {
		if p.peek() == "&" {
			p.fail = true
		}
		return first
	}
	u := &tsType{kind: "union", items: []*tsType{first}}
	for p.peek() == "|" {
		p.next()
		u.items = append(u.items, p.parsePostfix())
	}
	if p.peek() == "&" {
		p.fail = true
	}
	return u
}

func (p *tsParser) parsePostfix() *tsType {
	t := p.parsePrimary()
	for p.peek() == "[" && p.pos+1 < len(p.toks) && p.toks[p.pos+1] == "]" {
		p.pos += 2
		t = &tsType{kind: "array", elem: t}
	}
	return t
}

func (p *tsParser) parsePrimary() *tsType {
	if p.fail {
		return &tsType{kind: "any"}
	}
	tok := p.next()
	switch tok {
	case "string", "number", "boolean", "null":
		return &tsType{kind: tok}
	case "any", "unknown":
		return &tsType{kind: "any"}
	case "true", "false":
		return &tsType{kind: "literal", literal: tok == "true"}
	case "readonly":
		return p.parsePostfix()
	case "(":
		t := p.parseUnion()
		if p.next() != ")" {
			p.fail = true
		}
		return t
	case "{":
		p.pos--
		return p.parseObject()
	case "[":
		tt := &tsType{kind: "tuple"}
		for p.peek() != "]" && !p.fail {
			tt.items = append(tt.items, p.parseUnion())
			if p.peek() == "?" {
				p.fail = true // optional tuple elements: not read
			}
			if p.peek() == "," {
				p.next()
			} else if p.peek() != "]" {
				p.fail = true
			}
		}
		p.next()
		return tt
	case "Array", "ReadonlyArray":
		if p.next() != "<" {
			p.fail = true
			return &tsType{kind: "any"}
		}
		el := p.parseUnion()
		if p.next() != ">" {
			p.fail = true
		}
		return &tsType{kind: "array", elem: el}
	case "Record":
		if p.next() != "<" {
			p.fail = true
			return &tsType{kind: "any"}
		}
		key := p.parseUnion()
		if p.next() != "," || key.kind != "string" {
			p.fail = true
			return &tsType{kind: "any"}
		}
		val := p.parseUnion()
		if p.next() != ">" {
			p.fail = true
		}
		return &tsType{kind: "object", props: map[string]*tsType{}, optional: map[string]bool{}, index: val}
	}
	if len(tok) >= 2 && (tok[0] == '"' || tok[0] == '\'') {
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(tok[1:len(tok)-1], `"`, `\"`) + `"`)
		if err != nil {
			p.fail = true
		}
		return &tsType{kind: "literal", literal: s}
	}
	if f, err := strconv.ParseFloat(tok, 64); err == nil {
		return &tsType{kind: "literal", literal: f}
	}
	if isIdent(tok) && p.peek() != "<" && p.peek() != "." {
		if body, ok := p.decls[tok]; ok && !p.seen[tok] {
			p.seen[tok] = true
			sub := &tsParser{toks: body, decls: p.decls, seen: p.seen}
			t := sub.parseUnion()
			delete(p.seen, tok)
			if sub.fail || sub.pos != len(sub.toks) {
				p.fail = true
			}
			return t
		}
	}
	p.fail = true
	return &tsType{kind: "any"}
}

// parseObject reads { name?: T; [k: string]: T; ... }.
func (p *tsParser) parseObject() *tsType {
	end := matching(p.toks, p.pos)
	if end < 0 {
		p.fail = true
		return &tsType{kind: "any"}
	}
	o := &tsType{kind: "object", props: map[string]*tsType{}, optional: map[string]bool{}}
	p.pos++
	for p.pos < end && !p.fail {
		if p.peek() == "readonly" && p.pos+1 < end && p.toks[p.pos+1] != ":" && p.toks[p.pos+1] != "?" {
			p.next()
		}
		name := p.next()
		if name == "[" {
			// [k: string]: T
			if !isIdent(p.next()) || p.next() != ":" || p.next() != "string" || p.next() != "]" || p.next() != ":" {
				p.fail = true
				break
			}
			o.index = p.parseUnion()
		} else {
			if len(name) >= 2 && (name[0] == '"' || name[0] == '\'') {
				name = name[1 : len(name)-1]
			} else if !isIdent(name) {
				p.fail = true
				break
			}
			if p.peek() == "?" {
				p.next()
				o.optional[name] = true
			}
			if p.next() != ":" {
				p.fail = true // a method or an untyped member
				break
			}
			o.props[name] = p.parseUnion()
		}
		if p.peek() == ";" || p.peek() == "," {
			p.next()
		} else if p.pos != end {
			p.fail = true
		}
	}
	p.pos = end + 1
	return o
}
