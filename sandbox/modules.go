package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/dop251/goja"
)

// loadModule runs a compiled module (once per execution) and returns its
// module object. The module is cached before it runs, so require cycles
// see the partial exports, as in Node.
func (ex *execution) loadModule(c *Compiled) (*goja.Object, error) {
	if m, ok := ex.modules[c.Path]; ok {
		return m, nil
	}
	vm := ex.vm
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", c.Path)
	ex.modules[c.Path] = module
	fnVal, err := vm.RunProgram(c.prog)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(fnVal)
	if !ok {
		return nil, fmt.Errorf("module %s did not compile to a function", c.Path)
	}
	dir := path.Dir(c.Path)
	require := vm.ToValue(func(call goja.FunctionCall) goja.Value { return ex.require(dir, call.Argument(0)) })
	if _, err := fn(goja.Undefined(), exports, require, module, vm.ToValue(c.Path), vm.ToValue(dir)); err != nil {
		return nil, err
	}
	return module, nil
}

// nodeBuiltins are refused by name with a clear message.
var nodeBuiltins = map[string]bool{"fs": true, "child_process": true, "net": true, "http": true, "https": true,
	"os": true, "path": true, "process": true, "vm": true, "worker_threads": true, "crypto": true, "dgram": true,
	"cluster": true, "module": true, "tls": true, "dns": true, "stream": true, "util": true, "buffer": true}

func (ex *execution) require(dir string, spec goja.Value) goja.Value {
	vm := ex.vm
	if goja.IsUndefined(spec) || goja.IsNull(spec) {
		panic(vm.NewTypeError("require: a module name is required"))
	}
	name := spec.String()
	if strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") || strings.HasPrefix(name, "/") {
		return ex.requireRelative(dir, name)
	}
	bare := strings.TrimPrefix(name, "node:")
	if !ex.r.imports[name] {
		if nodeBuiltins[bare] {
			ex.throwModule("module not available: %q (Node built-ins are not available in the sandbox; use the tgp bridge)", name)
		}
		ex.throwModule("module not available: %q (not in sandbox.allowed_imports)", name)
	}
	if name == StdModule {
		m, err := ex.std()
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return m
	}
	return ex.requireNodeModule(name)
}

func (ex *execution) throwModule(format string, args ...any) {
	o := ex.vm.NewTypeError(fmt.Sprintf(format, args...))
	_ = o.Set("name", "ModuleNotFound")
	_ = o.Set("code", "MODULE_NOT_FOUND")
	panic(o)
}

func (ex *execution) requireRelative(dir, name string) goja.Value {
	if ex.req.FS == nil {
		ex.throwModule("cannot require %q: no filesystem", name)
	}
	base := path.Clean(path.Join(dir, name))
	if strings.HasPrefix(name, "/") || base == ".." || strings.HasPrefix(base, "../") {
		ex.throwSecurity("require('%s') leaves the root", name)
	}
	candidates := []string{base + ".ts", base + ".js", base + "/index.ts", base + "/index.js"}
	if strings.HasSuffix(base, ".ts") || strings.HasSuffix(base, ".js") || strings.HasSuffix(base, ".json") {
		candidates = append([]string{base}, candidates...)
	}
	for _, c := range candidates {
		if m, ok := ex.modules[c]; ok {
			return m.Get("exports")
		}
		src, err := ex.req.FS.ReadFile(c)
		if err != nil {
			if isViolation(err) {
				ex.throwSecurity("require('%s'): %v", name, err)
			}
			continue
		}
		if strings.HasSuffix(c, ".json") {
			var v goja.Value
			parse, _ := goja.AssertFunction(ex.vm.Get("JSON").(*goja.Object).Get("parse"))
			v, err := parse(goja.Undefined(), ex.vm.ToValue(string(src)))
			if err != nil {
				panic(err)
			}
			return v
		}
		comp, err := ex.r.Compile(c, src)
		if err != nil {
			var ce *CompileError
			if errors.As(err, &ce) {
				panic(ex.vm.NewTypeError(ce.Error()))
			}
			panic(ex.vm.NewGoError(err))
		}
		m, err := ex.loadModule(comp)
		if err != nil {
			panic(err)
		}
		return m.Get("exports")
	}
	ex.throwModule("module not available: %q (looked for %s)", name, strings.Join(candidates, ", "))
	return nil
}

// isViolation: the FS refused the path (the jail). FS implementations say
// so with an error matching fs.ErrPermission (vfs.ViolationError and the
// tools' sandbox_violation do); across the worker protocol the reply's
// denied flag carries it.
func isViolation(err error) bool {
	return errors.Is(err, fs.ErrPermission)
}

// requireNodeModule loads an allowed package from node_modules/ in the FS,
// bundled by esbuild (see bundleNodeModule), once per execution.
func (ex *execution) requireNodeModule(name string) goja.Value {
	if m, ok := ex.modules["node_modules/"+name]; ok {
		return m.Get("exports")
	}
	// A package built into the binary (zod, date-fns) comes first: its
	// version is pinned by the host, not by what a toolbox committed.
	c, embedded, err := ex.embeddedModule(name)
	if !embedded {
		c, err = ex.bundleNodeModule(name)
	}
	if err != nil {
		ex.throwModule("module not available: %q (%v)", name, err)
	}
	m, err := ex.loadModule(c)
	if err != nil {
		panic(err)
	}
	return m.Get("exports")
}
