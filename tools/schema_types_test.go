package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/forgetools"
	"github.com/tgp-go/tgp/vfs"
)

// TestSchemasHavePlainTypes: no property of any tool is typed
// as a ["null", T] union (clients built string inputs for them), and an
// explicit null for an optional argument means "not given".
func TestSchemasHavePlainTypes(t *testing.T) {
	all := append(tools.FileTools(vfs.NewMemory(), nil, tools.FileToolsConfig{}), forgetools.New(vfs.NewMemory(), forgetools.Config{})...)
	for _, tl := range all {
		b, _ := json.Marshal(tl.InputSchema)
		if strings.Contains(string(b), `"null"`) {
			t.Fatalf("%s: schema has a null type: %s", tl.Name, b)
		}
	}
	e := newEnv(t, true)
	e.write(t, "a.txt", "one\ntwo\n")
	res, err := e.call("read_file", `{"path":"a.txt","offset":null,"limit":null,"mode":null,"indentation":null}`)
	if err != nil || res.Value.(tools.ReadFileResult).EndLine != 2 {
		t.Fatalf("nulls as omitted: %+v %v", res, err)
	}
}
