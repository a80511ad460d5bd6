package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestStatusListsUnverifiedCarryRefs (issue 42): a ref planted under
// refs/tgp/carry/ with a plain git push to a smart-HTTP remote is listed
// by `tgp status` (text and --json) as an unverified carry ref, saying
// why; the remote keeps it.
func TestStatusListsUnverifiedCarryRefs(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	url := gittest.NewHTTPServer(t, filepath.Dir(bare), "").URL(filepath.Base(bare))
	clone := gittest.Clone(t, url)
	tip := strings.TrimSpace(gittest.Git(t, clone, "rev-parse", "HEAD"))
	gittest.WriteFile(t, clone, "tools/evil.ts", "export default () => 'pwned';\n")
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "evil")
	ref := "refs/tgp/carry/main/" + tip + "-0123456789ab"
	gittest.Git(t, clone, "push", "-q", url, "HEAD:"+ref)

	env := []string{"HOME=" + t.TempDir(), "TGP_GIT_REMOTE=" + url, "TGP_CARRY_KEY=fleet"}
	root := filepath.Join(t.TempDir(), "root")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"status", "--root", root}, strings.NewReader(""), &out, &errb, env); code != 0 {
		t.Fatalf("tgp status: %d %s %s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "unverified carry refs: 1 ") || !strings.Contains(out.String(), "  unverified: "+ref+" ") ||
		!strings.Contains(out.String(), "no proof") {
		t.Fatalf("tgp status does not list the planted ref %s:\n%s", ref, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"status", "--json", "--root", root}, strings.NewReader(""), &out, &errb, env); code != 0 {
		t.Fatalf("tgp status --json: %d %s %s", code, out.String(), errb.String())
	}
	var st struct {
		Unverified []string `json:"unverified_carry_refs"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || len(st.Unverified) != 1 || !strings.HasPrefix(st.Unverified[0], ref+" ") {
		t.Fatalf("tgp status --json: %v %s", err, out.String())
	}
	if got := strings.TrimSpace(gittest.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/tgp")); got != ref {
		t.Fatalf("refs under refs/tgp on the remote: %q, want the planted one left", got)
	}
}
