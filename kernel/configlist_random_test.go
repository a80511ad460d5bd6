package kernel

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// randomDoc writes a configuration-like YAML document from a seed: the
// target list as flow, block, null, empty or missing (at any level), items
// plain, quoted and with YAML's special characters, comments on every line
// kind, other sections around it, indentation of 2 or 4.
func randomDoc(rng *rand.Rand) string {
	ind := []string{"  ", "    "}[rng.Intn(2)]
	items := func() []string {
		pool := []string{"ls", "cat", "a b", "x]y", "#no", "**", "src/**", "true", "1", "it's", `q"uote`, "ünï", "-dash", "a,b", "{x}"}
		n := rng.Intn(4)
		out := make([]string, n)
		for i := range out {
			out[i] = pool[rng.Intn(len(pool))]
		}
		return out
	}
	scalar := func(s string) string {
		switch rng.Intn(3) {
		case 0:
			return yamlScalar(s)
		case 1:
			return strconv.Quote(s)
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	comment := func() string {
		if rng.Intn(3) == 0 {
			return " # c" + strconv.Itoa(rng.Intn(100)) + " [x], y"
		}
		return ""
	}
	var b strings.Builder
	if rng.Intn(2) == 0 {
		b.WriteString("# head\n\n")
	}
	others := 0
	other := func(prefix string) {
		if rng.Intn(2) == 0 {
			others++
			fmt.Fprintf(&b, "%sother%d: [a, b]%s\n", prefix, others, comment())
		}
	}
	other("")
	shellState := rng.Intn(6)
	if shellState == 0 {
		return b.String() // no shell section
	}
	if shellState == 1 {
		b.WriteString("shell:" + comment() + "\n")
		other("")
		return b.String()
	}
	b.WriteString("shell:" + comment() + "\n")
	other(ind)
	if rng.Intn(5) == 0 {
		fmt.Fprintf(&b, "%sdeny: [curl]\n", ind)
		return b.String() // no categories
	}
	fmt.Fprintf(&b, "%scategories:%s\n", ind, comment())
	if rng.Intn(2) == 0 {
		fmt.Fprintf(&b, "%s%s# about read_only\n", ind, ind)
		fmt.Fprintf(&b, "%s%sread_only: [ls]%s\n", ind, ind, comment())
	}
	l := items()
	key := ind + ind + "safe_write:"
	switch rng.Intn(6) {
	case 0: // missing
		fmt.Fprintf(&b, "%s%sdangerous: [rm]\n", ind, ind)
	case 1: // null
		b.WriteString(key + []string{"", " ~", " null"}[rng.Intn(3)] + comment() + "\n")
	case 2, 3: // flow, maybe over several lines
		parts := make([]string, len(l))
		for i, s := range l {
			parts[i] = scalar(s)
		}
		if rng.Intn(2) == 0 || len(l) == 0 {
			b.WriteString(key + " [" + strings.Join(parts, ", ") + "]" + comment() + "\n")
		} else {
			b.WriteString(key + " [\n")
			for i, p := range parts {
				sep := ","
				if i == len(parts)-1 && rng.Intn(2) == 0 {
					sep = ""
				}
				b.WriteString(ind + ind + ind + p + sep + comment() + "\n")
			}
			b.WriteString(ind + ind + "]\n")
		}
	default: // block
		if len(l) == 0 {
			l = []string{"mkdir"}
		}
		b.WriteString(key + comment() + "\n")
		dash := ind + ind + []string{"", ind}[rng.Intn(2)]
		for _, s := range l {
			b.WriteString(dash + "- " + scalar(s) + comment() + "\n")
			if rng.Intn(4) == 0 {
				b.WriteString(dash + "# between\n")
			}
		}
	}
	if rng.Intn(2) == 0 {
		fmt.Fprintf(&b, "%spaths:\n%s%sread: [\"**\"]\n", ind, ind, ind)
	}
	other("")
	if rng.Intn(2) == 0 {
		b.WriteString("# foot\n")
	}
	return b.String()
}

// TestAppendToListRandom: on generated documents, the edited text reads
// back as the same document with the item appended to the target list
// (or the list written as effective + item where there was none), and
// every comment survives.
func TestAppendToListRandom(t *testing.T) {
	const key = "shell.categories.safe_write"
	effective := []string{"mkdir", "touch"}
	for seed := int64(1); seed <= 2000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		in := randomDoc(rng)
		item := []string{"id", "python3", "my tool", "x]", "**/x", "false", "#c", "a'b"}[rng.Intn(8)]
		var before map[string]any
		if err := yaml.Unmarshal([]byte(in), &before); err != nil {
			t.Fatalf("seed %d: generated YAML does not parse: %v\n%s", seed, err, in)
		}
		out, err := appendToList([]byte(in), key, item, effective)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, in)
		}
		var after map[string]any
		if err := yaml.Unmarshal(out, &after); err != nil {
			t.Fatalf("seed %d: edited YAML does not parse: %v\n--- in\n%s--- out\n%s", seed, err, in, out)
		}
		old, had := listAt([]byte(in), key)
		if !had {
			old = effective
		}
		if got, _ := listAt(out, key); !slices.Equal(got, append(slices.Clone(old), item)) {
			t.Fatalf("seed %d: list %q, want %q + %q\n--- in\n%s--- out\n%s", seed, got, old, item, in, out)
		}
		// Everything else is as it was.
		strip := func(m map[string]any) {
			if sh, ok := m["shell"].(map[string]any); ok {
				if c, ok := sh["categories"].(map[string]any); ok {
					delete(c, "safe_write")
					if len(c) == 0 {
						delete(sh, "categories")
					}
				}
				if len(sh) == 0 {
					delete(m, "shell")
				}
			}
			if m["shell"] == nil {
				delete(m, "shell")
			}
		}
		strip(before)
		strip(after)
		if !(len(before) == 0 && len(after) == 0) && !reflect.DeepEqual(before, after) {
			t.Fatalf("seed %d: other keys changed\n--- in\n%s--- out\n%s", seed, in, out)
		}
		for _, l := range strings.Split(in, "\n") {
			if i := strings.Index(l, "# "); i >= 0 && !strings.Contains(string(out), l[i:]) {
				t.Fatalf("seed %d: comment %q lost\n--- out\n%s", seed, l[i:], out)
			}
		}
	}
}
