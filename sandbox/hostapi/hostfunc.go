package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// HostFunc is a function of the host that tools call as tgp.<Name>(arg),
// as the TypeScript original injects exec_sql through its sandboxAPI. The
// argument and the result cross as JSON, in both isolation modes (in
// process isolation over the worker's pipe: the function runs in the
// kernel, never in the worker). The call is synchronous for the tool, like
// tgp.exec_sql; a host error reaches the tool as an exception carrying its
// message. Build one with [NewHostFunc].
type HostFunc struct {
	Name string
	// Call runs the function: arg is the tool's argument as JSON ("null"
	// when it gave none); the result is JSON.
	Call func(ctx context.Context, arg json.RawMessage) (json.RawMessage, error)
	// ArgType and ResultType are the TypeScript types tools/tgp-env.d.ts
	// declares.
	ArgType, ResultType string
}

var hostFuncName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// builtinNames are the tgp members the sandbox defines itself.
var builtinNames = map[string]bool{"log": true, "read_file": true, "list_files": true, "write_file": true, "fetch": true, "exec_sql": true, "secret": true}

// ErrHostFunc matches every error a host function's argument or result
// checks make (the JSON does not fit the function's Go types).
var ErrHostFunc = errors.New("sandbox: host function")

// hostFuncError is a failed check; its text is what the tool reads.
type hostFuncError struct{ msg string }

func (e *hostFuncError) Error() string        { return e.msg }
func (e *hostFuncError) Is(target error) bool { return target == ErrHostFunc }

func hostFuncErrorf(format string, args ...any) error {
	return &hostFuncError{msg: fmt.Sprintf(format, args...)}
}

// NewHostFunc makes fn callable from tools as tgp.<name>(arg). The
// argument is decoded into A as encoding/json does, with unknown fields
// refused, so a tool passing the wrong shape gets an exception naming the
// field instead of a zero value; the result R is encoded as JSON.
func NewHostFunc[A, R any](name string, fn func(ctx context.Context, arg A) (R, error)) (HostFunc, error) {
	if err := CheckName(name); err != nil {
		return HostFunc{}, err
	}
	if fn == nil {
		return HostFunc{}, fmt.Errorf("sandbox: host function %q is nil", name)
	}
	call := func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		var a A
		if len(bytes.TrimSpace(raw)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return nil, hostFuncErrorf("the argument does not fit %s: %v", typeScript(reflect.TypeFor[A]()), jsonProblem(err))
			}
			if dec.More() {
				return nil, hostFuncErrorf("the argument is more than one JSON value")
			}
		}
		r, err := fn(ctx, a)
		if err != nil {
			return nil, err
		}
		out, err := json.Marshal(r)
		if err != nil {
			return nil, hostFuncErrorf("the result is not JSON: %v", err)
		}
		return out, nil
	}
	return HostFunc{Name: name, Call: call, ArgType: typeScript(reflect.TypeFor[A]()), ResultType: typeScript(reflect.TypeFor[R]())}, nil
}

// CheckName checks a host function's name: an identifier, not one of
// the sandbox's own tgp members.
func CheckName(name string) error {
	switch {
	case !hostFuncName.MatchString(name):
		return fmt.Errorf("sandbox: host function name %q: use letters, digits and _ (tools call it as tgp.%s)", name, name)
	case builtinNames[name]:
		return fmt.Errorf("sandbox: host function name %q: tgp.%s is the sandbox's own", name, name)
	}
	return nil
}

// jsonProblem shortens encoding/json's messages to what the tool needs.
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		where := ute.Field
		if where == "" {
			where = "the argument"
		}
		return fmt.Sprintf("%s: expected %s, got %s", where, typeScript(ute.Type), ute.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Declarations are the TypeScript members of the tgp object for fs, one
// line each, sorted by name: what tools/tgp-env.d.ts adds to the
// sandbox's own.
func Declarations(fs []HostFunc) string {
	sorted := append([]HostFunc(nil), fs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, f := range sorted {
		arg := f.ArgType
		if arg == "" {
			arg = "unknown"
		}
		res := f.ResultType
		if res == "" {
			res = "unknown"
		}
		fmt.Fprintf(&b, "  /** Host function (kernel.WithSandboxFunc); throws the host's error message. */\n  %s(arg: %s): %s;\n", f.Name, arg, res)
	}
	return b.String()
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// typeScript is the TypeScript type of t's JSON form (encoding/json's).
func typeScript(t reflect.Type) string { return tsType(t, map[reflect.Type]bool{}) }

func tsType(t reflect.Type, seen map[reflect.Type]bool) string {
	if t == nil {
		return "unknown"
	}
	switch {
	case t == timeType:
		return "string"
	case t == rawType:
		return "unknown"
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return "unknown" // its own JSON form
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Pointer:
		return tsType(t.Elem(), seen) + " | null"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // base64
		}
		return arrayOf(tsType(t.Elem(), seen)) + " | null"
	case reflect.Array:
		return arrayOf(tsType(t.Elem(), seen))
	case reflect.Map:
		return "Record<string, " + tsType(t.Elem(), seen) + "> | null"
	case reflect.Struct:
		if seen[t] {
			return "unknown" // a recursive type
		}
		seen[t] = true
		defer delete(seen, t)
		var fields []string
		structFields(t, seen, &fields)
		if len(fields) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(fields, "; ") + " }"
	}
	return "unknown"
}

func arrayOf(elem string) string {
	if strings.ContainsAny(elem, " |") {
		return "(" + elem + ")[]"
	}
	return elem + "[]"
}

// structFields lists t's JSON fields as encoding/json names them: json
// tags, omitempty as optional, embedded structs without a tag inlined.
func structFields(t reflect.Type, seen map[reflect.Type]bool, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structFields(ft, seen, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		typ := tsType(f.Type, seen)
		if strings.Contains(opts, "string") {
			typ = "string"
		}
		key := name
		if !hostFuncName.MatchString(name) {
			key = fmt.Sprintf("%q", name)
		}
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			key += "?"
		}
		*out = append(*out, key+": "+typ)
	}
}
