package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tgp-go/tgp/sandbox/hostapi"
)

// HostFunc is hostapi.HostFunc: a host builds and declares one without
// linking the sandbox.
type HostFunc = hostapi.HostFunc

// ErrHostFunc is hostapi.ErrHostFunc.
var ErrHostFunc = hostapi.ErrHostFunc

// NewHostFunc is hostapi.NewHostFunc.
func NewHostFunc[A, R any](name string, fn func(ctx context.Context, arg A) (R, error)) (HostFunc, error) {
	return hostapi.NewHostFunc(name, fn)
}

// Declarations is hostapi.Declarations.
func Declarations(fs []HostFunc) string { return hostapi.Declarations(fs) }

// WithHostFuncs makes fs callable from tools as tgp.<name>. A name given
// twice or taken by the sandbox makes the runner refuse every run with
// that error (NewHostFunc checks names first).
func WithHostFuncs(fs ...HostFunc) Option {
	return func(r *Runner) {
		for _, f := range fs {
			if err := hostapi.CheckName(f.Name); err != nil && r.hostErr == nil {
				r.hostErr = err
			}
			if _, dup := r.hostFuncs[f.Name]; dup && r.hostErr == nil {
				r.hostErr = fmt.Errorf("sandbox: host function %q registered twice", f.Name)
			}
			if r.hostFuncs == nil {
				r.hostFuncs = map[string]HostFunc{}
			}
			r.hostFuncs[f.Name] = f
		}
	}
}

// hostFuncNames lists the registered names, sorted.
func (r *Runner) hostFuncNames() []string {
	names := make([]string, 0, len(r.hostFuncs))
	for n := range r.hostFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// callHost runs a registered host function; a panic in it is an error,
// never a crash of the kernel.
func (r *Runner) callHost(ctx context.Context, name string, arg json.RawMessage) (out json.RawMessage, err error) {
	f, ok := r.hostFuncs[name]
	if !ok {
		return nil, fmt.Errorf("tgp.%s is not a host function of this kernel (registered: %s)", name, orNone(r.hostFuncNames()))
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("host function panicked: %v", p)
		}
	}()
	if len(bytes.TrimSpace(arg)) == 0 {
		arg = json.RawMessage("null")
	}
	return f.Call(ctx, arg)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
