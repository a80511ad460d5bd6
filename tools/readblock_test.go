package tools_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
)

const cppSample = `#include <vector>
#include <string>

namespace sample {
class Runner {
public:
    void setup() {
        if (enabled_) {
            init();
        }
    }

    // Run the code
    int run() const {
        switch (mode_) {
            case Mode::Fast:
                return fast();
            case Mode::Slow:
                return slow();
            default:
                return fallback();
        }
    }

private:
    bool enabled_ = false;
};
}  // namespace sample
`

// TestReadFileIndentationMode: the block around an anchor line, found by
// indentation, with the behaviour of Codex's read_file (levels, siblings,
// comment headers), on C-like and Python samples.
func TestReadFileIndentationMode(t *testing.T) {
	f := false
	cases := []struct {
		name, src string
		opts      map[string]any
		want      []int // line numbers shown
	}{
		{"captures the anchor's block", "fn outer() {\n    if cond {\n        inner();\n    }\n    tail();\n}\n",
			map[string]any{"anchor_line": 3, "max_levels": 1}, []int{2, 3, 4}},
		{"two levels out", "mod root {\n    fn outer() {\n        if cond {\n            inner();\n        }\n    }\n}\n",
			map[string]any{"anchor_line": 4, "max_levels": 2}, []int{2, 3, 4, 5, 6}},
		{"three levels out", "mod root {\n    fn outer() {\n        if cond {\n            inner();\n        }\n    }\n}\n",
			map[string]any{"anchor_line": 4, "max_levels": 3}, []int{1, 2, 3, 4, 5, 6, 7}},
		{"no siblings", "fn wrapper() {\n    if first {\n        do_first();\n    }\n    if second {\n        do_second();\n    }\n}\n",
			map[string]any{"anchor_line": 3, "max_levels": 1}, []int{2, 3, 4}},
		{"siblings", "fn wrapper() {\n    if first {\n        do_first();\n    }\n    if second {\n        do_second();\n    }\n}\n",
			map[string]any{"anchor_line": 3, "max_levels": 1, "include_siblings": true}, []int{2, 3, 4, 5, 6, 7}},
		{"python class body", "class Foo:\n    def __init__(self, size):\n        self.size = size\n    def double(self, value):\n        if value is None:\n            return 0\n        result = value * self.size\n        return result\nclass Bar:\n    def compute(self):\n        helper = Foo(2)\n        return helper.double(5)\n",
			map[string]any{"anchor_line": 7, "max_levels": 1, "include_siblings": true}, []int{2, 3, 4, 5, 6, 7, 8}},
		{"cpp one level", cppSample, map[string]any{"anchor_line": 18, "max_levels": 1}, []int{15, 16, 17, 18, 19, 20, 21, 22}},
		{"cpp two levels with the comment header", cppSample, map[string]any{"anchor_line": 18, "max_levels": 2}, []int{13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"cpp two levels without header", cppSample, map[string]any{"anchor_line": 18, "max_levels": 2, "include_header": f}, []int{14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"cpp siblings", cppSample, map[string]any{"anchor_line": 18, "max_levels": 2, "include_header": f, "include_siblings": true},
			[]int{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"max_lines caps the block", cppSample, map[string]any{"anchor_line": 18, "max_levels": 2, "max_lines": 3}, []int{17, 18, 19}},
	}
	e := newEnv(t, true)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.write(t, "src.txt", c.src)
			raw, _ := json.Marshal(map[string]any{"path": "src.txt", "mode": "indentation", "indentation": c.opts})
			res, err := e.call("read_file", string(raw))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(c.src, "\n"), "\n")
			var want strings.Builder
			for _, n := range c.want {
				fmt.Fprintf(&want, "%6d\t%s\n", n, lines[n-1])
			}
			if got := res.Value.(tools.ReadFileResult).Content; got != want.String() {
				t.Fatalf("got\n%s\nwant\n%s", got, want.String())
			}
		})
	}
}

// TestReadFileCutsLongLines: lines over 400 characters end with the
// marker and truncated is set; the slice mode is the default.
func TestReadFileCutsLongLines(t *testing.T) {
	e := newEnv(t, true)
	e.write(t, "long.txt", "short\n"+strings.Repeat("é", 1000)+"\n")
	res, err := e.call("read_file", `{"path":"long.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Value.(tools.ReadFileResult).Content
	if !res.Truncated || got != "     1\tshort\n     2\t"+strings.Repeat("é", 400)+"… [truncated line]\n" {
		t.Fatalf("truncated=%v %q", res.Truncated, got)
	}
}
