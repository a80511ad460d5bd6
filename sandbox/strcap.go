package sandbox

import (
	"reflect"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// String concatenation is a VM operation in goja (`a + b`, `a += b`,
// template literals), not a call the lockdown can wrap, and it allocates
// its whole result at once: `s = s + s` goes from half the budget to one
// and a half times it in a single step, which no watchdog can stop (it
// can only see the heap after the fact, and on a loaded machine late).
// So every program the sandbox compiles is rewritten before goja compiles
// it: each `+`, `+=` and untagged template literal becomes a call to a
// host function that charges a large result to the run's budget before
// it is allocated, as the buffer wrappers do. The AST keeps its source
// positions, so stack traces and source maps are unchanged.
//
// The helpers are globals whose names no source can spell (they contain a
// space), non-writable and non-configurable: a tool can neither shadow
// nor replace them (strict code has no `with`).
const (
	opAdd    = "tgp add"    // a + b
	opTpl    = "tgp tpl"    // `s0${e0}s1...`: (s0, e0, s1, ..., sn)
	opRef    = "tgp ref"    // ref(o, k) keeps (o, k), returns o
	opRefKey = "tgp refkey" // the kept k
	opDeref  = "tgp deref"  // the kept o
	opDerefK = "tgp derefk" // the kept k, and forgets both
	opRefK   = "tgp refk"   // refk(k) keeps k, returns it (super[k] += v)
)

// concatFloor is the result length (UTF-16 units) below which a
// concatenation is not charged: small strings are the common case and
// cost a heap read only once a megabyte of them has been made (charge
// batches them).
const concatFloor = 1 << 12

// compileJS compiles a program with its string concatenations routed
// through the charging helpers.
func compileJS(name, src string) (*goja.Program, error) {
	prg, err := goja.Parse(name, src)
	if err != nil {
		return nil, err
	}
	rw := &concatRewriter{seen: map[uintptr]bool{}}
	rw.visit(reflect.ValueOf(prg))
	return goja.CompileAST(prg, true)
}

var (
	exprType = reflect.TypeOf((*ast.Expression)(nil)).Elem()
	astPkg   = reflect.TypeOf(ast.Program{}).PkgPath()
)

type concatRewriter struct {
	seen map[uintptr]bool
}

// visit walks every AST node reachable from v (the ast package's types
// only), replacing each expression field and slice element bottom-up.
func (rw *concatRewriter) visit(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			rw.visit(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() || v.Type().Elem().PkgPath() != astPkg {
			return
		}
		p := v.Pointer()
		if rw.seen[p] {
			return
		}
		rw.seen[p] = true
		rw.visit(v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			if f.Type() == exprType {
				if !f.IsNil() {
					f.Set(reflect.ValueOf(rw.expr(f.Interface().(ast.Expression))))
				}
				continue
			}
			rw.visit(f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Type() == exprType {
				if !e.IsNil() {
					e.Set(reflect.ValueOf(rw.expr(e.Interface().(ast.Expression))))
				}
				continue
			}
			rw.visit(e)
		}
	}
}

// expr rewrites one expression after its children.
func (rw *concatRewriter) expr(e ast.Expression) ast.Expression {
	rw.visit(reflect.ValueOf(e))
	switch n := e.(type) {
	case *ast.BinaryExpression:
		if n.Operator == token.PLUS {
			return call(opAdd, n.Idx0(), n.Idx1(), n.Left, n.Right)
		}
	case *ast.AssignExpression:
		if n.Operator == token.PLUS {
			return rw.addAssign(n)
		}
	case *ast.TemplateLiteral:
		if n.Tag == nil {
			args := make([]ast.Expression, 0, 2*len(n.Elements))
			for i, el := range n.Elements {
				args = append(args, &ast.StringLiteral{Idx: el.Idx, Literal: el.Literal, Value: el.Parsed})
				if i < len(n.Expressions) {
					args = append(args, n.Expressions[i])
				}
			}
			return call(opTpl, n.Idx0(), n.Idx1(), args...)
		}
	}
	return e
}

// addAssign rewrites `t += v` as `t = add(t, v)`, evaluating t's parts
// once and in their order: a target whose object (and key) are free of
// side effects is repeated; any other goes through ref/deref, which keep
// the object and key between the target's evaluation and the read
// (nothing runs in between, so one slot per run suffices).
func (rw *concatRewriter) addAssign(n *ast.AssignExpression) ast.Expression {
	at, end := n.Idx0(), n.Idx1()
	assign := func(target, read ast.Expression) ast.Expression {
		return &ast.AssignExpression{Operator: token.ASSIGN, Left: target, Right: call(opAdd, at, end, read, n.Right)}
	}
	switch t := n.Left.(type) {
	case *ast.Identifier:
		c := *t
		return assign(t, &c)
	case *ast.DotExpression:
		if pure(t.Left) {
			c := *t
			return assign(t, &c)
		}
		target := &ast.DotExpression{Left: call(opRef, at, end, t.Left), Identifier: t.Identifier}
		return assign(target, &ast.DotExpression{Left: call(opDeref, at, end), Identifier: t.Identifier})
	case *ast.PrivateDotExpression:
		if pure(t.Left) {
			c := *t
			return assign(t, &c)
		}
		target := &ast.PrivateDotExpression{Left: call(opRef, at, end, t.Left), Identifier: t.Identifier}
		return assign(target, &ast.PrivateDotExpression{Left: call(opDeref, at, end), Identifier: t.Identifier})
	case *ast.BracketExpression:
		if pure(t.Left) && pure(t.Member) {
			c := *t
			return assign(t, &c)
		}
		if _, ok := t.Left.(*ast.SuperExpression); ok { // super is no value to pass
			target := &ast.BracketExpression{Left: t.Left, Member: call(opRefK, at, end, t.Member),
				LeftBracket: t.LeftBracket, RightBracket: t.RightBracket}
			return assign(target, &ast.BracketExpression{Left: t.Left, Member: call(opDerefK, at, end),
				LeftBracket: t.LeftBracket, RightBracket: t.RightBracket})
		}
		target := &ast.BracketExpression{Left: call(opRef, at, end, t.Left, t.Member), Member: call(opRefKey, at, end),
			LeftBracket: t.LeftBracket, RightBracket: t.RightBracket}
		return assign(target, &ast.BracketExpression{Left: call(opDeref, at, end), Member: call(opDerefK, at, end),
			LeftBracket: t.LeftBracket, RightBracket: t.RightBracket})
	}
	// Anything else is not a valid target of +=: goja reports it.
	return n
}

// pure says whether evaluating e twice is the same as once.
func pure(e ast.Expression) bool {
	switch e.(type) {
	case *ast.Identifier, *ast.ThisExpression, *ast.SuperExpression, *ast.StringLiteral, *ast.NumberLiteral:
		return true
	}
	return false
}

func call(name string, at, end file.Idx, args ...ast.Expression) *ast.CallExpression {
	return &ast.CallExpression{Callee: &ast.Identifier{Name: unistring.String(name), Idx: at},
		LeftParenthesis: at, ArgumentList: args, RightParenthesis: end - 1}
}

// toPrimitiveJS is ToPrimitive(v, default) for objects, as `+` applies it
// (goja does not export its own).
const toPrimitiveJS = `(function (o) {
  "use strict";
  var isObj = function (v) { return v !== null && (typeof v === "object" || typeof v === "function"); };
  var ex = o[Symbol.toPrimitive];
  if (ex !== undefined && ex !== null) {
    if (typeof ex !== "function") throw new TypeError("Symbol.toPrimitive is not a function");
    var r = ex.call(o, "default");
    if (isObj(r)) throw new TypeError("Cannot convert object to primitive value");
    return r;
  }
  var names = ["valueOf", "toString"];
  for (var i = 0; i < 2; i++) {
    var m = o[names[i]];
    if (typeof m === "function") { var v = m.call(o); if (!isObj(v)) return v; }
  }
  throw new TypeError("Cannot convert object to primitive value");
})`

// plainAddJS is the VM's own `+`, for the operand types that cannot make a
// long string (and for symbols, so the error is the VM's).
const plainAddJS = `(function (a, b) { return a + b; })`

var (
	toPrimitiveProgram = goja.MustCompile("lockdown-toprimitive.js", toPrimitiveJS, true)
	plainAddProgram    = goja.MustCompile("lockdown-add.js", plainAddJS, true)
)

// stringOps is a run's side of the rewritten concatenations.
type stringOps struct {
	ex        *execution
	toPrim    goja.Callable
	plainAdd  goja.Callable
	refObj    goja.Value
	refKey    goja.Value
	int64Type reflect.Type
}

// installStringOps defines the helpers the rewritten programs call.
func (ex *execution) installStringOps() error {
	so := &stringOps{ex: ex, int64Type: reflect.TypeOf(int64(0))}
	for _, p := range []struct {
		prog *goja.Program
		dst  *goja.Callable
	}{{toPrimitiveProgram, &so.toPrim}, {plainAddProgram, &so.plainAdd}} {
		v, err := ex.vm.RunProgram(p.prog)
		if err != nil {
			return err
		}
		*p.dst, _ = goja.AssertFunction(v)
	}
	g := ex.vm.GlobalObject()
	for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
		opAdd: so.add, opTpl: so.template,
		opRef: so.ref, opRefKey: func(goja.FunctionCall) goja.Value { return so.refKey },
		opRefK: func(call goja.FunctionCall) goja.Value {
			so.refKey = call.Argument(0)
			return so.refKey
		},
		opDeref: func(goja.FunctionCall) goja.Value { return so.refObj },
		opDerefK: func(goja.FunctionCall) goja.Value {
			k := so.refKey
			so.refObj, so.refKey = nil, nil
			return k
		},
	} {
		if err := g.DefineDataProperty(name, ex.vm.ToValue(fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

func (so *stringOps) ref(call goja.FunctionCall) goja.Value {
	so.refObj, so.refKey = call.Argument(0), call.Argument(1)
	return so.refObj
}

// add is `a + b` with a long string result charged before it is made.
func (so *stringOps) add(call goja.FunctionCall) goja.Value {
	a, b := call.Argument(0), call.Argument(1)
	// Numbers first: most additions are.
	if ta, tb := a.ExportType(), b.ExportType(); ta == so.int64Type && tb == so.int64Type {
		return so.ex.vm.ToValue(a.ToInteger() + b.ToInteger())
	} else if isNumberType(ta) && isNumberType(tb) {
		return so.ex.vm.ToValue(a.ToFloat() + b.ToFloat())
	}
	if o, ok := a.(*goja.Object); ok {
		a = so.prim(o)
	}
	if o, ok := b.(*goja.Object); ok {
		b = so.prim(o)
	}
	sa, aStr := a.(goja.String)
	sb, bStr := b.(goja.String)
	if !aStr && !bStr || isSymbol(a) || isSymbol(b) {
		return so.callPlain(a, b)
	}
	if !aStr {
		sa = so.str(a)
	}
	if !bStr {
		sb = so.str(b)
	}
	so.charge(sa.Length()+sb.Length(), wide(sa) || wide(sb))
	return sa.Concat(sb)
}

// template is an untagged template literal: the strings and the
// substitutions alternate, each substitution converted with ToString.
func (so *stringOps) template(call goja.FunctionCall) goja.Value {
	parts := make([]goja.String, len(call.Arguments))
	n, w := 0, false
	for i, v := range call.Arguments {
		if isSymbol(v) {
			panic(so.ex.vm.NewTypeError("Cannot convert a Symbol value to a string"))
		}
		s := so.str(v)
		parts[i] = s
		n += s.Length()
		w = w || wide(s)
	}
	so.charge(n, w)
	if len(parts) == 1 {
		return parts[0]
	}
	var b goja.StringBuilder
	if w {
		b.LikelyUnicode(n)
	} else {
		b.Grow(n)
	}
	for _, s := range parts {
		b.WriteString(s)
	}
	return b.String()
}

// str is ToString(v) for a value that is not a symbol.
func (so *stringOps) str(v goja.Value) goja.String {
	if s, ok := v.(goja.String); ok {
		return s
	}
	p := v.ToString()
	if isSymbol(p) { // an object whose ToPrimitive gave a symbol
		panic(so.ex.vm.NewTypeError("Cannot convert a Symbol value to a string"))
	}
	if s, ok := p.(goja.String); ok {
		return s
	}
	return so.ex.vm.ToValue(p.String()).(goja.String)
}

func (so *stringOps) prim(o *goja.Object) goja.Value {
	v, err := so.toPrim(goja.Undefined(), o)
	if err != nil {
		panic(err)
	}
	return v
}

func (so *stringOps) callPlain(a, b goja.Value) goja.Value {
	v, err := so.plainAdd(goja.Undefined(), a, b)
	if err != nil {
		panic(err)
	}
	return v
}

// charge charges a result of n UTF-16 units (one byte each if all ASCII).
func (so *stringOps) charge(n int, wide bool) {
	if n < concatFloor {
		return
	}
	bytes := float64(n)
	if wide {
		bytes *= 2
	}
	so.ex.charge(bytes)
}

func isNumberType(t reflect.Type) bool {
	return t != nil && (t.Kind() == reflect.Int64 || t.Kind() == reflect.Float64)
}

func isSymbol(v goja.Value) bool {
	_, ok := v.(*goja.Symbol)
	return ok
}

// wide says whether s is stored two bytes a character (goja keeps ASCII
// strings as Go strings, others as UTF-16).
func wide(s goja.String) bool {
	return reflect.TypeOf(s).Kind() != reflect.String
}

// jsonQuotedLen is the UTF-8 length of v as JSON.stringify quotes it:
// escapes six bytes for control characters and lone surrogates.
func jsonQuotedLen(v goja.Value) int {
	s, ok := v.(goja.String)
	if !ok {
		return len(v.String())*6 + 2
	}
	n, l := 2, s.Length()
	if !wide(s) {
		str := s.String()
		for i := 0; i < len(str); i++ {
			n += asciiJSONLen(str[i])
		}
		return n
	}
	for i := 0; i < l; i++ {
		c := s.CharAt(i)
		switch {
		case c < 0x80:
			n += asciiJSONLen(byte(c))
		case c < 0x800:
			n += 2
		case c >= 0xD800 && c <= 0xDBFF && i+1 < l && s.CharAt(i+1) >= 0xDC00 && s.CharAt(i+1) <= 0xDFFF:
			n += 4
			i++
		case c >= 0xD800 && c <= 0xDFFF:
			n += 6
		default:
			n += 3
		}
	}
	return n
}

func asciiJSONLen(c byte) int {
	switch {
	case c == '"' || c == '\\' || c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
		return 2
	case c < 0x20:
		return 6
	}
	return 1
}
