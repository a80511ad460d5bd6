package kernel

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestCarryKeyEnvReachesTheRepository: git.carry_key_env names the
// variable holding the fleet's carry key, and the repository checks
// carries with it. A ref of a carry's shape whose proof was made with
// some other key, planted with the git CLI on a smart-HTTP remote, is
// listed by Status as unverified: "no key" with the variable unset, "does
// not match" with it set.
func TestCarryKeyEnvReachesTheRepository(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	url := gittest.NewHTTPServer(t, filepath.Dir(bare), "").URL(filepath.Base(bare))
	clone := gittest.Clone(t, url)
	tip := strings.TrimSpace(gittest.Git(t, clone, "rev-parse", "HEAD"))
	gittest.WriteFile(t, clone, "tools/evil.ts", "export default () => 'pwned';\n")
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "evil")
	ref := "refs/tgp/carry/main/" + tip + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "-0123456789ab-" + strings.Repeat("ab", 32)
	gittest.Git(t, clone, "push", "-q", url, "HEAD:"+ref)
	for _, c := range []struct{ environ, want string }{
		{"", "no key to check its proof"},
		{"FLEET_KEY=s3cret", "its proof does not match"},
	} {
		k := bootKernel(t, url, true, WithSetting("git.carry_key_env", "FLEET_KEY"), WithEnviron([]string{c.environ}))
		st, err := k.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(st.UnverifiedCarries) != 1 || !strings.HasPrefix(st.UnverifiedCarries[0], ref+" ") || !strings.Contains(st.UnverifiedCarries[0], c.want) {
			t.Fatalf("environ %q: unverified carries %q, want %s: %s", c.environ, st.UnverifiedCarries, ref, c.want)
		}
	}
}
