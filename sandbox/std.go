package sandbox

import (
	"github.com/dop251/goja"
)

// StdModule is the built-in helper library tools may require.
const StdModule = "@tgp/std"

// stdJS is @tgp/std: small pure helpers so tools need no npm package for
// the everyday things (the 8 standards favour map/filter/reduce).
const stdJS = `(function (module) {
  var exports = module.exports;
  exports.sum = function (xs) { return xs.reduce(function (a, b) { return a + b; }, 0); };
  exports.mean = function (xs) { return xs.length ? exports.sum(xs) / xs.length : 0; };
  exports.groupBy = function (xs, key) { return xs.reduce(function (acc, x) { var k = typeof key === "function" ? key(x) : x[key]; (acc[k] = acc[k] || []).push(x); return acc; }, {}); };
  exports.pick = function (o, keys) { return keys.reduce(function (acc, k) { if (k in o) acc[k] = o[k]; return acc; }, {}); };
  exports.omit = function (o, keys) { return Object.keys(o).filter(function (k) { return keys.indexOf(k) < 0; }).reduce(function (acc, k) { acc[k] = o[k]; return acc; }, {}); };
  exports.chunk = function (xs, n) { var out = []; for (var i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n)); return out; };
  exports.uniq = function (xs) { return xs.filter(function (x, i) { return xs.indexOf(x) === i; }); };
  exports.sortBy = function (xs, key) { return xs.slice().sort(function (a, b) { var x = typeof key === "function" ? key(a) : a[key], y = typeof key === "function" ? key(b) : b[key]; return x < y ? -1 : x > y ? 1 : 0; }); };
  exports.round = function (x, digits) { var f = Math.pow(10, digits || 0); return Math.round(x * f) / f; };
  exports.clamp = function (x, lo, hi) { return Math.min(hi, Math.max(lo, x)); };
  exports.slugify = function (s) { return String(s).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, ""); };
  exports.sleep = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };
})`

var stdProgram = goja.MustCompile("@tgp/std", stdJS, true)

func (ex *execution) std() (goja.Value, error) {
	if m, ok := ex.modules[StdModule]; ok {
		return m.Get("exports"), nil
	}
	fn, err := ex.vm.RunProgram(stdProgram)
	if err != nil {
		return nil, err
	}
	call, _ := goja.AssertFunction(fn)
	module := ex.vm.NewObject()
	_ = module.Set("exports", ex.vm.NewObject())
	if _, err := call(goja.Undefined(), module); err != nil {
		return nil, err
	}
	ex.modules[StdModule] = module
	return module.Get("exports"), nil
}
