package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stringAmplifiers make k copies of the string s in one step, each the
// way a tool can: the VM's operators and template literals, and the
// built-ins that build a string in one native call.
var stringAmplifiers = []struct {
	name string
	step func(k int) string // JS that assigns the grown string to s
}{
	{"plus", func(k int) string { return "s = " + strings.TrimSuffix(strings.Repeat("s + ", k), " + ") }},
	{"plus-assign", func(k int) string {
		return "{ const t = s; for (let j = 1; j < " + strconv.Itoa(k) + "; j++) s += t; }"
	}},
	{"member-plus-assign", func(k int) string {
		return "{ const t = box[0].v; for (let j = 1; j < " + strconv.Itoa(k) + "; j++) [box][0][0].v += t; s = box[0].v; }"
	}},
	{"template", func(k int) string { return "s = `" + strings.Repeat("${s}", k) + "`" }},
	{"concat", func(k int) string {
		return "s = s.concat(" + strings.TrimSuffix(strings.Repeat("s, ", k-1), ", ") + ")"
	}},
	{"repeat", func(k int) string { return "s = s.repeat(" + strconv.Itoa(k) + ")" }},
	{"padEnd", func(k int) string { return "s = s.padEnd(s.length * " + strconv.Itoa(k) + ", s)" }},
	{"padStart", func(k int) string { return "s = s.padStart(s.length * " + strconv.Itoa(k) + ", s)" }},
	{"join", func(k int) string { return "s = new Array(" + strconv.Itoa(k) + ").fill(s).join('')" }},
	{"JSON.stringify", func(k int) string { return "s = JSON.stringify(new Array(" + strconv.Itoa(k) + ").fill(s))" }},
	{"replaceAll", func(k int) string {
		return "s = '#'.repeat(" + strconv.Itoa(k) + ").replaceAll('#', s)"
	}},
	{"replace fn", func(k int) string { return "s = '#'.repeat(" + strconv.Itoa(k) + ").replace(/#/g, () => s)" }},
	{"toLocaleString", func(k int) string { return "s = new Array(" + strconv.Itoa(k) + ").fill(s).toLocaleString()" }},
	{"typed join", func(k int) string { return "s = new Uint8Array(" + strconv.Itoa(k+1) + ").join(s)" }},
	{"URLSearchParams", func(k int) string {
		return "{ const u = new URLSearchParams(); for (let j = 0; j < " + strconv.Itoa(k) + "; j++) u.append('a', s); s = u.toString(); }"
	}},
	{"encodeURIComponent", func(int) string { return "s = encodeURIComponent(s + ' '.repeat(s.length))" }},
	{"String.raw", func(k int) string {
		return "s = String.raw({ raw: new Array(" + strconv.Itoa(k) + ").fill(s) }" + strings.Repeat(", ''", k-1) + ")"
	}},
}

// stringDoublingTool generates a tool that grows a string through the
// given amplifiers in turn until it is far past any budget.
func stringDoublingTool(rng *rand.Rand, amps []int) (string, string) {
	seeds := []string{"x", "é", "\\u0001", "ab"}
	seed := seeds[rng.Intn(len(seeds))]
	start := 1 + rng.Intn(4096)
	var b strings.Builder
	fmt.Fprintf(&b, "export default () => {\n  let s = '%s'.repeat(%d);\n  const box: any[] = [{ v: '' }];\n", seed, start)
	b.WriteString("  for (let i = 0; i < 64; i++) {\n    box[0].v = s;\n")
	var names []string
	for i, a := range amps {
		k := 2 + rng.Intn(3)
		fmt.Fprintf(&b, "    if (i %% %d === %d) %s;\n", len(amps), i, stringAmplifiers[a].step(k))
		names = append(names, fmt.Sprintf("%s×%d", stringAmplifiers[a].name, k))
	}
	b.WriteString("  }\n  return s.length;\n};\n")
	return b.String(), fmt.Sprintf("seed %q×%d, %s", seed, start, strings.Join(names, " then "))
}

// TestStringAmplifiersHoldTheMemoryCap: a string grown by doubling (or
// tripling, quadrupling) through any of the ways a tool can, mixed, ends
// in memory_limit, and the worker's peak resident set (its rusage, as
// the kernel counts it) stays within memory_mb plus 96 MB for the
// runtime. Each amplifier leads one case; the rest mix them at random.
// The cases come from a seeded generator (TGP_STRCAP_SEED to explore).
//
// The workers are started by a child process that does nothing else: Go
// starts a process with CLONE_VM, so the parent's own high-water mark at
// that moment is counted in the child's maxrss (this test binary's, after
// other tests or under -race, is well above the bound).
func TestStringAmplifiersHoldTheMemoryCap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker per case")
	}
	if os.Getenv("TGP_STRCAP_CHILD") == "1" {
		stringAmplifierCases(t)
		return
	}
	child := os.Args[0]
	if raceBuild {
		// The race detector's shadow memory is part of the resident set
		// (and workers get no rlimits): measure the binary users run.
		child = nonRaceTestBinary(t)
	}
	cmd := osexec.Command(child, "-test.run=^TestStringAmplifiersHoldTheMemoryCap$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TGP_STRCAP_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	const limitMB, runtimeMB = 128, 96
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		i := strings.Index(line, "STRCAP ")
		if i < 0 {
			continue
		}
		var res struct {
			Case                 int
			Desc, Kind, Msg, Src string
			RSS                  int64 // MB
		}
		if err := json.Unmarshal([]byte(line[i+len("STRCAP "):]), &res); err != nil {
			t.Fatalf("child output %q: %v", line, err)
		}
		n++
		t.Run(strconv.Itoa(res.Case), func(t *testing.T) {
			t.Logf("%s: worker peak RSS %d MB", res.Desc, res.RSS)
			if res.Kind != KindMemoryLimit {
				t.Fatalf("want %s, got %s: %s\n%s", KindMemoryLimit, res.Kind, res.Msg, res.Src)
			}
			if res.RSS == 0 {
				t.Fatal("no worker peak RSS measured")
			}
			if res.RSS > limitMB+runtimeMB {
				t.Fatalf("worker peak RSS %d MB, above memory_mb %d + %d MB (%s)\n%s", res.RSS, limitMB, runtimeMB, res.Msg, res.Src)
			}
		})
	}
	if want := len(stringAmplifiers) + 4; n != want {
		t.Fatalf("child reported %d cases, want %d:\n%s", n, want, out)
	}
}

// stringAmplifierCases runs the generated cases (in the child) and prints
// each outcome with its worker's peak RSS.
func stringAmplifierCases(t *testing.T) {
	seed := int64(42)
	if v := os.Getenv("TGP_STRCAP_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	for c := 0; c < len(stringAmplifiers)+4; c++ {
		var amps []int
		if c < len(stringAmplifiers) {
			amps = []int{c}
		} else {
			for n := 2 + rng.Intn(3); n > 0; n-- {
				amps = append(amps, rng.Intn(len(stringAmplifiers)))
			}
		}
		src, desc := stringDoublingTool(rng, amps)
		r := New(WithIsolation(IsolationProcess), WithWorkerCommand([]string{os.Args[0], WorkerSubcommand}),
			WithWorkers(1), WithMemoryLimitMB(128), WithTimeout(2*time.Minute))
		out := exec(t, r, newFS(t, map[string]string{"tools/grow.ts": src}), "tools/grow.ts", nil)
		_ = r.Close()
		r.pool.live.Wait()
		kind, msg := "success", ""
		if out.Error != nil {
			kind, msg = out.Error.Kind, out.Error.Message
		}
		raw, _ := json.Marshal(map[string]any{"Case": c, "Desc": desc, "Kind": kind, "Msg": msg, "Src": src, "RSS": r.pool.peakRSS.Load() >> 10})
		fmt.Printf("STRCAP %s\n", raw)
	}
}

// TestConcatRewriteKeepsSemantics: the rewritten +, += and template
// literals give what the VM's own do (checked against Node), for numbers,
// BigInt, objects with valueOf/toString, Dates, -0, member and private
// targets evaluated once, and symbols.
func TestConcatRewriteKeepsSemantics(t *testing.T) {
	src := "class P { #s = 'a'; bump(o: any) { [o][0].#s += 'b'; this.#s += 'c'; return this.#s; } }\n" +
		"export default () => { const o: any = { a: 'x', n: 1 }; const k = ['a']; let i = 0; o[k[i++]] += 'y'; o.a += 1; o.n += 2;\n" +
		"const d = new Date(0); const v = { valueOf() { return 5; }, toString() { return 'T'; } };\n" +
		"let s = 'q'; s += s; const p = new P(); let sym = ''; try { sym = Symbol() + ''; } catch (e) { sym = String(e); }\n" +
		"return [o.a, o.n, i, 1 + 2, 0.5 + 0.25, 1n + 2n + '', 'a' + null + undefined + true, typeof (d + 1), v + 1, `${v}`, `x${1}y${'z'}`, `${[1,2]}`, s, p.bump(p), 1 / (-0 + -0), [] + {}, 2**53 + 2**53, sym].join('|'); }"
	out := exec(t, New(), newFS(t, map[string]string{"tools/s.ts": src}), "tools/s.ts", nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	want := "xy1|3|1|3|0.75|3|anullundefinedtrue|string|6|T|x1yz|1,2|qq|abc|-Infinity|[object Object]|18014398509481984|TypeError: Cannot convert a Symbol value to a string"
	if out.Result != want {
		t.Fatalf("got  %q\nwant %q", out.Result, want)
	}
}

// TestMoreStringWrappersKeepSemantics: super[k] += v (whose object
// cannot be passed to a helper), Array and typed-array toLocaleString and
// join, and URLSearchParams' text, against Node.
func TestMoreStringWrappersKeepSemantics(t *testing.T) {
	src := `class A { get x() { return this._x || "a"; } set x(v) { this._x = v; } }
class B extends A { m(k) { super[k()] += "b"; super.x += "c"; return this._x; } }
const u = new URLSearchParams(); u.append("a b", "é&"); u.append("c", "1");
export default () => [new B().m(() => "x"), [1, null, 2.5, "s", [3, 4]].toLocaleString(), new Uint8Array([1, 2, 300]).join("-"),
  new Float64Array([1.5, -0]).join(), new Int16Array([7, -8]).toLocaleString(), u.toString(), String(u)].join("|");
`
	out := exec(t, New(), newFS(t, map[string]string{"tools/m.js": src}), "tools/m.js", nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	if want := "abc|1,,2.5,s,3,4|1-2-44|1.5,0|7,-8|a+b=%C3%A9%26&c=1|a+b=%C3%A9%26&c=1"; out.Result != want {
		t.Fatalf("got  %q\nwant %q", out.Result, want)
	}
}

// TestStringWrappersKeepSemantics: the charging wrappers of join, concat,
// String.raw, replace, replaceAll and JSON.stringify (with replacer
// functions, property lists and indentation) give what Node gives.
func TestStringWrappersKeepSemantics(t *testing.T) {
	src := "let RESULT: any;\n" + stringWrappersJS + "\nexport default () => RESULT;\n"
	out := exec(t, New(), newFS(t, map[string]string{"tools/w.ts": src}), "tools/w.ts", nil)
	if !out.Success {
		t.Fatalf("%+v", out.Error)
	}
	if out.Result != stringWrappersWant {
		t.Fatalf("got:\n%s\nwant:\n%s", out.Result, stringWrappersWant)
	}
}

const stringWrappersJS = `const o = { b: 2, a: [1, "x\u0001\"", { c: null, d: undefined, e: () => 1 }], toJSONx: 1, n: new Number(3), s: new String("q"), dt: new Date(0) };
const out = [
  JSON.stringify(o), JSON.stringify(o, null, 2), JSON.stringify(o, ["a", "b", "c"], "\t"), JSON.stringify(o, (k, v) => typeof v === "number" ? v + 1 : v),
  JSON.stringify("é\ud800"), JSON.stringify(undefined), JSON.stringify([undefined, function () {}]), JSON.stringify({ toJSON() { return { z: 1 }; } }),
  [1, null, undefined, "a", [2, 3], { toString() { return "T"; } }].join("-"), [].join(), [1, 2].join(), Array.prototype.join.call({ length: 3, 0: "a", 2: "c" }, "+"),
  "a".concat(1, null, [2, 3]), String.raw` + "`" + `a\n${1}b${2}` + "`" + `, String.raw({ raw: ["x", "y", "z"] }, 1), String.raw({ raw: "abc" }, "-", "+", "*"),
  "aXbXc".replace("X", "$&$&"), "aXbXc".replaceAll("X", "[$` + "`" + `|$']"), "aXbXc".replace(/x/gi, (m, i) => m + i), "aaa".replace(/a/g, "$$"), "abc".replace(/(?<l>b)/, "<$<l>>"),
  "xyz".replaceAll(/y/g, "Y"), [1, [2, [3]]].toString(), String([1, 2]),
];
try { "a".replaceAll(/a/, "b"); } catch (e) { out.push(e.constructor.name); }
try { "".concat(Symbol()); } catch (e) { out.push(e.constructor.name); }
try { JSON.stringify(1n); } catch (e) { out.push(e.constructor.name); }
const cyc = [1]; cyc.push(cyc);
try { out.push(cyc.join(",")); } catch (e) { out.push(e.constructor.name); }
try { const c2 = {}; c2.c = c2; JSON.stringify(c2); } catch (e) { out.push(e.constructor.name); }
out.push(["aßc".toUpperCase(), "ABC".toLowerCase(), "é".normalize("NFD").length, encodeURIComponent("a b/é"), encodeURI("a b/é?x=1"), escape("é@ "), "İ".toLocaleLowerCase().length, String.prototype.toUpperCase.call(12)].join("|"));
RESULT = out.join("\n");
`

// stringWrappersWant is Node 20's output for stringWrappersJS.
const stringWrappersWant = `{"b":2,"a":[1,"x\u0001\"",{"c":null}],"toJSONx":1,"n":3,"s":"q","dt":"1970-01-01T00:00:00.000Z"}
{
  "b": 2,
  "a": [
    1,
    "x\u0001\"",
    {
      "c": null
    }
  ],
  "toJSONx": 1,
  "n": 3,
  "s": "q",
  "dt": "1970-01-01T00:00:00.000Z"
}
{
	"a": [
		1,
		"x\u0001\"",
		{
			"c": null
		}
	],
	"b": 2
}
{"b":3,"a":[2,"x\u0001\"",{"c":null}],"toJSONx":2,"n":3,"s":"q","dt":"1970-01-01T00:00:00.000Z"}
"é\ud800"

[null,null]
{"z":1}
1---a-2,3-T

1,2
a++c
a1null2,3
a\n1b2
x1yz
a-b+c
aXXbXc
a[a|bXc]b[aXb|c]c
aX1bX3c
$$$
a<b>c
xYz
1,2,3
1,2
TypeError
TypeError
TypeError
1,
TypeError
ASSC|abc|2|a%20b%2F%C3%A9|a%20b/%C3%A9?x=1|%E9@%20|2|12`

// TestDiedOutOfMemoryBehindALongDump: a worker the kernel stopped at its
// data limit prints the runtime's "fatal error: out of memory" first and
// then a goroutine dump far longer than the stderr tail: the run still
// ends in memory_limit, not as an unexplained exit (as it did when only
// the dump's end was kept).
func TestDiedOutOfMemoryBehindALongDump(t *testing.T) {
	p := newPool(New(WithMemoryLimitMB(64)))
	w := &worker{cmd: &osexec.Cmd{}, exited: make(chan struct{}), stderr: &tail{max: 4096}}
	_, _ = w.stderr.Write([]byte("fatal error: out of memory\n\ngoroutine 1 gp=0x1 m=0 mp=0x2 [running]:\n"))
	for i := 0; i < 200; i++ {
		_, _ = fmt.Fprintf(w.stderr, "runtime.gopark(0x%x?, 0x2?, 0x8?)\n\t/usr/local/go/src/runtime/proc.go:%d +0xce\n", i, 400+i)
	}
	close(w.exited)
	out, reuse := p.died(w, context.Background())
	if reuse || out.Error == nil || out.Error.Kind != KindMemoryLimit {
		t.Fatalf("want memory_limit, got %+v", out.Error)
	}
}
