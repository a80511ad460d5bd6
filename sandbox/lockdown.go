package sandbox

// maxAmplify caps what one native call may allocate: 16 Mi elements or
// characters.
const maxAmplify = 1 << 24

// lockdownJS runs first in every Runtime. It removes code generation from
// strings and caps the built-ins that can allocate without bound in one
// native call (which Runtime.Interrupt cannot stop).
const lockdownJS = `(function () {
  "use strict";
  var g = globalThis, MAX = 16777216;
  var FnProto = Object.getPrototypeOf(function () {});
  var blocked = function () { throw new g.EvalError("Security Violation: code generation from strings is disabled"); };
  blocked.prototype = FnProto;
  var protos = [FnProto, Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {})];
  for (var i = 0; i < protos.length; i++) {
    Object.defineProperty(protos[i], "constructor", { value: blocked, writable: false, configurable: false, enumerable: false });
  }
  Object.defineProperty(g, "Function", { value: blocked, writable: false, configurable: false, enumerable: false });
  delete g.eval;
  Object.defineProperty(g, "eval", { get: blocked, configurable: false });
  var def = function (obj, name, fn) { Object.defineProperty(obj, name, { value: fn, writable: true, configurable: true, enumerable: false }); };
  var tooBig = function (what) { throw new g.RangeError(what + ": result would exceed " + MAX + " elements (sandbox limit)"); };
  var repeat = String.prototype.repeat;
  def(String.prototype, "repeat", function (n) { if (String(this).length * Number(n) > MAX) tooBig("String.prototype.repeat"); return repeat.call(this, n); });
  var padStart = String.prototype.padStart, padEnd = String.prototype.padEnd;
  def(String.prototype, "padStart", function (n, s) { if (Number(n) > MAX) tooBig("String.prototype.padStart"); return padStart.call(this, n, s); });
  def(String.prototype, "padEnd", function (n, s) { if (Number(n) > MAX) tooBig("String.prototype.padEnd"); return padEnd.call(this, n, s); });
  var fill = Array.prototype.fill;
  def(Array.prototype, "fill", function () { if (this.length > MAX) tooBig("Array.prototype.fill"); return fill.apply(this, arguments); });
  var join = Array.prototype.join;
  def(Array.prototype, "join", function (sep) {
    var n = this.length, est = 0;
    for (var i = 0; i < n && i < 1024; i++) { var v = this[i]; est += (v == null ? 0 : String(v).length) + 1; }
    if (n > 1024) est = est / 1024 * n;
    if (est > MAX * 4) tooBig("Array.prototype.join");
    return join.call(this, sep);
  });
  var NativeArray = Array;
  var checkLen = function (args) { if (args.length === 1 && typeof args[0] === "number" && args[0] > MAX) tooBig("Array"); };
  g.Array = new Proxy(NativeArray, {
    apply: function (t, self, args) { checkLen(args); return Reflect.apply(t, self, args); },
    construct: function (t, args, nt) { checkLen(args); return Reflect.construct(t, args, nt === g.Array ? t : nt); }
  });
})();`
