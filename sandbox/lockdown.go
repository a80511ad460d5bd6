package sandbox

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
  // The host's charge(bytes): refuses (memory_limit) an allocation that
  // would not fit in what is left of the run's budget.
  var charge = g.__tgp_charge;
  delete g.__tgp_charge;
  if (typeof charge !== "function") charge = function () {};
  var tooBig = function (what) { throw new g.RangeError(what + ": result would exceed " + MAX + " elements (sandbox limit)"); };
  // Strings take up to two bytes a character, array slots sixteen: each
  // amplifier is charged (host function, defined below) before it runs.
  var repeat = String.prototype.repeat;
  def(String.prototype, "repeat", function (n) {
    var est = String(this).length * Number(n);
    if (est > MAX) tooBig("String.prototype.repeat");
    charge(est * 2);
    return repeat.call(this, n);
  });
  var padStart = String.prototype.padStart, padEnd = String.prototype.padEnd;
  def(String.prototype, "padStart", function (n, s) { if (Number(n) > MAX) tooBig("String.prototype.padStart"); charge(Number(n) * 2); return padStart.call(this, n, s); });
  def(String.prototype, "padEnd", function (n, s) { if (Number(n) > MAX) tooBig("String.prototype.padEnd"); charge(Number(n) * 2); return padEnd.call(this, n, s); });
  var split = String.prototype.split;
  def(String.prototype, "split", function (sep, lim) {
    var str = String(this), n = str.length;
    // Each piece is a string value (about 48 bytes with its slot): a
    // huge string split finely is a huge array built in one native call.
    if (n > 65536 && lim === undefined) {
      if (typeof sep === "string" && sep.length > 0) {
        var count = 1, at = 0;
        while (count < 4194304 && (at = str.indexOf(sep, at)) >= 0) { count++; at += sep.length; }
        charge(count * 48);
      } else if (sep === "") {
        charge(n * 48);
      }
    }
    return split.apply(this, arguments);
  });
  var fill = Array.prototype.fill;
  def(Array.prototype, "fill", function () {
    var n = this.length;
    if (n > MAX) tooBig("Array.prototype.fill");
    // A hole at the end means the slots do not exist yet: fill makes them
    // one by one, growing the slice (the old copy and the new one are both
    // live at the last growth, about twice the slots).
    if (n > 0 && !((n - 1) in this)) charge(n * 32);
    return fill.apply(this, arguments);
  });
  var join = Array.prototype.join;
  def(Array.prototype, "join", function (sep) {
    var n = this.length, est = 0;
    for (var i = 0; i < n && i < 1024; i++) { var v = this[i]; est += (v == null ? 0 : String(v).length) + 1; }
    if (n > 1024) est = est / 1024 * n;
    if (est > MAX * 4) tooBig("Array.prototype.join");
    charge(est * 2);
    return join.call(this, sep);
  });
  var from = Array.from;
  def(Array, "from", function (src) {
    if (src != null && typeof src === "object" && typeof src[Symbol.iterator] !== "function") {
      var n = Number(src.length);
      if (n > MAX) tooBig("Array.from");
      if (n > 0) charge(n * 32); // grown slot by slot, as fill
    }
    return from.apply(this, arguments);
  });
  // Buffers: every ArrayBuffer and typed-array backing store is charged to
  // the run's memory budget (host function) before it is allocated, so a
  // hostile allocation fails deterministically instead of after the fact.
  var num = function (v) { var n = Number(v); return isFinite(n) && n > 0 ? Math.floor(n) : 0; };
  // A plain function, not a Proxy: goja's instanceof refuses a Proxy, and
  // sharing the native prototype keeps instanceof, subclassing and the
  // static members working.
  var wrapCtor = function (name, bytesOf) {
    var C = g[name];
    if (typeof C !== "function") return;
    var W = function () {
      if (new.target === undefined) throw new g.TypeError("Constructor " + name + " requires 'new'");
      charge(bytesOf(arguments));
      return Reflect.construct(C, arguments, new.target);
    };
    Object.getOwnPropertyNames(C).forEach(function (k) {
      if (k === "prototype" || k === "length" || k === "name" || k === "caller" || k === "arguments") return;
      try { Object.defineProperty(W, k, Object.getOwnPropertyDescriptor(C, k)); } catch (e) {}
    });
    Object.setPrototypeOf(W, Object.getPrototypeOf(C));
    Object.defineProperty(W, "prototype", { value: C.prototype, writable: false, configurable: false, enumerable: false });
    Object.defineProperty(W, "name", { value: name, configurable: true });
    Object.defineProperty(W, "length", { value: C.length, configurable: true });
    Object.defineProperty(g, name, { value: W, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(C.prototype, "constructor", { value: W, writable: true, configurable: true, enumerable: false });
  };
  var NativeAB = g.ArrayBuffer, NativeSAB = g.SharedArrayBuffer;
  wrapCtor("ArrayBuffer", function (a) { return num(a[0]); });
  wrapCtor("SharedArrayBuffer", function (a) { return num(a[0]); });
  var abSlice = ArrayBuffer.prototype.slice;
  if (abSlice) def(ArrayBuffer.prototype, "slice", function (b, e) {
    var len = this.byteLength, s = b === undefined ? 0 : Number(b), en = e === undefined ? len : Number(e);
    if (s < 0) s = Math.max(len + s, 0); if (en < 0) en = Math.max(len + en, 0);
    charge(Math.max(Math.min(en, len) - Math.min(s, len), 0));
    return abSlice.call(this, b, e);
  });
  var typed = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
    "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
  var lengthOf = function (v) {
    if (v === null || typeof v !== "object") return num(v);
    if (v instanceof NativeAB) return 0; // a view: shares the buffer
    if (typeof NativeSAB === "function" && v instanceof NativeSAB) return 0;
    return num(v.length);
  };
  for (var ti = 0; ti < typed.length; ti++) {
    (function (name) {
      var C = g[name];
      if (typeof C !== "function") return;
      var per = C.BYTES_PER_ELEMENT || 8;
      wrapCtor(name, function (a) { return lengthOf(a[0]) * per; });
      var from = C.from, of = C.of;
      if (from) def(g[name], "from", function (src) { charge(lengthOf(src) * per); return from.apply(this === g[name] ? C : this, arguments); });
      if (of) def(g[name], "of", function () { charge(arguments.length * per); return of.apply(this === g[name] ? C : this, arguments); });
    })(typed[ti]);
  }
  var TA = Object.getPrototypeOf(Int8Array.prototype);
  ["slice", "map", "filter"].forEach(function (m) {
    var f = TA[m];
    if (f) def(TA, m, function () { charge(this.byteLength); return f.apply(this, arguments); });
  });
  // JSON.parse builds its whole result in one native call: charge a
  // generous estimate of what the values take (16 bytes per input byte).
  var parse = JSON.parse;
  def(JSON, "parse", function (text) { charge(String(text).length * 16); return parse.apply(JSON, arguments); });
  // Array(n) with a huge n: refused. A plain function sharing the native
  // prototype, not a Proxy: goja's instanceof throws on a Proxy, and
  // "x instanceof Array" is everywhere (zod's parser among others).
  var NativeArray = Array;
  var checkLen = function (args) { if (args.length === 1 && typeof args[0] === "number" && args[0] > MAX) tooBig("Array"); };
  var A = function Array() {
    checkLen(arguments);
    return Reflect.construct(NativeArray, arguments, new.target === undefined || new.target === A ? NativeArray : new.target);
  };
  Reflect.ownKeys(NativeArray).forEach(function (k) {
    if (k === "prototype" || k === "length" || k === "name" || k === "caller" || k === "arguments") return;
    try { Object.defineProperty(A, k, Object.getOwnPropertyDescriptor(NativeArray, k)); } catch (e) {}
  });
  Object.defineProperty(A, "prototype", { value: NativeArray.prototype, writable: false, configurable: false, enumerable: false });
  Object.defineProperty(A, "length", { value: 1, configurable: true });
  Object.defineProperty(NativeArray.prototype, "constructor", { value: A, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(g, "Array", { value: A, writable: true, configurable: true, enumerable: false });
})();`
