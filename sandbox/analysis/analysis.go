package analysis

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"

	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/sandbox"
)

// Severity of a finding.
type Severity string

// Severities; "off" disables a rule in Config.Rules.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Off     Severity = "off"
)

// Rule ids.
const (
	RuleSyntax       = "syntax"
	RuleNoAny        = "no-any"
	RuleNoEval       = "no-eval"
	RuleNoProcess    = "no-process"
	RuleNoSecrets    = "no-hardcoded-secrets"
	RuleNoEmail      = "no-email"
	RuleMagicNumbers = "no-magic-numbers"
	RuleRequire      = "require"
	RuleDefault      = "default-export"
	RuleJSDoc        = "jsdoc"
	// RulePermissions: the permissions export is not a literal of the
	// documented shape (exec_tool would refuse the tool), or, with
	// RequirePermissions, is missing.
	RulePermissions = "permissions"
)

// Defaults are the rules' default severities.
var defaults = map[string]Severity{
	RuleNoAny: Error, RuleNoEval: Error, RuleNoProcess: Error, RuleNoSecrets: Error, RuleNoEmail: Error,
	RuleMagicNumbers: Error, RuleRequire: Error, RuleDefault: Error, RuleJSDoc: Warning, RulePermissions: Error,
}

// Rules lists every rule id with its default severity.
func Rules() map[string]Severity {
	out := map[string]Severity{}
	for k, v := range defaults {
		out[k] = v
	}
	return out
}

// Config configures Analyze.
type Config struct {
	// AllowedImports are the bare modules require may name.
	AllowedImports []string
	// Rules overrides severities by rule id (off | warning | error).
	Rules map[string]Severity
	// RequirePermissions (sandbox.require_permissions): a tool without a
	// permissions export gets a warning, since exec_tool will refuse it.
	RequirePermissions bool
	// FetchURLs (sandbox.allowed_fetch_urls) and Secrets (the names in
	// sandbox.secrets), when Configured: a permissions.fetch prefix no
	// URL of which the configuration allows, or a secret it does not
	// configure, gets a warning, since the tool could never use it.
	FetchURLs  []string
	Secrets    []string
	Configured bool
}

// Finding is one rule violation at a TS position.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
}

// Report is check_tool's result.
type Report struct {
	Valid    bool      `json:"valid"`
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
	// ArgsSchema is the default export's parameter type as JSON Schema,
	// what exec_tool checks args against (ParamsOf); absent when the
	// type is not one this reader understands.
	ArgsSchema map[string]any `json:"args_schema,omitempty"`
	// Permissions are what the tool declares with `export const
	// permissions` (sandbox.Permissions), as exec_tool enforces them:
	// absent when the tool declares none and runs under the
	// configuration alone.
	Permissions *sandbox.Permissions `json:"permissions,omitempty" jsonschema:"what the tool declares with export const permissions, as exec_tool enforces it; absent when it declares none"`
}

// allowedNumbers are TGP's non-magic numbers.
var allowedNumbers = map[float64]bool{0: true, 1: true, 2: true, -1: true, 100: true, 1000: true}

// Analyze compiles and checks a tool. It never panics: a tool that does not
// compile is a report with a syntax error.
func Analyze(p string, src []byte, cfg Config) (rep Report) {
	rep = Report{Errors: []Finding{}, Warnings: []Finding{}}
	if ps, ok := ParamsOf(string(src)); ok {
		rep.ArgsSchema = ps.Schema()
	}
	a := &analyzer{path: p, cfg: cfg, src: string(src)}
	defer func() {
		if r := recover(); r != nil {
			rep.Errors = append(rep.Errors, Finding{Rule: RuleSyntax, Severity: Error, Path: p, Line: 1, Column: 1,
				Message: fmt.Sprintf("internal analysis failure: %v", r)})
		}
		sort.SliceStable(a.findings, func(i, j int) bool {
			if a.findings[i].Line != a.findings[j].Line {
				return a.findings[i].Line < a.findings[j].Line
			}
			return a.findings[i].Column < a.findings[j].Column
		})
		for _, f := range a.findings {
			if f.Severity == Warning {
				rep.Warnings = append(rep.Warnings, f)
			} else {
				rep.Errors = append(rep.Errors, f)
			}
		}
		rep.Valid = len(rep.Errors) == 0
	}()
	if cerr := sandbox.CheckUTF8(p, src); cerr != nil {
		// esbuild hangs on invalid UTF-8 (found by FuzzAnalyze).
		a.findings = append(a.findings, Finding{Rule: RuleSyntax, Severity: Error, Path: p, Line: cerr.Line, Column: cerr.Column, Message: cerr.Message})
		return rep
	}
	res := api.Transform(string(src), api.TransformOptions{
		Loader: loaderFor(p), Format: api.FormatCommonJS, Target: api.ES2022,
		Sourcemap: api.SourceMapInline, Sourcefile: path.Base(p), LogLevel: api.LogLevelSilent,
		Supported: map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
	})
	if len(res.Errors) > 0 {
		for _, e := range res.Errors {
			f := Finding{Rule: RuleSyntax, Severity: Error, Path: p, Message: e.Text, Line: 1, Column: 1}
			if e.Location != nil {
				f.Line, f.Column = e.Location.Line, e.Location.Column+1
			}
			a.findings = append(a.findings, f)
		}
		return rep
	}
	if loaderFor(p) == api.LoaderTS {
		a.checkAny()
	}
	js := string(res.Code)
	a.loadSourceMap(js)
	prog, err := parser.ParseFile(nil, p, js, 0, parser.WithDisableSourceMaps)
	if err != nil {
		a.add(RuleSyntax, 1, 1, "the compiled tool does not parse: "+err.Error())
		return rep
	}
	a.file = file.NewFile(p, js, 1)
	a.walk(reflect.ValueOf(prog), nil)
	a.checkShape()
	rep.Permissions = a.checkPermissions(src)
	return rep
}

// checkPermissions reads the permissions export as exec_tool does.
func (a *analyzer) checkPermissions(src []byte) *sandbox.Permissions {
	perms, err := sandbox.ParsePermissions(a.path, src)
	var pe *sandbox.PermissionsError
	switch {
	case errors.As(err, &pe):
		a.add(RulePermissions, pe.Line, pe.Column, pe.Message)
	case err != nil:
		// A compile error: the syntax rule has said it.
	case perms == nil && a.cfg.RequirePermissions && a.hasDefault:
		sev := a.severity(RulePermissions)
		if sev != Off {
			a.findings = append(a.findings, Finding{Rule: RulePermissions, Severity: Warning, Path: a.path, Line: 1, Column: 1,
				Message: "no permissions export and sandbox.require_permissions is on: exec_tool will refuse this tool; add `export const permissions = { fetch: [], secrets: [], sql: \"none\", write: [] }` with what it needs"})
		}
	}
	if perms != nil && a.cfg.Configured {
		a.checkGrants(src, perms)
	}
	return perms
}

// checkGrants warns of the permissions the configuration makes useless:
// a fetch prefix disjoint from every sandbox.allowed_fetch_urls entry
// (exec_tool allows the intersection, empty here) and a secret
// sandbox.secrets does not configure (tgp.secret would be
// secret_unavailable). The warning is at the string's first occurrence.
func (a *analyzer) checkGrants(src []byte, perms *sandbox.Permissions) {
	if a.severity(RulePermissions) == Off {
		return
	}
	at := func(s string) (int, int) {
		for _, q := range []string{`"` + s + `"`, `'` + s + `'`, "`" + s + "`"} {
			if i := strings.Index(string(src), q); i >= 0 {
				line := 1 + strings.Count(string(src[:i]), "\n")
				return line, i - strings.LastIndex(string(src[:i]), "\n")
			}
		}
		return 1, 1
	}
	warn := func(s, msg string) {
		line, col := at(s)
		a.findings = append(a.findings, Finding{Rule: RulePermissions, Severity: Warning, Path: a.path, Line: line, Column: col, Message: msg})
	}
	for _, p := range perms.Fetch {
		usable := false
		for _, g := range a.cfg.FetchURLs {
			if sandbox.URLAllowed(g, p) || sandbox.URLAllowed(p, g) {
				usable = true
				break
			}
		}
		if !usable {
			list := strings.Join(a.cfg.FetchURLs, ", ")
			if list == "" {
				list = "none"
			}
			warn(p, fmt.Sprintf("permissions.fetch %q is outside sandbox.allowed_fetch_urls (%s): exec_tool allows only their intersection, so the tool can never fetch it", p, list))
		}
	}
	for _, name := range perms.Secrets {
		known := false
		for _, n := range a.cfg.Secrets {
			known = known || n == name
		}
		if !known {
			warn(name, fmt.Sprintf("permissions.secrets names %q, which sandbox.secrets does not configure: tgp.secret(%q) would be secret_unavailable", name, name))
		}
	}
}

func loaderFor(p string) api.Loader {
	if strings.HasSuffix(p, ".js") {
		return api.LoaderJS
	}
	return api.LoaderTS
}

type analyzer struct {
	path       string
	cfg        Config
	src        string
	findings   []Finding
	sm         *sourcemap.Consumer
	file       *file.File
	hasDefault bool
}

func (a *analyzer) severity(rule string) Severity {
	if s, ok := a.cfg.Rules[rule]; ok {
		return s
	}
	if s, ok := defaults[rule]; ok {
		return s
	}
	return Error
}

func (a *analyzer) add(rule string, line, col int, msg string) {
	sev := a.severity(rule)
	if sev == Off {
		return
	}
	for _, f := range a.findings {
		if f.Rule == rule && f.Line == line && f.Column == col {
			return
		}
	}
	a.findings = append(a.findings, Finding{Rule: rule, Severity: sev, Message: msg, Path: a.path, Line: line, Column: col})
}

// at maps a JS offset to a TS position; ok is false for code esbuild
// generated (helpers), which is not the agent's.
func (a *analyzer) at(idx file.Idx) (int, int, bool) {
	pos := a.file.Position(int(idx) - 1)
	if a.sm == nil {
		return pos.Line, pos.Column, true
	}
	_, _, line, col, ok := a.sm.Source(pos.Line, pos.Column-1)
	if !ok {
		return 0, 0, false
	}
	return line, col + 1, true
}

func (a *analyzer) addAt(rule string, idx file.Idx, msg string) {
	if line, col, ok := a.at(idx); ok {
		a.add(rule, line, col, msg)
	}
}

func (a *analyzer) loadSourceMap(js string) {
	const marker = "//# sourceMappingURL=data:application/json;base64,"
	i := strings.LastIndex(js, marker)
	if i < 0 {
		return
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(js[i+len(marker):]))
	if err != nil {
		return
	}
	if sm, err := sourcemap.Parse(a.path+".map", raw); err == nil {
		a.sm = sm
	}
}

var (
	emailRe  = regexp.MustCompile(`\b[\w.+-]+@[\w-]+(\.[\w-]+)*\.[A-Za-z]{2,}\b`)
	secretRe = []*regexp.Regexp{
		regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),
		regexp.MustCompile(`\bxox[abpors]-[A-Za-z0-9-]{10,}`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
	}
	longTokenRe  = regexp.MustCompile(`^[A-Za-z0-9_\-+/=]{24,}$`)
	secretNameRe = regexp.MustCompile(`(?i)(secret|token|passw(or)?d|pwd|api[_-]?key|private[_-]?key|credential)`)
)

// walk visits every AST node; stack holds the ancestors.
func (a *analyzer) walk(v reflect.Value, stack []ast.Node) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if n, ok := v.Interface().(ast.Node); ok && v.Kind() == reflect.Pointer {
			a.visit(n, stack)
			stack = append(stack, n)
		}
		a.walk(v.Elem(), stack)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				a.walk(v.Field(i), stack)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			a.walk(v.Index(i), stack)
		}
	}
}

func parent(stack []ast.Node, n int) ast.Node {
	if len(stack) < n {
		return nil
	}
	return stack[len(stack)-n]
}

func (a *analyzer) visit(n ast.Node, stack []ast.Node) {
	switch x := n.(type) {
	case *ast.CallExpression:
		a.checkCall(x.Callee, x.ArgumentList, x.LeftParenthesis)
	case *ast.NewExpression:
		if id, ok := x.Callee.(*ast.Identifier); ok && id.Name == "Function" {
			a.addAt(RuleNoEval, x.New, "dynamic code execution ('new Function') is prohibited")
		}
	case *ast.DotExpression:
		if x.Identifier.Name == "constructor" {
			if d, ok := x.Left.(*ast.DotExpression); ok && d.Identifier.Name == "constructor" {
				a.addAt(RuleNoEval, x.Identifier.Idx, "'constructor.constructor' reaches the Function constructor: prohibited")
			}
		}
	case *ast.Identifier:
		a.checkIdentifier(x, stack)
	case *ast.StringLiteral:
		a.checkString(string(x.Value), x.Idx, stack)
	case *ast.TemplateLiteral:
		for _, e := range x.Elements {
			a.checkString(string(e.Parsed), e.Idx, stack)
		}
	case *ast.NumberLiteral:
		a.checkNumber(x, stack)
	case *ast.AssignExpression:
		// module.exports = ... / exports.default = ...: esbuild's output
		if d, ok := x.Left.(*ast.DotExpression); ok {
			if id, ok := d.Left.(*ast.Identifier); ok && ((id.Name == "module" && d.Identifier.Name == "exports") || (id.Name == "exports" && d.Identifier.Name == "default")) {
				// esbuild's own `module.exports = __toCommonJS(...)` is not
				// the agent's export.
				if c, ok := x.Right.(*ast.CallExpression); !ok || !isCallTo(c, "__toCommonJS") {
					a.hasDefault = true
				}
			}
		}
	case *ast.PropertyKeyed:
		// __export(target, { default: () => ... }) is esbuild's ESM default.
		if k, ok := x.Key.(*ast.StringLiteral); ok && k.Value == "default" {
			for i := len(stack) - 1; i >= 0 && i >= len(stack)-3; i-- {
				if c, ok := stack[i].(*ast.CallExpression); ok && isCallTo(c, "__export") {
					a.hasDefault = true
				}
			}
		}
	}
}

func (a *analyzer) checkCall(callee ast.Expression, args []ast.Expression, at file.Idx) {
	switch c := callee.(type) {
	case *ast.Identifier:
		switch c.Name {
		case "eval":
			a.addAt(RuleNoEval, c.Idx, "dynamic code execution ('eval') is prohibited")
		case "Function":
			a.addAt(RuleNoEval, c.Idx, "dynamic code execution ('Function') is prohibited")
		case "setTimeout", "setInterval":
			if len(args) > 0 {
				if _, ok := args[0].(*ast.StringLiteral); ok {
					a.addAt(RuleNoEval, c.Idx, c.Name.String()+" with a string evaluates code: pass a function")
				}
			}
		case "require":
			a.checkRequire(c, args)
		}
	case *ast.DotExpression:
		if c.Identifier.Name == "constructor" {
			a.addAt(RuleNoEval, c.Identifier.Idx, "calling '.constructor(...)' can reach the Function constructor: prohibited")
		}
	}
}

func (a *analyzer) checkRequire(c *ast.Identifier, args []ast.Expression) {
	if len(args) != 1 {
		a.addAt(RuleRequire, c.Idx, "require takes one string literal")
		return
	}
	lit, ok := args[0].(*ast.StringLiteral)
	if !ok {
		a.addAt(RuleRequire, c.Idx, "require with a non-literal argument is prohibited: name the module")
		return
	}
	name := string(lit.Value)
	if strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") {
		return
	}
	for _, m := range a.cfg.AllowedImports {
		if m == name {
			return
		}
	}
	msg := fmt.Sprintf("module %q is not allowed (sandbox.allowed_imports: %s)", name, strings.Join(a.cfg.AllowedImports, ", "))
	for _, p := range sandbox.EmbeddedPackages() {
		if p.Name == name {
			msg += fmt.Sprintf("; %s@%s is built in: add it to sandbox.allowed_imports", p.Name, p.Version)
		}
	}
	a.addAt(RuleRequire, lit.Idx, msg)
}

func (a *analyzer) checkIdentifier(id *ast.Identifier, stack []ast.Node) {
	if id.Name != "process" {
		return
	}
	// x.process is a property, not the global.
	if d, ok := parent(stack, 1).(*ast.DotExpression); ok && &d.Identifier == id {
		return
	}
	if d1, ok := parent(stack, 1).(*ast.DotExpression); ok && d1.Identifier.Name == "env" {
		if d2, ok := parent(stack, 2).(*ast.DotExpression); ok && d2.Left == ast.Expression(d1) && d2.Identifier.Name == "NODE_ENV" {
			return
		}
	}
	a.addAt(RuleNoProcess, id.Idx, "direct access to 'process' is prohibited (only process.env.NODE_ENV): take inputs from args")
}

func (a *analyzer) checkString(s string, idx file.Idx, stack []ast.Node) {
	if s == "" {
		return
	}
	if emailRe.MatchString(s) {
		a.addAt(RuleNoEmail, idx, "hardcoded e-mail address: pass it as an argument")
	}
	for _, re := range secretRe {
		if re.MatchString(s) {
			a.addAt(RuleNoSecrets, idx, "hardcoded secret (key or token pattern): pass it as an argument or configure it on the host")
			return
		}
	}
	if longTokenRe.MatchString(s) && hasDigitAndLetter(s) {
		a.addAt(RuleNoSecrets, idx, "potential hardcoded ID or secret (long token): pass it as an argument")
		return
	}
	// const apiKey = "..." / { password: "..." }; the key itself
	// ({ "secrets": [...] }) is a name, not a value.
	if kv, ok := parent(stack, 1).(*ast.PropertyKeyed); ok && isLiteralAt(kv.Key, idx) {
		return
	}
	if name := boundName(stack); name != "" && secretNameRe.MatchString(name) && len(s) >= 6 && !strings.Contains(s, " ") {
		a.addAt(RuleNoSecrets, idx, fmt.Sprintf("%q looks like a hardcoded credential: pass it as an argument", name))
	}
}

// isLiteralAt reports whether e is the string literal at idx.
func isLiteralAt(e ast.Expression, idx file.Idx) bool {
	l, ok := e.(*ast.StringLiteral)
	return ok && l.Idx == idx
}

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'z' }) >= 0
}

// boundName is the variable or property a literal is assigned to.
func boundName(stack []ast.Node) string {
	switch p := parent(stack, 1).(type) {
	case *ast.Binding:
		if id, ok := p.Target.(*ast.Identifier); ok {
			return string(id.Name)
		}
	case *ast.PropertyKeyed:
		if k, ok := p.Key.(*ast.StringLiteral); ok {
			return string(k.Value)
		}
	case *ast.AssignExpression:
		if d, ok := p.Left.(*ast.DotExpression); ok {
			return string(d.Identifier.Name)
		}
		if id, ok := p.Left.(*ast.Identifier); ok {
			return string(id.Name)
		}
	}
	return ""
}

func (a *analyzer) checkNumber(n *ast.NumberLiteral, stack []ast.Node) {
	v, ok := toFloat(n.Value)
	if !ok {
		return
	}
	if u, isUnary := parent(stack, 1).(*ast.UnaryExpression); isUnary && u.Operator.String() == "-" {
		v = -v
	}
	if allowedNumbers[v] {
		return
	}
	// xs[3] indexes data the tool already holds, and (n = 10) => is a
	// parameter the caller can override: neither hides a value in logic.
	if b, ok := parent(stack, 1).(*ast.BracketExpression); ok && b.Member == ast.Expression(n) {
		return
	}
	if b, ok := parent(stack, 1).(*ast.Binding); ok && b.Initializer == ast.Expression(n) {
		if _, ok := parent(stack, 2).(*ast.ParameterList); ok {
			return
		}
	}
	// A named constant (const TAX_RATE = 0.2) is the abstraction the
	// standard asks for; so is a default parameter value.
	for i := len(stack); i > 0; i-- {
		switch p := stack[i-1].(type) {
		case *ast.LexicalDeclaration:
			if p.Token.String() == "const" && len(stack) >= 2 && isTopLevel(stack[:i-1]) {
				return
			}
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
			i = 0
		}
	}
	a.addAt(RuleMagicNumbers, n.Idx, fmt.Sprintf("magic number %s: take it from args or name it as a top-level constant", n.Literal))
}

// isTopLevel reports whether the ancestors hold no function.
func isTopLevel(stack []ast.Node) bool {
	for _, n := range stack {
		switch n.(type) {
		case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral, *ast.ClassLiteral:
			return false
		}
	}
	return true
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	if s, ok := v.(fmt.Stringer); ok {
		f, err := strconv.ParseFloat(s.String(), 64)
		return f, err == nil
	}
	return 0, false
}

// checkShape checks the default export and the description. The rule is
// the registry's own (registry.ExtractDescription): a tool passes exactly
// when find_tools will show a description for it, never when its only
// JSDoc sits on an inner helper.
func (a *analyzer) checkShape() {
	if !a.hasDefault {
		a.add(RuleDefault, 1, 1, "no default export: add `export default function (args) { ... }`")
	}
	if registry.ExtractDescription([]byte(a.src)) == registry.NoDescription {
		a.add(RuleJSDoc, 1, 1, "no tool description: start the file with /** what the tool does */ (or put it right before the default export) so find_tools can find it")
	}
}

func isCallTo(c *ast.CallExpression, name string) bool {
	id, ok := c.Callee.(*ast.Identifier)
	return ok && string(id.Name) == name
}
