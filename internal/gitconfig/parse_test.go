package gitconfig

import (
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseMatchesGitConfigList reads generated configuration files (odd
// spacing, quotes, escapes, comments, line continuations, CRLF,
// subsections with escapes, old-style [a.b] sections, keys with no '=',
// and now and then a bad line) with Parse and with `git config --file F
// --list`: the variables and their order must be git's, and a file git
// refuses must be one Parse refuses.
func TestParseMatchesGitConfigList(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	headers := []string{"[core]", "[Core]", "[diff \"Sub Name\"]", "[a.B]", "[ x ]", "[s \"q\\\"uote\"]", "[s \"back\\\\slash\"]", "[bad", "[s \"x\"y]"}
	keys := []string{"key", "Key2", "with-dash", "k0", "1bad", "k_bad"}
	values := []string{"v", " spaced  out ", "\"quoted ; not comment\"", "a # comment", "tab\\there", "nl\\n", "cont\\\n inued", "\"open", "bad\\q", "", "x ;c"}
	eols := []string{"\n", "\r\n"}
	refused := 0
	for seed := int64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		eol := eols[r.Intn(len(eols))]
		var b strings.Builder
		for i := r.Intn(6); i >= 0; i-- {
			b.WriteString(headers[r.Intn(len(headers))] + eol)
			for j := r.Intn(3); j >= 0; j-- {
				switch r.Intn(6) {
				case 0:
					b.WriteString("\t" + keys[r.Intn(len(keys))] + eol) // no '='
				case 1:
					b.WriteString("# a comment" + eol)
				default:
					b.WriteString("\t" + keys[r.Intn(len(keys))] + " = " + values[r.Intn(len(values))] + eol)
				}
			}
		}
		src := b.String()
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", file, "--list")
		cmd.Env = env
		out, gitErr := cmd.Output()
		var got strings.Builder
		err := Parse([]byte(src), func(key string, value *string) {
			got.WriteString(key)
			if value != nil {
				got.WriteString("=" + *value)
			}
			got.WriteString("\n")
		})
		if gitErr != nil {
			refused++
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("seed %d: git refuses the file (%v), Parse reads it:\n%q", seed, gitErr, src)
			}
			continue
		}
		if err != nil {
			t.Errorf("seed %d: Parse refuses a file git reads (%v):\n%q", seed, err, src)
			continue
		}
		if got.String() != string(out) {
			t.Errorf("seed %d:\n%q\nParse:\n%s\ngit:\n%s", seed, src, got.String(), out)
		}
	}
	if refused == 0 || refused == 300 {
		t.Errorf("git refused %d of 300 files: the generator tests one outcome", refused)
	}
}
