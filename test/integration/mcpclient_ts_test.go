package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestOfficialTypeScriptClient runs the official MCP TypeScript SDK
// (mcpjs/check.mjs) against `tgp serve` over stdio and over streamable
// HTTP: every tool has a title; every tool that declares an outputSchema
// is called and its structuredContent matches the schema (the SDK's own
// check, then jsonschema-go's here); the toolbox is listed and read as
// resources; and notifications/resources/list_changed arrives after
// another OS process pushed a tool.
func TestOfficialTypeScriptClient(t *testing.T) {
	ensureTSClient(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command("node", "check.mjs", mode)
			cmd.Dir = tsClientDir
			cmd.Env = append(os.Environ(), "TGP_BIN="+tgpBin, "TGP_REMOTE="+gittest.BareRemote(t), "TGP_WORK="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
				t.Fatalf("%v\n%s", err, out)
			}
			validated := map[string]bool{}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				line, ok := strings.CutPrefix(sc.Text(), "STRUCTURED ")
				if !ok {
					continue
				}
				var got struct {
					Tool       string             `json:"tool"`
					Schema     *jsonschema.Schema `json:"schema"`
					Structured any                `json:"structured"`
				}
				if err := json.Unmarshal([]byte(line), &got); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				rs, err := got.Schema.Resolve(nil)
				if err != nil {
					t.Fatalf("%s: outputSchema: %v", got.Tool, err)
				}
				if err := rs.Validate(got.Structured); err != nil {
					t.Fatalf("%s: structuredContent does not match its outputSchema: %v\n%s", got.Tool, err, line)
				}
				validated[got.Tool] = true
			}
			if len(validated) < 14 {
				t.Fatalf("validated %d tools' structured content: %v", len(validated), validated)
			}
			t.Logf("%d tools validated; %s", len(validated), lastLine(string(out)))
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
