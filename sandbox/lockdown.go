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
  var charge = g.__tgp_charge, jsonLen = g.__tgp_jsonlen;
  delete g.__tgp_charge;
  delete g.__tgp_jsonlen;
  if (typeof charge !== "function") charge = function () {};
  if (typeof jsonLen !== "function") jsonLen = function (s) { return s.length * 6 + 2; };
  // A tally for a result built piece by piece in one native call (join,
  // JSON.stringify, replace): add(n) before each piece goes in; each time
  // the total passes the next power of two, the buffer's next growth
  // (twice that, and the final copy) is charged before it happens.
  var tally = function () {
    var t = { total: 0, next: 1 << 20 };
    t.add = function (n) {
      t.total += n;
      while (t.total >= t.next) { charge(t.next * 4); t.next *= 2; }
    };
    return t;
  };
  var tooBig = function (what) { throw new g.RangeError(what + ": result would exceed " + MAX + " elements (sandbox limit)"); };
  // Strings take up to two bytes a character, array slots sixteen: each
  // amplifier is charged (host function, defined below) before it runs.
  // A string's only limit is the run's memory budget (memory_limit),
  // however it is made (these, the rewritten + and template literals);
  // the element cap is for arrays.
  var repeat = String.prototype.repeat;
  def(String.prototype, "repeat", function (n) {
    var est = String(this).length * Number(n);
    if (isFinite(est)) charge(est * 2); // Infinity, NaN, negative: the native RangeError
    return repeat.call(this, n);
  });
  var padStart = String.prototype.padStart, padEnd = String.prototype.padEnd;
  var padCharge = function (self, n, s) {
    if (self == null || (s !== undefined && String(s) === "")) return;
    if (Number(n) > String(self).length) charge(Number(n) * 2);
  };
  def(String.prototype, "padStart", function (n, s) { padCharge(this, n, s); return padStart.call(this, n, s); });
  def(String.prototype, "padEnd", function (n, s) { padCharge(this, n, s); return padEnd.call(this, n, s); });
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
  // join: every element is converted once, here, and its length tallied
  // before the native join sees the strings (the same string many times
  // over is a long result from a small array).
  // An array that holds itself joins as "" inside itself, as the native
  // join has it.
  var join = Array.prototype.join, NativeArr = Array, joining = [];
  def(Array.prototype, "join", function (sep) {
    var o = Object(this), n = Math.min(Math.max(Math.floor(Number(o.length)) || 0, 0), 9007199254740991);
    var sp = sep === undefined ? "," : ` + "`${sep}`" + `;
    if (n === 0 || joining.indexOf(o) >= 0) return "";
    joining.push(o);
    try { return joinParts(o, n, sp); } finally { joining.pop(); }
  });
  var joinParts = function (o, n, sp) {
    var t = tally();
    t.add((n - 1) * sp.length * 2);
    charge(n * 16); // the converted copy
    var parts = new NativeArr(n);
    for (var i = 0; i < n; i++) {
      var v = o[i];
      var p = v == null ? "" : typeof v === "string" ? v : ` + "`${v}`" + `;
      t.add(p.length * 2);
      parts[i] = p;
    }
    return join.call(parts, sp);
  };
  // toLocaleString joins natively what each element's toLocaleString
  // gives: converted here, joined by the join above.
  def(Array.prototype, "toLocaleString", function () {
    var o = Object(this), n = Math.min(Math.max(Math.floor(Number(o.length)) || 0, 0), 9007199254740991);
    if (n === 0 || joining.indexOf(o) >= 0) return "";
    var parts = new NativeArr(n);
    joining.push(o);
    try {
      for (var i = 0; i < n; i++) { var v = o[i]; parts[i] = v == null ? "" : ` + "`${v.toLocaleString()}`" + `; }
    } finally { joining.pop(); }
    return parts.join(",");
  });
  // concat: the parts converted once (ToString, as concat does) and their
  // total charged first.
  var concat = String.prototype.concat;
  def(String.prototype, "concat", function () {
    if (this == null) throw new g.TypeError("String.prototype.concat called on null or undefined");
    var parts = new NativeArr(arguments.length), self = ` + "`${this}`" + `, n = self.length;
    for (var i = 0; i < arguments.length; i++) { parts[i] = ` + "`${arguments[i]}`" + `; n += parts[i].length; }
    if (n > 4096) charge(n * 2);
    return concat.apply(self, parts);
  });
  // String.raw: as the spec has it, with the result tallied as it grows.
  def(String, "raw", function (template) {
    var raw = Object(Object(template).raw);
    var n = Math.min(Math.max(Math.floor(Number(raw.length)) || 0, 0), 9007199254740991);
    if (n === 0) return "";
    var t = tally(), out = [];
    for (var i = 0; ; i++) {
      var seg = ` + "`${raw[i]}`" + `;
      t.add(seg.length * 2); out.push(seg);
      if (i + 1 >= n) break;
      if (i + 1 < arguments.length) { var sub = ` + "`${arguments[i + 1]}`" + `; t.add(sub.length * 2); out.push(sub); }
    }
    return join.call(out, "");
  });
  // replace, replaceAll: a replacer function's results are tallied as the
  // native call collects them; a replacement string's bound (each match
  // replaced by it, with $& $' and $` + "`" + ` as long as the whole string) is charged
  // first, with the matches counted when the bound is large.
  var countMatches = function (str, pat, all) {
    if (!all) return 1;
    if (typeof pat === "string" || !(pat instanceof RegExp)) {
      var p = ` + "`${pat}`" + `, c = 0, at = 0;
      if (p.length === 0) return str.length + 1;
      while ((at = str.indexOf(p, at)) >= 0) { c++; at += p.length; }
      return c;
    }
    var re = new RegExp(pat.source, pat.flags.indexOf("g") < 0 ? pat.flags + "g" : pat.flags), m, k = 0;
    while ((m = re.exec(str)) !== null) { k++; if (m[0].length === 0) re.lastIndex++; }
    return k;
  };
  var wrapReplace = function (name) {
    var native = String.prototype[name];
    if (!native) return;
    def(String.prototype, name, function (pat, rep) {
      if (this == null || (pat != null && typeof pat[Symbol.replace] === "function" && !(pat instanceof RegExp))) return native.apply(this, arguments);
      var str = ` + "`${this}`" + `;
      var all = name === "replaceAll" || (pat instanceof RegExp && pat.flags.indexOf("g") >= 0);
      if (typeof rep === "function") {
        var t = tally(), fn = rep;
        t.add(str.length * 2);
        return native.call(str, pat, function () {
          var r = ` + "`${fn.apply(undefined, arguments)}`" + `;
          t.add(r.length * 2);
          return r;
        });
      }
      var rs = ` + "`${rep}`" + `, per = rs.length, at = 0;
      while ((at = rs.indexOf("$", at)) >= 0 && at + 1 < rs.length) {
        var c = rs[at + 1];
        if (c === "&" || c === "'" || c === "` + "`" + `") per += str.length;
        at += 2;
      }
      var bound = str.length + (all ? str.length + 1 : 1) * per;
      if (bound > 1048576 && per > 1) bound = str.length + countMatches(str, pat, all) * per;
      if (bound > 4096) charge(bound * 2);
      return native.call(str, pat, rs);
    });
  };
  wrapReplace("replace");
  wrapReplace("replaceAll");
  // The conversions whose result is a bounded multiple of their input:
  // charged at that multiple (bytes per input character) for long input.
  var charged = function (obj, name, perChar, strOf) {
    var native = obj[name];
    if (typeof native !== "function") return;
    def(obj, name, function (x) {
      var str = strOf(this, x);
      if (str !== null && str.length > 4096) charge(str.length * perChar);
      return native.apply(this, arguments);
    });
  };
  var self = function (t) { return typeof t === "string" ? t : null; };
  var arg = function (t, x) { return typeof x === "string" ? x : null; };
  ["toUpperCase", "toLowerCase", "toLocaleUpperCase", "toLocaleLowerCase", "normalize"].forEach(function (m) {
    charged(String.prototype, m, 6, self);
  });
  charged(g, "encodeURI", 9, arg);
  charged(g, "encodeURIComponent", 9, arg);
  charged(g, "escape", 6, arg);
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
  // A typed array's join writes each element (up to 24 characters) and
  // the separator between them.
  ["join", "toLocaleString"].forEach(function (m) {
    var f = TA[m];
    if (f) def(TA, m, function (sep) {
      var n = this.length, sl = m === "join" && sep !== undefined ? ` + "`${sep}`" + `.length : 1;
      var per = this.BYTES_PER_ELEMENT <= 2 ? 6 : 24;
      if (n > 0) charge((n * per + (n - 1) * sl) * 2);
      return f.apply(this, arguments);
    });
  });
  // URLSearchParams' text percent-encodes every name and value (up to 9
  // bytes a character), however many times the same string was added.
  if (typeof g.URLSearchParams === "function") {
    var usp = g.URLSearchParams.prototype, uspToString = usp.toString;
    def(usp, "toString", function () {
      var n = 0;
      this.forEach(function (v, k) { n += v.length + k.length + 2; });
      charge(n * 9);
      return uspToString.call(this);
    });
  }
  ["slice", "map", "filter"].forEach(function (m) {
    var f = TA[m];
    if (f) def(TA, m, function () { charge(this.byteLength); return f.apply(this, arguments); });
  });
  // JSON.parse builds its whole result in one native call: charge a
  // generous estimate of what the values take (16 bytes per input byte).
  // JSON.stringify builds its text in one native call, and a value that
  // holds the same string (or object) many times is a long text from a
  // small value: a replacer tallies every key and value (their exact
  // escaped length) before the native call writes them, composed with
  // the tool's own replacer; a property list is applied by the tally too
  // (each object as a copy of the listed keys, in the list's order).
  var stringify = JSON.stringify;
  def(JSON, "stringify", function (value, replacer, space) {
    var user = typeof replacer === "function" ? replacer : null, list = null;
    if (!user && Array.isArray(replacer)) {
      list = [];
      for (var i = 0; i < replacer.length; i++) {
        var e = replacer[i], k;
        if (typeof e === "string") k = e;
        else if (typeof e === "number" || e instanceof Number || e instanceof String) k = ` + "`${e}`" + `;
        else continue;
        if (list.indexOf(k) < 0) list.push(k);
      }
    }
    var sp = space, gap = 0;
    if (sp instanceof Number) sp = Number(sp); else if (sp instanceof String) sp = String(sp);
    if (typeof sp === "number") gap = Math.max(0, Math.min(10, Math.floor(sp) || 0));
    else if (typeof sp === "string") gap = Math.min(10, sp.length);
    var depth = gap > 0 ? new Map() : null, t = tally();
    var tallied = function (key, v) {
      if (user) v = user.call(this, key, v);
      var arr = Array.isArray(this), d = depth ? (depth.get(this) || 0) : 0;
      t.add((arr ? 1 : jsonLen(key) + 2) + (gap ? 1 + gap * d : 0));
      if (typeof v === "string") t.add(jsonLen(v));
      else if (typeof v === "number") t.add(24);
      else if (v instanceof String) t.add(jsonLen(` + "`${v}`" + `));
      else if (v !== null && typeof v === "object" && !(v instanceof Number) && !(v instanceof Boolean)) {
        if (list && !Array.isArray(v)) {
          var c = {};
          for (var j = 0; j < list.length; j++) Object.defineProperty(c, list[j], { value: v[list[j]], enumerable: true, writable: true, configurable: true });
          v = c;
        }
        t.add(2 + (gap ? 1 + gap * d : 0));
        if (depth) depth.set(v, d + 1);
      } else t.add(5);
      return v;
    };
    return stringify.call(JSON, value, tallied, space);
  });
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
