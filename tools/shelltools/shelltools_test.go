package shelltools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/shell"
	"github.com/tgp-go/tgp/tools"
)

// TestShellToolErrors: the shell package's errors become the tool error
// kinds of the contract, with the seed's details.
func TestShellToolErrors(t *testing.T) {
	st := &shellTools{}
	res := &shell.Result{Changed: []string{"notes/a"}}
	cases := []struct {
		err  error
		kind tools.Kind
	}{
		{&shell.Violation{Reason: shell.ReasonDirNotInScope, Command: "mkdir", Directory: "docs", RequiredScope: shell.ScopeWrite, AllowedPatterns: []string{"notes"}, Message: "m"}, tools.KindSandboxViolation},
		{fmt.Errorf("wrapped: %w", &shell.ApprovalError{Commands: []string{"rm x"}, Message: "m"}), tools.KindApprovalRequired},
		{&shell.SyntaxError{Err: errors.New("bad")}, tools.KindBadArgs},
		{&shell.TimeoutError{Result: &shell.Result{Stdout: "so far"}}, tools.KindTimeout},
		{fmt.Errorf("%w: 3", shell.ErrNoSession), tools.KindNotFound},
		{context.Canceled, tools.KindCancelled},
		{context.DeadlineExceeded, tools.KindTimeout},
		{shell.ErrBudget, tools.KindExecutionFailed},
	}
	for _, c := range cases {
		te := st.toolError(c.err, res, nil).(*tools.Error)
		if te.Kind != c.kind || !errors.Is(te, c.err) && !errors.Is(c.err, te.Err) {
			t.Errorf("%v: got %s", c.err, te.Kind)
		}
	}
	v := st.toolError(cases[0].err, res, &tools.Persisted{Persisted: true}).(*tools.Error)
	b, _ := json.Marshal(v.Details)
	for _, want := range []string{`"reason":"directory_not_in_scope"`, `"command":"mkdir"`, `"directory":"docs"`, `"required_scope":"write"`, `"allowed_patterns":["notes"]`, `"changed":["notes/a"]`, `"persisted":{"persisted":true}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("details lack %s: %s", want, b)
		}
	}
	if !errors.Is(v, shell.ErrViolation) {
		t.Error("the tool error does not unwrap to shell.ErrViolation")
	}
}

func TestShellToolsWithoutARunner(t *testing.T) {
	set := tools.NewSet()
	if err := set.Add(New(Config{Open: func() (*shell.Runner, *shell.Sessions, error) {
		return nil, nil, errors.New("the root is in memory")
	}})...); err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]string{"shell": `{"command":"ls"}`, "exec_command": `{"cmd":"ls"}`, "write_stdin": `{"session_id":1}`} {
		_, err := set.Call(context.Background(), tool, json.RawMessage(args))
		var te *tools.Error
		if !errors.As(err, &te) || te.Kind != tools.KindExecutionFailed || !strings.Contains(te.Message, "needs a disk root: the root is in memory") {
			t.Errorf("%s: %v", tool, err)
		}
	}
}
