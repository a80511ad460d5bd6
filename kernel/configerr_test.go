package kernel

import (
	"strconv"
	"strings"
	"testing"
)

// Configuration mistakes read as a person would want them: the key meant,
// the keys of its section only, the type wanted without the decoder's
// words, the YAML line at fault, and the variable that gave a bad value.
func TestConfigErrorMessages(t *testing.T) {
	cases := []struct {
		name, yaml string
		env        []string
		want       []string
		not        []string
	}{
		{"typo in a key", "git:\n  remot: x\n", nil,
			[]string{"git.remot", "did you mean git.remote?", "git.write_strategy"},
			[]string{"sandbox.timeout", "approval.policy"}},
		{"typo in a section", "gti:\n  remote: x\n", nil,
			[]string{"did you mean git.remote?", "sections: approval, fs, git"}, nil},
		{"section given a value", "git: 3\n", nil,
			[]string{"is a section, not a value", "git.remote"}, []string{"sandbox."}},
		{"wrong type", "git:\n  depth: lots\n", nil,
			[]string{`git.depth`, `"lots" is not a whole number`}, []string{"decoding failed", "strconv", "'int'"}},
		{"wrong duration", "sandbox:\n  timeout: forever\n", nil,
			[]string{`"forever" is not a duration such as`}, []string{"time: invalid"}},
		{"wrong bool", "sql:\n  read_only: maybe\n", nil,
			[]string{`"maybe" is not true or false`}, []string{"ParseBool"}},
		{"env typo", "", []string{"TGP_GIT_DEPHT=1"},
			[]string{"TGP_GIT_DEPHT", "did you mean TGP_GIT_DEPTH?", "TGP_GIT_REMOTE"}, []string{"TGP_SANDBOX_TIMEOUT"}},
		{"env wrong type", "", []string{"TGP_GIT_DEPTH=x"},
			[]string{"environment TGP_GIT_DEPTH", `"x" is not a whole number`}, nil},
		{"env out of range", "", []string{"TGP_SANDBOX_MEMORY_MB=0"},
			[]string{"sandbox.memory_mb (environment TGP_SANDBOX_MEMORY_MB)", ">= 1"}, nil},
		{"env bad enum", "", []string{"TGP_SANDBOX_ISOLATION=vm"},
			[]string{"(environment TGP_SANDBOX_ISOLATION)", "inproc, process"}, nil},
		{"file out of range", "sandbox:\n  memory_mb: 0\n", nil,
			[]string{"sandbox.memory_mb (", "tgp.config.yaml:2)"}, nil},
		// A wrong type names the file and the line, as the README says.
		{"wrong type on its line", "# c\ngit:\n  remote: x\n  depth: lots\n", nil,
			[]string{"config git.depth (", "tgp.config.yaml:4): \"lots\" is not a whole number"}, nil},
		{"list for a bool", "fs:\n\n  block_upward_traversal: [1]\n", nil,
			[]string{"fs.block_upward_traversal (", "tgp.config.yaml:3): [1] is not true or false"}, nil},
		{"unknown key on its line", "git:\n  remote: x\n  remot: y\n", nil,
			[]string{"git.remot (", "tgp.config.yaml:3)", "did you mean git.remote?"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo := LoadOptions{Environ: c.env}
			if lo.Environ == nil {
				lo.Environ = []string{}
			}
			if c.yaml != "" {
				lo.File = writeYAML(t, c.yaml)
			}
			_, err := LoadConfig(lo)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q has %q", err, n)
				}
			}
		})
	}
}

// yaml.v3 reports some errors at the line where the enclosing block
// starts: the message names the line at fault and quotes it.
func TestConfigYAMLErrorLine(t *testing.T) {
	base := strings.Split(ConfigTemplate, "\n")
	at := -1
	for i, l := range base {
		if strings.HasPrefix(l, "  depth: ") {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("template has no git.depth line")
	}
	for _, bad := range []string{"   depth: 0", "  depth 0", "\tdepth: 0", "  depth: [1", "  depth: 0: 1"} {
		lines := append([]string{}, base...)
		lines[at] = bad
		_, err := LoadConfig(LoadOptions{File: writeYAML(t, strings.Join(lines, "\n")), Environ: []string{}})
		want := "tgp.config.yaml:" + strconv.Itoa(at+1) + ": not valid YAML"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), strings.TrimSpace(bad)) {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}

// The variables the *_env keys name are secrets, never configuration,
// whichever layer names them; TGP_SERVE_TOKEN, the natural name of the
// HTTP token, is one even before a flag names it.
func TestSecretVariablesAreNotConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		lo   LoadOptions
	}{
		{"named in the environment", LoadOptions{Environ: []string{"TGP_SERVE_TOKEN_ENV=TGP_SERVE_AUTH", "TGP_SERVE_AUTH=s"}}},
		{"named in the file", LoadOptions{File: writeYAML(t, "sql:\n  dsn_env: TGP_SQL_URL\n"), Environ: []string{"TGP_SQL_URL=s"}}},
		{"named by an option", LoadOptions{Environ: []string{"TGP_SERVE_AUTH=s"}, Overrides: map[string]any{"serve.token_env": "TGP_SERVE_AUTH"}}},
		{"natural name", LoadOptions{Environ: []string{"TGP_SERVE_TOKEN=s"}}},
	} {
		if _, err := LoadConfig(c.lo); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
