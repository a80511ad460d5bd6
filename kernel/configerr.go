package kernel

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/tgp-go/tgp/internal/suggest"
)

// This file turns configuration mistakes into messages a person can act
// on: the key nearest a typo and the keys of its section (not all of
// them), what type a value should have (not the decoder's wording), the
// line a YAML error is on, and which layer (file, environment variable,
// option) gave a value that is refused.

// unknownKeyError is the error for a key no configuration has: the known
// key nearest to it, and the keys of its section.
func unknownKeyError(key, source string, known map[string]bool) *ConfigError {
	section, _, _ := strings.Cut(key, ".")
	var inSection []string
	for k := range known {
		if s, _, _ := strings.Cut(k, "."); s == section {
			inSection = append(inSection, k)
		}
	}
	sort.Strings(inSection)
	if len(inSection) > 0 && !strings.Contains(key, ".") {
		// A section given a value (git: 3): say what it holds.
		return &ConfigError{Key: key, Source: source, Problem: "is a section, not a value; its keys: " + strings.Join(inSection, ", ")}
	}
	var b strings.Builder
	b.WriteString("unknown key")
	if near := suggest.Nearest(key, sortedKeys(known)); near != "" {
		fmt.Fprintf(&b, "; did you mean %s?", near)
	}
	if len(inSection) > 0 {
		fmt.Fprintf(&b, " (keys of %s: %s)", section, strings.Join(inSection, ", "))
	} else {
		fmt.Fprintf(&b, " (sections: %s)", strings.Join(sections(known), ", "))
	}
	return &ConfigError{Key: key, Source: source, Problem: b.String()}
}

// unknownEnvError is unknownKeyError for a TGP_ variable.
func unknownEnvError(name string, byEnv map[string]string) *ConfigError {
	names := sortedEnvNames(byEnv)
	var inSection []string
	for _, n := range names {
		if strings.HasPrefix(name, envSection(n)) {
			inSection = append(inSection, n)
		}
	}
	var b strings.Builder
	b.WriteString("unknown TGP_ variable")
	if near := suggest.Nearest(name, names); near != "" {
		fmt.Fprintf(&b, "; did you mean %s?", near)
	}
	if len(inSection) > 0 {
		fmt.Fprintf(&b, " (variables of this section: %s)", strings.Join(inSection, ", "))
	}
	b.WriteString("; a secret's variable is named by git.token_env, git.carry_key_env, sql.dsn_env or serve.token_env")
	return &ConfigError{Key: name, Source: "environment", Problem: b.String()}
}

// envSection is "TGP_GIT_" for TGP_GIT_REMOTE.
func envSection(name string) string {
	rest := strings.TrimPrefix(name, "TGP_")
	if i := strings.Index(rest, "_"); i >= 0 {
		return "TGP_" + rest[:i+1]
	}
	return name
}

func sections(known map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for k := range known {
		s, _, _ := strings.Cut(k, ".")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// yamlLine matches the position yaml.v3 puts in its errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError says where a YAML file stops parsing. yaml.v3 reports the line
// where the enclosing block starts for some errors (a key indented one
// space too far is reported at its section's line): the first prefix of
// the file that fails with the same problem ends on the line at fault.
func yamlError(file string, data []byte, err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "yaml: "); i >= 0 {
		msg = msg[i:]
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &ConfigError{Source: file, Problem: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	line, problem := m[1], m[2]
	lines := strings.SplitAfter(string(data), "\n")
	for n := 1; n <= len(lines); n++ {
		var v any
		perr := yaml.Unmarshal([]byte(strings.Join(lines[:n], "")), &v)
		if perr == nil {
			continue
		}
		if pm := yamlLine.FindStringSubmatch(perr.Error()); pm != nil && pm[2] == problem {
			line = strconv.Itoa(n)
			break
		}
	}
	n, _ := strconv.Atoi(line)
	text := ""
	if n >= 1 && n <= len(lines) {
		text = fmt.Sprintf(": %q", strings.TrimRight(lines[n-1], "\r\n"))
	}
	return &ConfigError{Source: file + ":" + line, Problem: fmt.Sprintf("not valid YAML%s: %s", text, problem)}
}

// fieldType is the Go type of the Config field a dotted key names, or nil.
func fieldType(key string) reflect.Type {
	t := reflect.TypeOf(Config{})
	for _, part := range strings.Split(key, ".") {
		if t.Kind() != reflect.Struct {
			return nil
		}
		found := false
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).Tag.Get("koanf") == part {
				t, found = t.Field(i).Type, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return t
}

// typeProblem says what a key's value should be, in the configuration's
// words: "a whole number", "true or false", "a duration such as 5s".
func typeProblem(key string, value any) string {
	want := "another type"
	if t := fieldType(key); t != nil {
		switch {
		case t == reflect.TypeOf(time.Duration(0)):
			want = "a duration such as 500ms, 5s or 2m"
		case t.Kind() == reflect.Bool:
			want = "true or false"
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
			want = "a whole number"
		case t.Kind() == reflect.String:
			want = "a string"
		case t.Kind() == reflect.Slice:
			want = "a list (in YAML [a, b]; in the environment a,b)"
		case t.Kind() == reflect.Map:
			want = "a mapping of names to values"
		case t.Kind() == reflect.Struct:
			want = "a section (its keys indented beneath it)"
		}
	}
	got := fmt.Sprintf("%v", value)
	if s, ok := value.(string); ok {
		got = strconv.Quote(s)
	}
	if len(got) > 60 {
		got = got[:57] + "..."
	}
	return fmt.Sprintf("%s is not %s", got, want)
}

// decodeKey pulls the key out of a mapstructure error ("'git.depth'
// cannot parse value as 'int'", "'sandbox.timeout' time: invalid
// duration").
func decodeKey(err error) string {
	var keys []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "*"))
		if strings.HasPrefix(line, "'") {
			if j := strings.Index(line[1:], "'"); j >= 0 {
				keys = append(keys, line[1:1+j])
			}
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return keys[0]
}

// layers remembers which layer set each key, to name it in errors.
type layers struct {
	file     string
	fileKeys map[string]bool
	// fileLines is the line of each key in the file (and of each
	// section, by its dotted name), to say where a refused value is.
	fileLines map[string]int
	envVars   map[string]string // key -> variable
	overrides map[string]any
}

// source names where key's value came from: "options", "environment
// TGP_X", the file, or "" (the built-in default).
func (l *layers) source(key string) string {
	for k := range l.overrides {
		if k == key || strings.HasPrefix(key, k+".") {
			return "options"
		}
	}
	if v, ok := l.envVars[key]; ok {
		return "environment " + v
	}
	for k := range l.envVars {
		if strings.HasPrefix(key, k+".") {
			return "environment " + l.envVars[k]
		}
	}
	if l.fileKeys[key] {
		return l.fileAt(key)
	}
	for k := range l.fileKeys {
		if strings.HasPrefix(k, key+".") || strings.HasPrefix(key, k+".") {
			return l.fileAt(key)
		}
	}
	return ""
}

// fileAt is the file with the line key is on ("tgp.config.yaml:12"),
// or with the line of its nearest section the file has.
func (l *layers) fileAt(key string) string {
	for k := key; k != ""; {
		if n, ok := l.fileLines[k]; ok {
			return l.file + ":" + strconv.Itoa(n)
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return l.file
}

// keyLines maps every key of a YAML file, dotted (git.retry.deadline),
// to the line it is on; nil for a file that does not parse (its error
// says where already).
func keyLines(data []byte) map[string]int {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	out := map[string]int{}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if prefix != "" {
				key = prefix + "." + key
			}
			out[key] = n.Content[i].Line
			walk(key, n.Content[i+1])
		}
	}
	walk("", doc.Content[0])
	return out
}

// attribute names the layer of a refused value in a *ConfigError that does
// not say it yet.
func (l *layers) attribute(err error) error {
	var ce *ConfigError
	if errors.As(err, &ce) && ce.Source == "" {
		ce.Source = l.source(ce.Key)
	}
	return err
}

// secretSuffixes end the names of variables that hold secrets: such a
// TGP_ variable (TGP_SERVE_TOKEN) is never configuration, whether or not a
// *_env key names it yet (a --token-env flag may name it later).
var secretSuffixes = []string{"_TOKEN", "_DSN", "_SECRET", "_PASSWORD", "_KEY"}

func secretLike(name string) bool {
	for _, s := range secretSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
