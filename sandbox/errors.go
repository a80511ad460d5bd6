package sandbox

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja"
)

// toExecError classifies what stopped a run.
func (ex *execution) toExecError(err error) *ExecError {
	var ee *ExecError
	if errors.As(err, &ee) {
		return ee
	}
	ex.intrMu.Lock()
	intr := ex.interrupt
	ex.intrMu.Unlock()
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if i, ok := ie.Value().(interruption); ok {
			return &ExecError{Kind: i.kind, Message: i.msg}
		}
		if intr != nil {
			return &ExecError{Kind: intr.kind, Message: intr.msg}
		}
		return &ExecError{Kind: KindTimeout, Message: "execution interrupted"}
	}
	if intr != nil {
		// The interrupt landed while native code ran; whatever error
		// surfaced, the cause is the interrupt.
		return &ExecError{Kind: intr.kind, Message: intr.msg}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &ExecError{Kind: KindStackOverflow, Message: "Maximum call stack size exceeded (unbounded recursion?)", Stack: so.Error()}
	}
	var exc *goja.Exception
	if errors.As(err, &exc) {
		e := ex.fromValue(exc.Value())
		e.Stack = exc.String()
		for _, f := range exc.Stack() {
			pos := f.Position()
			if pos.Line > 0 && pos.Filename != "" && !strings.HasPrefix(pos.Filename, "lockdown") {
				e.Path, e.Line, e.Column = pos.Filename, pos.Line, pos.Column
				break
			}
		}
		ex.explainMissingMember(e)
		return e
	}
	var rj rejection
	if errors.As(err, &rj) {
		e := ex.fromValue(rj.v)
		if o, ok := rj.v.(*goja.Object); ok {
			if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
				e.Stack = st.String()
			}
		}
		return e
	}
	return &ExecError{Kind: KindRuntime, Message: err.Error()}
}

// fromValue classifies a thrown JS value by its name.
func (ex *execution) fromValue(v goja.Value) *ExecError {
	e := &ExecError{Kind: KindRuntime, Message: describe(v)}
	o, ok := v.(*goja.Object)
	if !ok {
		return e
	}
	name := ""
	if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
		name = n.String()
	}
	msg := ""
	if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
		msg = m.String()
	}
	switch {
	case name == "SecurityViolation" || strings.HasPrefix(msg, "Security Violation"):
		e.Kind = KindSecurity
	case name == "PermissionDenied":
		e.Kind = KindPermissionDenied
	case name == "SecretUnavailable":
		e.Kind = KindSecretUnavailable
	case name == "ModuleNotFound":
		e.Kind = KindModuleNotFound
	case name == "RangeError" && strings.Contains(msg, "sandbox limit"):
		e.Kind = KindResourceLimit
	case name == "RangeError" && strings.Contains(msg, "call stack"):
		e.Kind = KindStackOverflow
	}
	return e
}

var noMember = regexp.MustCompile(`^TypeError: Object has no member '([A-Za-z_][A-Za-z0-9_]*)'$`)

// explainMissingMember names the refusal when a tool called a tgp member
// that is neither the sandbox's nor a host function the kernel registered
// (goja only says the object has no such member).
func (ex *execution) explainMissingMember(e *ExecError) {
	m := noMember.FindStringSubmatch(e.Message)
	if m == nil {
		return
	}
	src := ex.req.Source
	if e.Path != ex.req.Path || src == nil {
		if ex.req.FS == nil {
			return
		}
		b, err := ex.req.FS.ReadFile(e.Path)
		if err != nil {
			return
		}
		src = b
	}
	if !regexp.MustCompile(`\btgp\s*\.\s*` + m[1] + `\b`).Match(src) {
		return
	}
	e.Message = fmt.Sprintf("TypeError: tgp.%s is not a function of this sandbox: the host registered no such host function (host functions: %s)",
		m[1], orNone(ex.r.hostFuncNames()))
}
