package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/tools"
)

func connectWith(t *testing.T, s *mcp.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A call that needs approval is put to the client's user through
// elicitation when the client can be asked, and refused (approval_required)
// when it cannot. The call carries the MCP session. Protocol 2025-06-18
// sends elicitation/create during the call; 2026-07-28 answers
// input-required and the client's retry carries the answer.
func TestApprovalThroughElicitation(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { testApprovalThroughElicitation(t, v) })
	}
}

func testApprovalThroughElicitation(t *testing.T, version string) {
	var sessions []string
	set := tools.NewSet(tools.WithPolicy(tools.PolicyOnRisk))
	if err := set.Add(tools.Define(tools.Spec[echoArgs]{Name: "wipe", Description: "destroy",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Summary:     func(a echoArgs) string { return "wipe " + a.Text },
		Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
			sessions = append(sessions, tools.SessionFrom(ctx))
			return tools.Result{Value: "wiped " + a.Text}, nil
		}})); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var asked []*mcp.ElicitParams
	answer := "allow_once"
	cs := connectWith(t, s, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params)
		if answer == "decline" {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answer}}, nil
	}}, version)
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s", got)
	}
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"text": "disk"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "wiped disk" {
		t.Fatalf("allowed: %v %+v", err, res)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Message, "wipe disk") {
		t.Fatalf("asked: %+v", asked)
	}
	if len(sessions) != 1 || sessions[0] != "mcp:"+cs.ID() {
		t.Fatalf("session: %v (client %q)", sessions, cs.ID())
	}
	for _, a := range []string{"deny", "decline", "add_to_scope"} {
		answer = a
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"text": "disk"}})
		if a == "add_to_scope" && err != nil && strings.Contains(err.Error(), "enum") {
			continue // a client on 2026-07-28 checks the answer against the form itself
		}
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_required") {
			t.Fatalf("%s: %v %+v", a, err, res)
		}
	}
	// A client without the capability is not asked.
	plain := connectWith(t, s, nil, version)
	res, err = plain.CallTool(ctx, &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"text": "disk"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_required") {
		t.Fatalf("no elicitation: %v %+v", err, res)
	}
	if len(asked) != 4 {
		t.Fatalf("asked %d times", len(asked))
	}
}

// Two questions in one call over multi-round-trip: the first answer rides
// in the signed state while the second is asked; a state the server did
// not make is refused.
func TestElicitationRoundsCarrySignedState(t *testing.T) {
	set := tools.NewSet()
	var runs int
	if err := set.Add(tools.Define(tools.Spec[echoArgs]{Name: "twice", Description: "asks twice",
		Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
			runs++
			var got []string
			for _, q := range []string{"first", "second"} {
				d, err := set.Ask(ctx, tools.ApprovalRequest{Tool: "twice", Summary: q})
				if err != nil {
					return tools.Result{}, err
				}
				got = append(got, string(d))
			}
			return tools.Result{Value: strings.Join(got, ",")}, nil
		}})); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	cs := connectWith(t, s, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		d := "allow_once"
		if strings.Contains(req.Params.Message, "second") {
			d = "deny"
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": d}}, nil
	}}, "")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "twice", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "allow_once,deny" {
		t.Fatalf("twice: %v %+v", err, res)
	}
	if len(asked) != 2 || runs != 3 {
		t.Fatalf("asked %d, ran %d", len(asked), runs)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "twice", Arguments: map[string]any{"text": "x"}, RequestState: "e30.AAAA"}); err == nil {
		t.Fatal("a forged state was taken")
	}
}

// A question asked after the call started changing things cannot be put
// to a client that can only be asked by running the call again
// (2026-07-28); inline elicitation (2025-06-18) asks it.
func TestMidCallQuestion(t *testing.T) {
	set := tools.NewSet()
	if err := set.Add(tools.Define(tools.Spec[echoArgs]{Name: "mid", Description: "asks mid-call",
		Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
			d, err := set.Ask(ctx, tools.ApprovalRequest{Tool: "mid", Summary: "rm x", MidCall: true})
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Value: string(d)}, nil
		}})); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	handler := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
	}}
	for version, want := range map[string]string{"2025-06-18": "allow_once", "2026-07-28": "running the call again"} {
		cs := connectWith(t, s, handler, version)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mid", Arguments: map[string]any{"text": "x"}})
		if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, want) {
			t.Fatalf("%s: %v %+v", version, err, res)
		}
	}
}
