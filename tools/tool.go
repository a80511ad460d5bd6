package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Risk is how much damage a call can do; the approval policy reads it.
type Risk string

// Risk levels.
const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Annotations describe a tool's behaviour for hosts and MCP clients.
type Annotations struct {
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	Risk        Risk `json:"risk"`
}

// Result is what a tool returns. Value is JSON-serialisable: a string for the
// git tools (the text git prints), a documented object for the others.
//
// Value is what the tool returns, as it is marshalled to JSON;
// forgetools.OutcomeOf and forgetools.ReportOf give exec_tool's and
// check_tool's values typed.
type Result struct {
	Value     any  `json:"result"`
	Truncated bool `json:"truncated"`
	// TruncatedReason, when set, says why Value is cut (a git tool that
	// ran past its deadline returns what it printed until then).
	TruncatedReason string `json:"truncated_reason,omitempty"`
	// Stale, when set, says the answer came from local state that may be
	// behind the remote, and why (the kernel's refresh could not run).
	Stale string `json:"stale,omitempty"`
	// Extra holds structured fields beside a text result (git_status's
	// entries beside git's text), of the tool's Spec.Extra type. MCP
	// clients get them in structuredContent; `tgp call` prints the text.
	Extra any `json:"-"`
	// Limit, when set, is the byte cap the tool applied to Value itself
	// (a git tool's max_bytes, configured or asked for): the Set caps the
	// result at it instead of its own default, so a caller that asks for
	// more than the default gets it.
	Limit int `json:"-"`
}

// Facts are what a kernel must know about a tool to run it well. They are
// part of the definition, so that a new tool declares them where it is
// defined instead of in a list kept elsewhere by name.
type Facts struct {
	// ReadsToolbox: the call answers from the root (a read, a check, a
	// run), so a long-lived kernel checks the remote first
	// (git.refresh_interval). Writes need no check: a persist replays on
	// whatever the remote has.
	ReadsToolbox bool `json:"reads_toolbox,omitempty"`
	// NeedsDisk: the tool runs programs on real files; a root in memory
	// does not offer it.
	NeedsDisk bool `json:"needs_disk,omitempty"`
	// Persists: the tool commits and pushes what it changes.
	Persists bool `json:"persists,omitempty"`
	// OnlyPath names the argument holding the one path the call reads
	// (write_file's path): the kernel then writes only that path's files
	// a persist left unwritten before the call, not the whole root's.
	OnlyPath string `json:"only_path,omitempty"`
}

// Spec declares a tool whose arguments decode into A.
type Spec[A any] struct {
	Name string
	// Facts are what a kernel must know to run the tool (see Facts).
	Facts Facts
	// Title is the tool's display name (default: from the name,
	// "git_status" → "Git status").
	Title       string
	Description string
	Annotations Annotations
	// Output, when set, is a value of the type Run puts in Result.Value
	// (WriteResult{}): its JSON Schema becomes the tool's OutputSchema, so
	// that MCP clients can validate the structured result.
	Output any
	// Extra, when set, is a value of the type Run puts in Result.Extra.
	Extra any
	// Summary tells a human approver what this call will do.
	Summary func(A) string
	// Risk, when set, rates one call (git_stash clear is high risk, list is
	// low); Annotations.Risk is the tool's highest.
	Risk func(A) Risk
	// Validate checks rules the schema cannot express. Return BadArg errors.
	Validate func(A) error
	// Aliases maps accepted alternative argument names to the real ones
	// (TGP's `search`/`replace` for patch_file's old_string/new_string).
	Aliases map[string]string
	// Run executes the call. Arguments are validated and defaulted.
	Run func(ctx context.Context, args A) (Result, error)
}

// Tool is a defined tool. Build one with [Define].
type Tool struct {
	Name        string
	Title       string
	Description string
	Annotations Annotations
	// Facts are what a kernel must know to run it.
	Facts Facts
	// Toolset names the toolset the tool came in (kernel.WithToolsets;
	// "core" for the kernel's own): the MCP server's --toolsets select
	// on it. Empty for a tool added to a Set directly.
	Toolset string
	// InputSchema is the JSON Schema of the arguments.
	InputSchema *jsonschema.Schema
	// OutputSchema is the JSON Schema of Result.Value, nil when the tool
	// did not declare one (text results).
	OutputSchema *jsonschema.Schema
	// ExtraSchema is the JSON Schema of Result.Extra (an object), or nil.
	ExtraSchema *jsonschema.Schema

	props    map[string]*jsonschema.Resolved
	resolved *jsonschema.Resolved
	order    []string
	required map[string]bool
	defaults map[string]any
	aliases  map[string]string
	decode   func(args map[string]any) (any, error)
	summary  func(any) string
	risk     func(any) Risk
	run      func(ctx context.Context, args any) (Result, error)
}

// Define builds a Tool from a Spec. It panics on a programming error in the
// argument struct (an unsupported type or a malformed tag): tools are defined
// at start-up by this program, never from user input.
func Define[A any](s Spec[A]) *Tool {
	t, err := define(s)
	if err != nil {
		panic(fmt.Sprintf("tools: define %s: %v", s.Name, err))
	}
	return t
}

func define[A any](s Spec[A]) (*Tool, error) {
	if s.Run == nil || s.Name == "" {
		return nil, fmt.Errorf("name and Run are required")
	}
	schema, err := jsonschema.For[A](nil)
	if err != nil {
		return nil, err
	}
	schema.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	defaults := map[string]any{}
	if err := applyTags(reflect.TypeFor[A](), schema, defaults); err != nil {
		return nil, err
	}
	plainTypes(schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, err
	}
	props := map[string]*jsonschema.Resolved{}
	for name, ps := range schema.Properties {
		r, err := ps.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		props[name] = r
	}
	required := map[string]bool{}
	for _, r := range schema.Required {
		required[r] = true
	}
	order := schema.PropertyOrder
	if len(order) == 0 {
		for k := range schema.Properties {
			order = append(order, k)
		}
		sort.Strings(order)
	}
	out, err := outputSchema(s.Output)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	extra, err := outputSchema(s.Extra)
	if err != nil {
		return nil, fmt.Errorf("extra: %w", err)
	}
	if extra != nil && extra.Type != "object" {
		return nil, fmt.Errorf("extra: %T is not a struct", s.Extra)
	}
	title := s.Title
	if title == "" {
		title = TitleOf(s.Name)
	}
	t := &Tool{
		Name:         s.Name,
		Title:        title,
		OutputSchema: out,
		ExtraSchema:  extra,
		Description:  s.Description,
		Annotations:  s.Annotations,
		Facts:        s.Facts,
		InputSchema:  schema,
		props:        props,
		resolved:     resolved,
		order:        order,
		required:     required,
		defaults:     defaults,
		aliases:      s.Aliases,
	}
	t.decode = func(m map[string]any) (any, error) {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		var a A
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return nil, decodeError(err)
		}
		if s.Validate != nil {
			if err := s.Validate(a); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	if s.Summary != nil {
		t.summary = func(a any) string { return s.Summary(a.(A)) }
	}
	if s.Risk != nil {
		t.risk = func(a any) Risk { return s.Risk(a.(A)) }
	}
	t.run = func(ctx context.Context, a any) (Result, error) { return s.Run(ctx, a.(A)) }
	return t, nil
}

func decodeError(err error) error {
	var ute *json.UnmarshalTypeError
	if ok := asType(err, &ute); ok {
		return BadArg(ute.Field, "%s: expected %s, got %s", ute.Field, ute.Type.String(), ute.Value)
	}
	return BadArg("", "invalid arguments: %v", err)
}

func asType[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

// applyTags reads the struct tags jsonschema-go ignores: default (a JSON
// literal), enum (comma separated), pattern, minimum, maximum and minLength.
func applyTags(t reflect.Type, schema *jsonschema.Schema, defaults map[string]any) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := schema.Properties[name]
		if ps == nil {
			continue
		}
		if d, ok := f.Tag.Lookup("default"); ok {
			var v any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				return fmt.Errorf("field %s: default %q is not JSON: %w", name, d, err)
			}
			raw, _ := json.Marshal(v)
			ps.Default = raw
			defaults[name] = v
		}
		if e, ok := f.Tag.Lookup("enum"); ok {
			for _, v := range strings.Split(e, ",") {
				ps.Enum = append(ps.Enum, v)
			}
		}
		if p, ok := f.Tag.Lookup("pattern"); ok {
			if _, err := regexp.Compile(p); err != nil {
				return fmt.Errorf("field %s: pattern %q: %w", name, p, err)
			}
			ps.Pattern = p
		}
		for _, key := range []string{"minimum", "maximum", "minLength"} {
			v, ok := f.Tag.Lookup(key)
			if !ok {
				continue
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("field %s: %s %q: %w", name, key, v, err)
			}
			switch key {
			case "minimum":
				ps.Minimum = &n
			case "maximum":
				ps.Maximum = &n
			case "minLength":
				i := int(n)
				ps.MinLength = &i
			}
		}
	}
	return nil
}

// plainTypes turns the ["null", T] unions jsonschema-go makes of pointer
// fields into plain T, everywhere in the schema: clients (the MCP
// Inspector among them) build forms from the type and sent strings for
// the unions. An explicit null is still accepted: Decode drops it as
// "omitted".
func plainTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		if s.Types[0] == "null" {
			s.Type = s.Types[1]
		} else {
			s.Type = s.Types[0]
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		plainTypes(p)
	}
	plainTypes(s.Items)
	for _, p := range s.AnyOf {
		plainTypes(p)
	}
}

// dropNulls removes null members of an argument object (recursively, in
// the objects the schema declares): a null for an optional argument means
// the argument is not given. A free-form object (exec_tool's args, a
// schema without properties) is data and keeps its nulls.
func dropNulls(m map[string]any, s *jsonschema.Schema) {
	if s != nil && len(s.Properties) == 0 {
		return
	}
	for k, v := range m {
		var sub *jsonschema.Schema
		if s != nil {
			sub = s.Properties[k]
		}
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			if sub != nil {
				dropNulls(x, sub)
			}
		}
	}
}

// Decode validates raw JSON arguments against the schema, fills defaults and
// decodes them. Errors are bad_args errors naming the field.
func (t *Tool) Decode(raw json.RawMessage) (any, error) {
	m := map[string]any{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) != 0 && !bytes.Equal(trimmed, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, BadArg("", "Invalid arguments: %v", err)
		}
		if dec.More() {
			return nil, BadArg("", "arguments must be a single JSON object")
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, BadArg("", "arguments must be a JSON object, got %s", jsonTypeName(v))
		}
		m = obj
	}
	dropNulls(m, t.InputSchema)
	for alias, real := range t.aliases {
		if v, ok := m[alias]; ok {
			if _, dup := m[real]; dup {
				return nil, BadArg(alias, "give either %q or its alias %q, not both", real, alias)
			}
			m[real] = v
			delete(m, alias)
		}
	}
	var unknown []string
	for k := range m {
		if _, ok := t.props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, BadArg(unknown[0], "unknown argument %q (allowed: %s)", unknown[0], strings.Join(t.order, ", "))
	}
	for _, name := range t.order {
		v, ok := m[name]
		if !ok {
			if t.required[name] {
				if _, hasDefault := t.defaults[name]; !hasDefault {
					return nil, BadArg(name, "%s is required", name)
				}
			}
			continue
		}
		norm, err := normalizeNumbers(v)
		if err != nil {
			return nil, BadArg(name, "%s: %v", name, err)
		}
		if err := t.props[name].Validate(norm); err != nil {
			if msg, ok := violation(name, t.InputSchema.Properties[name], norm); ok {
				return nil, BadArg(name, "%s", msg)
			}
			return nil, BadArg(name, "%s: %s", name, cleanSchemaError(err))
		}
		m[name] = norm
	}
	for name, d := range t.defaults {
		if _, ok := m[name]; !ok {
			m[name] = d
		}
	}
	return t.decode(m)
}

// normalizeNumbers turns json.Number into float64 (what jsonschema-go
// validates), refusing numbers that would lose precision.
func normalizeNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", x)
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			n, err := normalizeNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := normalizeNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

func cleanSchemaError(err error) string {
	s := err.Error()
	// jsonschema-go prefixes "validating root: " and schema pointers; the
	// field name is already in our message.
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "validating") {
		return s[i+2:]
	}
	return s
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// RiskOf is the risk of one call with decoded arguments.
func (t *Tool) RiskOf(args any) Risk {
	if t.risk != nil {
		return t.risk(args)
	}
	return t.Annotations.Risk
}

// Summary is the approval summary for decoded arguments.
func (t *Tool) Summary(args any) string {
	if t.summary == nil {
		return t.Name
	}
	return t.summary(args)
}

// FirstWords is s cut to its first n words ("..." after them), for an
// approval summary or a commit message that quotes a command.
func FirstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = append(f[:n], "...")
	}
	return strings.Join(f, " ")
}
