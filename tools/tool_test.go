package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

type sampleArgs struct {
	Path   string `json:"path" jsonschema:"file to read"`
	Limit  int    `json:"limit,omitempty" default:"2000" minimum:"1"`
	Mode   string `json:"mode,omitempty" default:"\"fast\"" enum:"fast,slow"`
	Strict bool   `json:"strict,omitempty"`
	Kind   string `json:"kind,omitempty" pattern:"^[a-z]+$"`
}

func sampleTool(t *testing.T, seen *sampleArgs) *Tool {
	t.Helper()
	return Define(Spec[sampleArgs]{
		Name:        "sample",
		Description: "a sample",
		Annotations: Annotations{ReadOnly: true, Risk: RiskLow},
		Aliases:     map[string]string{"file": "path"},
		Summary:     func(a sampleArgs) string { return "read " + a.Path },
		Validate: func(a sampleArgs) error {
			if strings.HasPrefix(a.Path, "-") {
				return BadArg("path", "path must not start with '-'")
			}
			return nil
		},
		Run: func(ctx context.Context, a sampleArgs) (Result, error) {
			*seen = a
			return Result{Value: strings.Repeat("é", a.Limit)}, nil
		},
	})
}

func TestDecodeValidation(t *testing.T) {
	var seen sampleArgs
	set := NewSet()
	if err := set.Add(sampleTool(t, &seen)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, args, field string
		kind              Kind
	}{
		{"unknown field", `{"path":"a","bogus":1}`, "bogus", KindBadArgs},
		{"wrong type", `{"path":3}`, "path", KindBadArgs},
		{"missing required", `{}`, "path", KindBadArgs},
		{"below minimum", `{"path":"a","limit":0}`, "limit", KindBadArgs},
		{"not in enum", `{"path":"a","mode":"warp"}`, "mode", KindBadArgs},
		{"not an object", `[1]`, "", KindBadArgs},
		{"pattern", `{"path":"a","kind":"Feat"}`, "kind", KindBadArgs},
		{"broken json", `{"path":`, "", KindBadArgs},
		{"custom rule", `{"path":"-rf"}`, "path", KindBadArgs},
		{"alias and real", `{"path":"a","file":"b"}`, "file", KindBadArgs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := set.Call(context.Background(), "sample", json.RawMessage(c.args))
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want *Error, got %v", err)
			}
			if te.Kind != c.kind || te.Field != c.field {
				t.Fatalf("got kind %s field %q (%s), want %s %q", te.Kind, te.Field, te.Message, c.kind, c.field)
			}
			if c.field != "" && !strings.Contains(te.Message, c.field) {
				t.Fatalf("message %q does not name field %q", te.Message, c.field)
			}
		})
	}
}

func TestDefaultsAndAliases(t *testing.T) {
	var seen sampleArgs
	set := NewSet()
	_ = set.Add(sampleTool(t, &seen))
	if _, err := set.Call(context.Background(), "sample", json.RawMessage(`{"file":"x.ts"}`)); err != nil {
		t.Fatal(err)
	}
	if seen.Path != "x.ts" || seen.Limit != 2000 || seen.Mode != "fast" {
		t.Fatalf("defaults/aliases not applied: %+v", seen)
	}
	raw, _ := json.Marshal(set.List()[0].InputSchema)
	for _, want := range []string{`"additionalProperties":false`, `"default":2000`, `"enum":["fast","slow"]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("schema %s lacks %s", raw, want)
		}
	}
}

func TestOutputCapUTF8(t *testing.T) {
	var seen sampleArgs
	set := NewSet(WithMaxOutputBytes(101))
	_ = set.Add(sampleTool(t, &seen))
	res, err := set.Call(context.Background(), "sample", json.RawMessage(`{"path":"a","limit":500}`))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Value.(string)
	if !res.Truncated || !strings.HasSuffix(s, TruncationMarker) || len(s) > 101 {
		t.Fatalf("not truncated properly: %d bytes, truncated=%v", len(s), res.Truncated)
	}
	if !json.Valid([]byte(`"`+strings.TrimSuffix(s, TruncationMarker)+`"`)) || strings.ContainsRune(s, '\uFFFD') {
		t.Fatal("cut inside a UTF-8 sequence")
	}
}

// TestOutputCapFollowsToolLimit: a result the tool capped itself
// (Result.Limit, a git tool's max_bytes) is capped there, above the Set's
// default too; one with no limit of its own is capped at the default.
func TestOutputCapFollowsToolLimit(t *testing.T) {
	capped := func(limit int) *Tool {
		return Define(Spec[struct{}]{
			Name: fmt.Sprintf("big%d", limit), Description: "big output",
			Annotations: Annotations{ReadOnly: true, Risk: RiskLow},
			Run: func(context.Context, struct{}) (Result, error) {
				return Result{Value: strings.Repeat("x", 3000), Limit: limit}, nil
			},
		})
	}
	set := NewSet(WithMaxOutputBytes(1000))
	_ = set.Add(capped(0), capped(5000), capped(2000))
	for _, c := range []struct {
		tool string
		max  int
		cut  bool
	}{{"big0", 1000, true}, {"big5000", 3000, false}, {"big2000", 2000, true}} {
		res, err := set.Call(context.Background(), c.tool, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Value.(string); len(s) > c.max || res.Truncated != c.cut {
			t.Errorf("%s: %d bytes, truncated %v", c.tool, len(s), res.Truncated)
		}
	}
}

func TestApprovalPolicy(t *testing.T) {
	risky := Define(Spec[struct {
		Name string `json:"name"`
	}]{
		Name: "nuke", Annotations: Annotations{Destructive: true, Risk: RiskHigh},
		Summary: func(a struct {
			Name string `json:"name"`
		}) string {
			return "delete " + a.Name
		},
		Run: func(ctx context.Context, a struct {
			Name string `json:"name"`
		}) (Result, error) {
			return Result{Value: "gone"}, nil
		},
	})
	for _, c := range []struct {
		policy  Policy
		approve *bool
		want    Kind
	}{
		{PolicyNever, nil, ""},
		{PolicyOnRisk, nil, KindApprovalRequired},
		{PolicyOnRisk, ptr(false), KindApprovalRequired},
		{PolicyOnRisk, ptr(true), ""},
		{PolicyAlways, ptr(true), ""},
	} {
		var asked []ApprovalRequest
		opts := []SetOption{WithPolicy(c.policy)}
		if c.approve != nil {
			v := *c.approve
			opts = append(opts, WithApprover(YesNo(func(ctx context.Context, r ApprovalRequest) (bool, error) {
				asked = append(asked, r)
				return v, nil
			})))
		}
		set := NewSet(opts...)
		_ = set.Add(risky)
		_, err := set.Call(context.Background(), "nuke", json.RawMessage(`{"name":"db"}`))
		if KindOrEmpty(err) != c.want {
			t.Fatalf("policy %s approve %v: got %v want %s", c.policy, c.approve, err, c.want)
		}
		if c.want == KindApprovalRequired && !strings.Contains(err.Error(), "delete db") {
			t.Fatalf("refusal lacks the summary: %v", err)
		}
		if c.approve != nil && c.policy != PolicyNever && (len(asked) != 1 || asked[0].Summary != "delete db") {
			t.Fatalf("approver asked %+v", asked)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func KindOrEmpty(err error) Kind {
	if err == nil {
		return ""
	}
	return KindOf(err)
}

func TestPanicAndEvents(t *testing.T) {
	boom := Define(Spec[struct{}]{Name: "boom", Run: func(ctx context.Context, _ struct{}) (Result, error) {
		var m map[string]int
		//lint:ignore SA5000 the panic is the point: a tool that panics must not take the host down
		m["x"] = 1
		return Result{}, nil
	}})
	var events []EventType
	set := NewSet(WithEventHook(func(e Event) { events = append(events, e.Type) }))
	_ = set.Add(boom)
	_, err := set.Call(context.Background(), "boom", nil)
	if KindOf(err) != KindInternal {
		t.Fatalf("panic not turned into internal error: %v", err)
	}
	if len(events) != 2 || events[0] != EventStart || events[1] != EventError {
		t.Fatalf("events %v", events)
	}
	_, err = set.Call(context.Background(), "nope", nil)
	if KindOf(err) != KindNotFound {
		t.Fatalf("unknown tool: %v", err)
	}
}

// A broken schema rule reads as a sentence naming the field, the rule and
// the value given, not the validator's "5/1 is less than 100.000000".
func TestSchemaErrorsReadAsRules(t *testing.T) {
	type nested struct {
		Depth int `json:"depth,omitempty"`
	}
	type args struct {
		TimeoutMS int      `json:"timeout_ms,omitempty" minimum:"100" maximum:"60000"`
		Ratio     float64  `json:"ratio,omitempty" maximum:"1.5"`
		Mode      string   `json:"mode,omitempty" enum:"slice,indentation"`
		Name      string   `json:"name,omitempty" minLength:"1"`
		Tags      []string `json:"tags,omitempty"`
		Opt       *nested  `json:"opt,omitempty"`
	}
	tool := Define(Spec[args]{Name: "t", Run: func(ctx context.Context, a args) (Result, error) { return Result{}, nil }})
	for raw, want := range map[string]string{
		`{"timeout_ms":5}`:      "timeout_ms: must be >= 100 (got 5)",
		`{"timeout_ms":60001}`:  "timeout_ms: must be <= 60000 (got 60001)",
		`{"timeout_ms":1.5}`:    "timeout_ms: must be an integer (got 1.5)",
		`{"timeout_ms":"5"}`:    `timeout_ms: must be an integer (got "5")`,
		`{"ratio":2}`:           "ratio: must be <= 1.5 (got 2)",
		`{"mode":"x"}`:          `mode: must be one of "slice", "indentation" (got "x")`,
		`{"name":""}`:           "name: must not be empty",
		`{"tags":["a",3]}`:      "tags[1]: must be a string (got 3)",
		`{"opt":{"depth":"x"}}`: `opt.depth: must be an integer (got "x")`,
		`{"opt":{"deep":1}}`:    `opt: unknown field "deep" (allowed: depth)`,
	} {
		_, err := tool.Decode(json.RawMessage(raw))
		var te *Error
		if !errors.As(err, &te) || te.Kind != KindBadArgs || te.Message != want {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
