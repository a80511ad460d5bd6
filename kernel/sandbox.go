package kernel

import (
	"context"
	"fmt"

	"github.com/tgp-go/tgp/sandbox/hostapi"
)

// WithSandboxFunc makes fn callable from the tools the kernel runs (the
// sandbox toolset), as
// tgp.<name>(arg) (the TypeScript original's sandboxAPI): the argument
// crosses as JSON decoded into A (unknown fields and wrong types are the
// tool's exception, naming the field), the result R as JSON, in both
// sandbox isolation modes (in process isolation fn still runs here, in
// the kernel: the worker calls it over its pipe). An error fn returns
// reaches the tool as an exception with its message; a panic too. The
// function is declared in tools/tgp-env.d.ts with types made from A and
// R (Scaffold, tgp init). A name that is not an identifier, or one of the
// sandbox's own (read_file, fetch, exec_sql...), or given twice, makes New
// fail.
func WithSandboxFunc[A, R any](name string, fn func(ctx context.Context, arg A) (R, error)) Option {
	f, err := hostapi.NewHostFunc(name, fn)
	return func(o *options) {
		if err != nil {
			o.errs = append(o.errs, fmt.Errorf("kernel.WithSandboxFunc: %w", err))
			return
		}
		for _, have := range o.hostFuncs {
			if have.Name == name {
				o.errs = append(o.errs, fmt.Errorf("kernel.WithSandboxFunc: %q given twice", name))
				return
			}
		}
		o.hostFuncs = append(o.hostFuncs, f)
	}
}
