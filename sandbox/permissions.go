package sandbox

import (
	"errors"
	"fmt"
	pathpkg "path"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// Permissions is what a tool declares it may do, with
//
//	export const permissions = { fetch: ["https://api.example.com/v1/"], secrets: ["API"], sql: "read", write: ["data/reports/"] };
//
// The declaration narrows the kernel's configuration, never widens it: a
// run may fetch a URL only when both sandbox.allowed_fetch_urls and
// Fetch allow it, write a file only under both fs.allowed_dirs and
// Write. A key the tool leaves out grants nothing (sql: "none"). A tool
// without the export runs under the configuration alone, unless the
// runner requires permissions (WithRequirePermissions).
//
// The export is read from the source, statically, before any of the
// tool's code runs: it must be an object literal of string literals, so
// what check_tool shows is what exec_tool enforces and no code can
// compute or change it. Only the tool that runs counts: modules it
// requires run under its permissions, whatever they export.
type Permissions struct {
	// Fetch are URL prefixes (matched as URLAllowed does).
	Fetch []string `json:"fetch" jsonschema:"URL prefixes tgp.fetch may reach, within sandbox.allowed_fetch_urls"`
	// Secrets are the names of sandbox.secrets the tool may ask
	// tgp.secret for.
	Secrets []string `json:"secrets" jsonschema:"names of sandbox.secrets tgp.secret gives a placeholder for"`
	// SQL is SQLNone, SQLRead or SQLWrite.
	SQL string `json:"sql" jsonschema:"none, read (a read-only transaction) or write"`
	// Write are the directories (or files) tgp.write_file may write,
	// relative to the root.
	Write []string `json:"write" jsonschema:"directories tgp.write_file may write under, within fs.allowed_dirs"`
}

// What permissions.sql may say.
const (
	SQLNone  = "none"
	SQLRead  = "read"
	SQLWrite = "write"
)

// PermissionsError is a permissions export that is not a literal of the
// documented shape; the position is the export's in the tool's source.
type PermissionsError struct {
	Path    string
	Line    int
	Column  int
	Message string
}

func (e *PermissionsError) Error() string {
	return fmt.Sprintf("%s:%d:%d: permissions: %s", e.Path, e.Line, e.Column, e.Message)
}

// ErrPermissions matches every *PermissionsError (errors.Is).
var ErrPermissions = errors.New("sandbox: bad permissions export")

func (e *PermissionsError) Is(target error) bool { return target == ErrPermissions }

var (
	secretName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	permissionsDecl = regexp.MustCompile(`\bexport\s+(?:const|let|var)\s+permissions\b|\bpermissions\b`)
)

// ParsePermissions reads the permissions a tool exports, without running
// it: nil and no error when it exports none. A tool that does not compile
// is a *CompileError; an export that is not a literal of the documented
// shape, a *PermissionsError.
func ParsePermissions(path string, src []byte) (*Permissions, error) {
	if err := CheckUTF8(path, src); err != nil {
		return nil, err
	}
	loader := api.LoaderTS
	if strings.HasSuffix(path, ".js") {
		loader = api.LoaderJS
	}
	res := api.Transform(string(src), api.TransformOptions{
		Loader: loader, Format: api.FormatCommonJS, Target: api.ES2022, LogLevel: api.LogLevelSilent,
		Supported: map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		ce := &CompileError{Path: path, Message: e.Text}
		if e.Location != nil {
			ce.Line, ce.Column = e.Location.Line, e.Location.Column+1
		}
		return nil, ce
	}
	return permissionsFromJS(path, src, string(res.Code))
}

// permissionsFromJS finds the export in esbuild's CommonJS output, where
// `export const permissions = {...}` is a getter in the __export call
// (`permissions: () => permissions`) and a top-level declaration.
func permissionsFromJS(path string, src []byte, js string) (*Permissions, error) {
	fail := func(format string, args ...any) (*Permissions, error) {
		e := &PermissionsError{Path: path, Line: 1, Column: 1, Message: fmt.Sprintf(format, args...)}
		if loc := permissionsDecl.FindIndex(src); loc != nil {
			before := src[:loc[0]]
			e.Line = 1 + strings.Count(string(before), "\n")
			e.Column = 1 + len([]rune(string(before[strings.LastIndexByte(string(before), '\n')+1:])))
		}
		return nil, e
	}
	if !strings.Contains(js, "permissions") {
		return nil, nil // the common case, without a parse
	}
	prog, err := parser.ParseFile(nil, path, js, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, &CompileError{Path: path, Line: 1, Column: 1, Message: "the compiled tool does not parse: " + err.Error()}
	}
	getter := exportedGetter(prog, "permissions")
	if getter == nil {
		return nil, nil
	}
	name := ""
	if arrow, ok := getter.(*ast.ArrowFunctionLiteral); ok {
		if body, ok := arrow.Body.(*ast.ExpressionBody); ok {
			if id, ok := body.Expression.(*ast.Identifier); ok {
				name = id.Name.String()
			}
		}
	}
	if name == "" {
		return fail("declare it in the tool itself: `export const permissions = { ... }` (a re-export is not read)")
	}
	init := topLevelInit(prog, name)
	if init == nil {
		return fail("declare it with an initializer: `export const permissions = { ... }`")
	}
	obj, ok := init.(*ast.ObjectLiteral)
	if !ok {
		return fail("must be an object literal (it is read without running the tool, so it cannot be computed)")
	}
	p := &Permissions{Fetch: []string{}, Secrets: []string{}, SQL: SQLNone, Write: []string{}}
	seen := map[string]bool{}
	for _, prop := range obj.Value {
		kv, ok := prop.(*ast.PropertyKeyed)
		if !ok || kv.Computed || kv.Kind != ast.PropertyKindValue {
			return fail("use plain keys: fetch, secrets, sql, write")
		}
		key, ok := keyString(kv.Key)
		if !ok {
			return fail("use plain keys: fetch, secrets, sql, write")
		}
		if seen[key] {
			return fail("%s is given twice", key)
		}
		seen[key] = true
		switch key {
		case "sql":
			s, ok := literalString(kv.Value)
			if !ok || (s != SQLNone && s != SQLRead && s != SQLWrite) {
				return fail(`sql must be "none", "read" or "write"`)
			}
			p.SQL = s
		case "fetch", "secrets", "write":
			list, ok := literalStrings(kv.Value)
			if !ok {
				return fail("%s must be an array of string literals", key)
			}
			for _, s := range list {
				if err := checkPermission(key, s); err != nil {
					return fail("%v", err)
				}
			}
			switch key {
			case "fetch":
				p.Fetch = list
			case "secrets":
				p.Secrets = list
			case "write":
				p.Write = list
			}
		default:
			return fail("unknown key %q (the keys are fetch, secrets, sql, write)", key)
		}
	}
	return p, nil
}

func checkPermission(key, s string) error {
	switch key {
	case "fetch":
		if err := CheckURLPrefix(s); err != nil {
			return fmt.Errorf("fetch: %v", err)
		}
	case "secrets":
		if !secretName.MatchString(s) {
			return fmt.Errorf("secrets: %q is not a secret name (letters, digits and _)", s)
		}
	case "write":
		c := pathpkg.Clean(strings.TrimPrefix(s, "./"))
		if s == "" || c == "." || c == ".." || strings.HasPrefix(c, "../") || strings.HasPrefix(c, "/") {
			return fmt.Errorf("write: %q is not a directory under the root (e.g. \"data/reports/\")", s)
		}
	}
	return nil
}

// exportedGetter is the getter esbuild's __export call gives for name.
func exportedGetter(prog *ast.Program, name string) ast.Expression {
	for _, st := range prog.Body {
		es, ok := st.(*ast.ExpressionStatement)
		if !ok {
			continue
		}
		call, ok := es.Expression.(*ast.CallExpression)
		if !ok || len(call.ArgumentList) != 2 {
			continue
		}
		if id, ok := call.Callee.(*ast.Identifier); !ok || id.Name.String() != "__export" {
			continue
		}
		obj, ok := call.ArgumentList[1].(*ast.ObjectLiteral)
		if !ok {
			continue
		}
		for _, prop := range obj.Value {
			if kv, ok := prop.(*ast.PropertyKeyed); ok {
				if k, ok := keyString(kv.Key); ok && k == name {
					return kv.Value
				}
			}
		}
	}
	return nil
}

// topLevelInit is the initializer of the top-level declaration of name.
func topLevelInit(prog *ast.Program, name string) ast.Expression {
	var found ast.Expression
	for _, st := range prog.Body {
		var list []*ast.Binding
		switch d := st.(type) {
		case *ast.LexicalDeclaration:
			list = d.List
		case *ast.VariableStatement:
			list = d.List
		}
		for _, b := range list {
			if id, ok := b.Target.(*ast.Identifier); ok && id.Name.String() == name && b.Initializer != nil {
				found = b.Initializer
			}
		}
	}
	return found
}

func literalString(e ast.Expression) (string, bool) {
	switch x := e.(type) {
	case *ast.StringLiteral:
		return x.Value.String(), true
	case *ast.TemplateLiteral:
		if x.Tag == nil && len(x.Expressions) == 0 && len(x.Elements) == 1 {
			return x.Elements[0].Parsed.String(), true
		}
	}
	return "", false
}

// keyString is an object key written as a name or a string.
func keyString(e ast.Expression) (string, bool) {
	if id, ok := e.(*ast.Identifier); ok {
		return id.Name.String(), true
	}
	return literalString(e)
}

func literalStrings(e ast.Expression) ([]string, bool) {
	arr, ok := e.(*ast.ArrayLiteral)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr.Value))
	for _, v := range arr.Value {
		s, ok := literalString(v)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
