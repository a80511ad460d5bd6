package analysis

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The default export's parameter type is read in the forms tools are
// written in, and args are checked against it with the field named.
func TestParamsCheckArgs(t *testing.T) {
	cases := []struct {
		src   string
		args  string // "" = omitted
		field string // "" = accepted
	}{
		{"export default (a: {x: number; y: number}) => a.x + a.y;", `{"x":1,"y":2}`, ""},
		{"export default (a: {x: number; y: number}) => a.x + a.y;", `{"x":"1","y":2}`, "args.x"},
		{"export default (a: {x: number; y: number}) => a.x + a.y;", `{"x":1}`, "args.y"},
		{"export default (a: {x: number; y: number}) => a.x + a.y;", `{"x":1,"y":2,"z":3}`, "args.z"},
		{"export default (a: {x: number; y: number}) => a.x + a.y;", ``, "args"},
		{"/** Adds. */\nexport default async function add({ x, y }: { x: number, y?: number /* defaults to 0 */ }): Promise<number> { return x + (y ?? 0); }", `{"x":1}`, ""},
		{"export default async function add({ x, y }: { x: number, y?: number }) { return x; }", `{"x":1,"y":null}`, ""},
		{"interface Args { name: string; tags?: string[] }\nexport default function (a: Args) { return a.name; }", `{"name":"n","tags":["a",2]}`, "args.tags[1]"},
		{"type Mode = 'fast' | 'slow';\ntype Args = { mode: Mode; n: number };\nconst run = (a: Args) => a.n;\nexport default run;", `{"mode":"medium","n":1}`, "args.mode"},
		{"type Mode = 'fast' | 'slow';\ntype Args = { mode: Mode; n: number };\nconst run = (a: Args) => a.n;\nexport default run;", `{"mode":"slow","n":1}`, ""},
		{"export default (a: { opts: Record<string, boolean> }) => 1;", `{"opts":{"a":true,"b":"no"}}`, "args.opts.b"},
		{"export default (a: { items: Array<{ id: number }> }) => 1;", `{"items":[{"id":1},{"id":"2"}]}`, "args.items[1].id"},
		{"export default (a: { p: [number, number] }) => 1;", `{"p":[1]}`, "args.p"},
		{"export default (a: { v: string | null }) => 1;", `{"v":null}`, ""},
		{"export default (a?: { x: number }) => 1;", ``, ""},
		{"export default (a: { x: number } = { x: 1 }) => 1;", ``, ""},
		{"export default () => 1;", `{"anything":1}`, ""},
		// Not read: nothing is checked.
		{"export default (a) => a;", `{"x":"1"}`, ""},
		{"import { z } from 'zod';\nconst S = z.object({x: z.number()});\nexport default (a: z.infer<typeof S>) => a.x;", `{"x":"1"}`, ""},
		{"export default (a: { x: number } & { y: number }) => 1;", `{"x":"1"}`, ""},
		{"export default <T,>(a: { x: T }) => 1;", `{"x":"1"}`, ""},
		{"export default (a: { f(): void }) => 1;", `{"x":"1"}`, ""},
		{"import type { Args } from './types';\nexport default (a: Args) => 1;", `{"x":"1"}`, ""},
	}
	for _, c := range cases {
		p, _ := ParamsOf(c.src)
		var args any
		if c.args != "" {
			args = decode(t, c.args)
		}
		err := p.Check(args, c.args != "")
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%q with %s: refused: %v", c.src, c.args, err)
		case c.field != "" && (err == nil || err.Field != c.field):
			t.Errorf("%q with %s: %v, want a refusal of %s", c.src, c.args, err, c.field)
		}
	}
}

func TestParamsSchema(t *testing.T) {
	p, ok := ParamsOf("export default (a: {x: number; y?: 'a' | 'b'; tags: string[]}) => 1;")
	if !ok {
		t.Fatal("not read")
	}
	b, _ := json.Marshal(p.Schema())
	for _, want := range []string{`"additionalProperties":false`, `"required":["tags","x"]`, `"x":{"type":"number"}`, `"anyOf":[{"const":"a"},{"const":"b"}]`, `"items":{"type":"string"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema %s lacks %s", b, want)
		}
	}
	err := p.Check(decode(t, `{"x":"1","tags":[]}`), true)
	if err == nil || err.Error() != `args.x: want a number, got a string "1"` {
		t.Errorf("message: %v", err)
	}
}
