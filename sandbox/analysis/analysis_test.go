package analysis

import (
	"strings"
	"testing"

	"github.com/tgp-go/tgp/registry"
)

func has(rep Report, rule string, line int) bool {
	for _, f := range append(append([]Finding{}, rep.Errors...), rep.Warnings...) {
		if f.Rule == rule && (line == 0 || f.Line == line) {
			return true
		}
	}
	return false
}

const clean = `/** Adds two numbers. */
const SCALE = 10;
export default function add(args: { a: number; b: number }): number {
  const xs: number[] = [args.a, args.b];
  return xs.reduce((s, x) => s + x, 0) * SCALE;
}
`

func TestCleanToolIsValid(t *testing.T) {
	rep := Analyze("tools/add.ts", []byte(clean), Config{})
	if !rep.Valid || len(rep.Errors) != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("%+v", rep)
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		name, src, rule string
		line            int
		bad             bool
	}{
		{"any annotation", "/** d */\nexport default (x: any) => x;\n", RuleNoAny, 2, true},
		{"as any", "/** d */\nexport default (x: number) => (x as any).y;\n", RuleNoAny, 2, true},
		{"generic any", "/** d */\nconst m: Map<string, any> = new Map();\nexport default () => m;\n", RuleNoAny, 2, true},
		{"any in string and comment", "/** d */\n// x: any\nexport default () => 'y: any';\n", RuleNoAny, 0, false},
		{"eval", "/** d */\nexport default () => eval('1');\n", RuleNoEval, 2, true},
		{"new Function", "/** d */\nexport default () => new Function('return 1');\n", RuleNoEval, 2, true},
		{"constructor call", "/** d */\nexport default () => (() => 0).constructor('return this')();\n", RuleNoEval, 2, true},
		{"string setTimeout", "/** d */\nexport default () => setTimeout('x()', 0);\n", RuleNoEval, 2, true},
		{"process.env", "/** d */\nexport default () => process.env.HOME;\n", RuleNoProcess, 2, true},
		{"NODE_ENV allowed", "/** d */\nexport default () => process.env.NODE_ENV;\n", RuleNoProcess, 0, false},
		{"obj.process allowed", "/** d */\nexport default (a: { process: number }) => a.process;\n", RuleNoProcess, 0, false},
		{"aws key", "/** d */\nexport default () => 'AKIAIOSFODNN7EXAMPLE';\n", RuleNoSecrets, 2, true},
		{"named password", "/** d */\nconst password = 'hunter22';\nexport default () => password;\n", RuleNoSecrets, 2, true},
		{"email", "/** d */\nexport default () => 'ops@example.com';\n", RuleNoEmail, 2, true},
		{"magic number", "/** d */\nexport default (a: { x: number }) => a.x * 0.07;\n", RuleMagicNumbers, 2, true},
		{"allowed numbers", "/** d */\nexport default (a: { x: number }) => a.x * 100 + 2 - 1;\n", RuleMagicNumbers, 0, false},
		{"named constant", "/** d */\nconst RATE = 0.07;\nexport default (a: { x: number }) => a.x * RATE;\n", RuleMagicNumbers, 0, false},
		{"dynamic require", "/** d */\nexport default (a: { m: string }) => require(a.m);\n", RuleRequire, 2, true},
		{"fs require", "/** d */\nconst fs = require('fs');\nexport default () => fs;\n", RuleRequire, 2, true},
		{"relative require", "/** d */\nconst m = require('./lib/math');\nexport default () => m;\n", RuleRequire, 0, false},
		{"no default export", "/** d */\nexport const x = 1;\n", RuleDefault, 1, true},
		{"any array", "/** d */\nexport default (xs: any[]) => xs;\n", RuleNoAny, 2, true},
		{"angle cast", "/** d */\nconst v = <any>JSON.parse('1');\nexport default () => v;\n", RuleNoAny, 2, true},
		{"identifier named anyThing", "/** d */\nconst anyThing = 1;\nexport default () => anyThing;\n", RuleNoAny, 0, false},
		{"Function call", "/** d */\nexport default () => Function('return 1')();\n", RuleNoEval, 2, true},
		{"constructor.constructor", "/** d */\nconst f = ({}).constructor.constructor;\nexport default () => f;\n", RuleNoEval, 2, true},
		{"setTimeout with function", "/** d */\nexport default () => setTimeout(() => 0, 0);\n", RuleNoEval, 0, false},
		{"bare process", "/** d */\nexport default () => process.exit(1);\n", RuleNoProcess, 2, true},
		{"openai key", "/** d */\nexport default () => 'sk-abcdefghijklmnopqrstuvwx123';\n", RuleNoSecrets, 2, true},
		{"private key", "/** d */\nexport default () => '-----BEGIN RSA PRIVATE KEY-----';\n", RuleNoSecrets, 2, true},
		{"jwt", "/** d */\nexport default () => 'eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f';\n", RuleNoSecrets, 2, true},
		{"secret property", "/** d */\nexport default () => ({ apiKey: 'q8w7e6r5' });\n", RuleNoSecrets, 2, true},
		{"plain prose", "/** d */\nexport default () => 'the token was not found';\n", RuleNoSecrets, 0, false},
		{"email in template", "/** d */\nexport default () => `ops@example.com`;\n", RuleNoEmail, 2, true},
		{"negative magic", "/** d */\nexport default (a: { x: number }) => a.x - -7;\n", RuleMagicNumbers, 2, true},
		{"const inside function is still magic", "/** d */\nexport default (a: { x: number }) => { const r = 0.07; return a.x * r; };\n", RuleMagicNumbers, 2, true},
		{"default param", "/** d */\nexport default (a: { x: number }, scale = 10) => a.x * scale;\n", RuleMagicNumbers, 0, false},
		{"array index", "/** d */\nexport default (a: { xs: number[] }) => a.xs[3];\n", RuleMagicNumbers, 0, false},
		{"allowed bare module", "/** d */\nconst m = require('fs');\nexport default () => m;\n", RuleRequire, 2, true},
		{"module.exports", "/** d */\nmodule.exports = function (a: { x: number }) { return a.x; };\n", RuleDefault, 0, false},
		{"default export function", "/** d */\nexport default function run() { return 1; }\n", RuleDefault, 0, false},
		{"no jsdoc is a warning", "export default () => 1;\n", RuleJSDoc, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := Analyze("tools/t.ts", []byte(c.src), Config{})
			if got := has(rep, c.rule, c.line); got != c.bad && c.rule != RuleJSDoc {
				t.Fatalf("rule %s at line %d: got %v, want %v\n%+v", c.rule, c.line, got, c.bad, rep)
			}
			if c.rule == RuleJSDoc && (!rep.Valid || !has(rep, RuleJSDoc, 1) || len(rep.Warnings) != 1) {
				t.Fatalf("jsdoc should be a warning only: %+v", rep)
			}
			if c.bad == rep.Valid && c.rule != RuleJSDoc {
				t.Fatalf("valid=%v for a bad=%v case: %+v", rep.Valid, c.bad, rep)
			}
		})
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	rep := Analyze("tools/s.ts", []byte("/** d */\nexport default () => {\n  let x = ;\n};\n"), Config{})
	if rep.Valid || rep.Errors[0].Rule != RuleSyntax || rep.Errors[0].Line != 3 {
		t.Fatalf("%+v", rep)
	}
}

func TestRuleConfig(t *testing.T) {
	src := []byte("/** d */\nexport default (a: { x: number }) => a.x * 0.07;\n")
	rep := Analyze("tools/t.ts", src, Config{Rules: map[string]Severity{RuleMagicNumbers: Warning}})
	if !rep.Valid || len(rep.Warnings) != 1 || rep.Warnings[0].Rule != RuleMagicNumbers {
		t.Fatalf("%+v", rep)
	}
	rep = Analyze("tools/t.ts", src, Config{Rules: map[string]Severity{RuleMagicNumbers: Off}})
	if !rep.Valid || len(rep.Warnings) != 0 {
		t.Fatalf("%+v", rep)
	}
	rep = Analyze("tools/t.ts", []byte("/** d */\nexport default () => require('@tgp/std');\n"), Config{AllowedImports: []string{"@tgp/std"}})
	if !rep.Valid {
		t.Fatalf("allowed import refused: %+v", rep)
	}
}

func TestPositionsAreTS(t *testing.T) {
	src := "/** d */\ninterface X {\n  a: number;\n  b: string;\n}\n\nexport default (x: X) => eval(x.b);\n"
	rep := Analyze("tools/p.ts", []byte(src), Config{})
	if len(rep.Errors) != 1 || rep.Errors[0].Line != 7 || rep.Errors[0].Column != strings.Index("export default (x: X) => eval(x.b);", "eval")+1 {
		t.Fatalf("%+v", rep)
	}
}

func FuzzAnalyze(f *testing.F) {
	f.Add(clean)
	f.Add("export default (x: any) => eval(x)")
	f.Add("`${`")
	f.Fuzz(func(t *testing.T, src string) {
		rep := Analyze("tools/f.ts", []byte(src), Config{})
		if rep.Valid != (len(rep.Errors) == 0) || rep.Errors == nil || rep.Warnings == nil {
			t.Fatalf("inconsistent report %+v", rep)
		}
	})
}

// tool30 is a 30-line tool of the kind agents write.
const tool30 = `/**
 * Computes invoice totals with tax and a discount.
 * @param args.items line items
 */
import { round } from './lib/math';

const TAX_RATE = 0.2;
const DISCOUNT_THRESHOLD = 500;
const DISCOUNT = 0.05;
const DEFAULT_CURRENCY = 'EUR';

interface Item {
  name: string;
  price: number;
  qty: number;
}

interface Args {
  items: Item[];
  currency?: string;
}

export default function invoice(args: Args): { total: number; currency: string } {
  const subtotal = args.items.reduce((s, it) => s + it.price * it.qty, 0);
  const discount = subtotal > DISCOUNT_THRESHOLD ? subtotal * DISCOUNT : 0;
  const taxed = (subtotal - discount) * (1 + TAX_RATE);
  const currency = args.currency ?? DEFAULT_CURRENCY;
  const lines = args.items.map((it) => ` + "`${it.name}: ${it.qty} x ${it.price}`" + `);
  return { total: round(taxed, 2), currency, lines: lines.length } as { total: number; currency: string };
}
`

func TestTool30IsValid(t *testing.T) {
	if n := strings.Count(tool30, "\n"); n != 30 {
		t.Fatalf("tool30 has %d lines", n)
	}
	rep := Analyze("tools/invoice.ts", []byte(tool30), Config{})
	if !rep.Valid || len(rep.Warnings) != 0 {
		t.Fatalf("%+v", rep)
	}
}

func TestColumns(t *testing.T) {
	cases := []struct {
		src, rule string
		line, col int
	}{
		{"/** d */\nexport default (a: { x: number }) => a.x * 0.07;\n", RuleMagicNumbers, 2, 44},
		{"/** d */\nexport default (x: any) => x;\n", RuleNoAny, 2, 20},
		{"/** d */\ntype T = { n: number };\n\nexport default (t: T) =>\n    process.cwd();\n", RuleNoProcess, 5, 5},
		{"/** d */\nconst e = 1;\nexport default () => e + 'a@b.io'.length;\n", RuleNoEmail, 3, 26},
	}
	for _, c := range cases {
		rep := Analyze("tools/c.ts", []byte(c.src), Config{})
		found := false
		for _, f := range rep.Errors {
			if f.Rule == c.rule {
				found = true
				if f.Line != c.line || f.Column != c.col || f.Path != "tools/c.ts" {
					t.Errorf("%s: got %s:%d:%d, want %d:%d", c.rule, f.Path, f.Line, f.Column, c.line, c.col)
				}
			}
		}
		if !found {
			t.Errorf("%s: no finding in %+v", c.rule, rep)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	src := []byte(tool30)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if rep := Analyze("tools/invoice.ts", src, Config{}); !rep.Valid {
			b.Fatal(rep)
		}
	}
}

// TestDescriptionRuleIsTheRegistrys: check_tool warns exactly when the
// registry would list the tool as "No description provided." (a JSDoc
// only on an inner helper once passed check_tool and left the tool
// unfindable). Sources are generated from comment placements.
func TestDescriptionRuleIsTheRegistrys(t *testing.T) {
	pieces := []string{
		"/** Adds numbers. */\n",
		"// plain comment\n",
		"/* block comment */\n",
		"/** */\n",
		"function helper() { return 1; }\n",
		"/** Helper docs. */\nfunction inner(n: number) { return n; }\n",
		"const x = 2;\n",
	}
	tail := []string{"export default (a: { n: number }) => a.n;\n", "/** Before export. */\nexport default (a: { n: number }) => a.n;\n"}
	n := 0
	for i := 0; i < 1<<len(pieces); i++ {
		for _, end := range tail {
			var b strings.Builder
			for j, p := range pieces {
				if i&(1<<j) != 0 {
					b.WriteString(p)
				}
			}
			b.WriteString(end)
			src := b.String()
			rep := Analyze("tools/t.ts", []byte(src), Config{})
			noDesc := registry.ExtractDescription([]byte(src)) == registry.NoDescription
			if has(rep, RuleJSDoc, 1) != noDesc {
				t.Fatalf("check_tool jsdoc finding %v, registry description missing %v, for:\n%s", has(rep, RuleJSDoc, 1), noDesc, src)
			}
			n++
		}
	}
	src := "function inner() {\n  /** Helper only. */\n  return 1;\n}\nexport default () => inner();\n"
	if rep := Analyze("tools/t.ts", []byte(src), Config{}); !has(rep, RuleJSDoc, 1) {
		t.Fatalf("a JSDoc on an inner helper must not pass as the tool's description: %+v", rep)
	}
}
