package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/tools"
)

// mrtrVersion is the first protocol version in which a server may not
// send requests of its own while serving one: it answers "input required"
// and the client calls again with the answers (multi-round-trip requests,
// SEP-2322).
const mrtrVersion = "2026-07-28"

// asker puts a tool call's approval requests to the client's user. Up to
// protocol 2025-11-25 it sends elicitation/create while the call waits.
// From 2026-07-28 it records the question, the call is abandoned (an
// approval is asked before the call changes anything), and the handler
// answers input-required; the client's retry carries the answer, signed
// state carries earlier ones, and the call runs again from the start.
type asker struct {
	ss      *mcp.ServerSession
	mrtr    bool
	answers map[string]tools.Decision
	need    *question // the question the call stopped at (mrtr)
	mu      sync.Mutex
}

type question struct {
	id     string
	params *mcp.ElicitParams
}

// callContext gives a tool call its session (what a host allows once
// holds for that session's next call) and an approver that asks the
// client's user through MCP elicitation (elicitation/create, protocol
// 2025-06-18 on), when the client declared that it can be asked.
func (s *server) callContext(ctx context.Context, req *mcp.CallToolRequest) (context.Context, *asker, error) {
	ss := req.Session
	if ss == nil {
		return ctx, nil, nil
	}
	ctx = tools.ContextWithSession(ctx, "mcp:"+ss.ID())
	a := &asker{ss: ss, answers: map[string]tools.Decision{}}
	if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= mrtrVersion {
		a.mrtr = true
		if p := req.Params; p != nil {
			if p.RequestState != "" {
				if err := s.openState(p.RequestState, a.answers); err != nil {
					return ctx, nil, err
				}
			}
			for id, r := range p.InputResponses {
				if er, ok := r.(*mcp.ElicitResult); ok {
					a.answers[id] = decisionOf(er)
				}
			}
		}
	}
	return tools.ContextWithApprover(ctx, a.approve), a, nil
}

func (a *asker) approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	if !canElicit(a.ss) {
		return tools.DecisionDeny, fmt.Errorf("%w: the MCP client did not declare the elicitation capability", tools.ErrNoApprover)
	}
	params := elicitParams(req)
	if !a.mrtr {
		res, err := a.ss.Elicit(ctx, params)
		if err != nil {
			return tools.DecisionDeny, fmt.Errorf("elicitation: %w", err)
		}
		return decisionOf(res), nil
	}
	id := questionID(req)
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, ok := a.answers[id]; ok {
		return d, nil
	}
	if req.MidCall {
		return tools.DecisionDeny, errors.New("this approval comes after the call started changing things, and a client on protocol " +
			mrtrVersion + " can only be asked by running the call again; write the command literally in the command line so it is asked before anything runs")
	}
	if a.need == nil {
		a.need = &question{id: id, params: params}
	}
	return tools.DecisionDeny, errAsking
}

// errAsking ends a call that stopped to ask (the handler answers
// input-required instead of the call's error).
var errAsking = errors.New("waiting for the client's answer")

func decisionOf(res *mcp.ElicitResult) tools.Decision {
	if res == nil || res.Action != "accept" {
		return tools.DecisionDeny
	}
	d, _ := res.Content["decision"].(string)
	return tools.Decision(d)
}

// questionID names a question by what it asks: the retry's answer is
// taken for that question only.
func questionID(req tools.ApprovalRequest) string {
	b, _ := json.Marshal(struct {
		Tool, Summary string
		Choices       []tools.Decision
		Scope         *tools.ScopeRequest
	}{req.Tool, req.Summary, req.Choices, req.Scope})
	sum := sha256.Sum256(b)
	return "approval-" + hex.EncodeToString(sum[:8])
}

// sealState signs the answers a retry must carry: the client echoes the
// state, and only states this server made are taken back.
func (s *server) sealState(answers map[string]tools.Decision) string {
	b, _ := json.Marshal(answers)
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *server) openState(state string, into map[string]tools.Decision) error {
	body, sig, ok := strings.Cut(state, ".")
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil {
		return errors.New("requestState is not one this server made")
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return errors.New("requestState is not one this server made")
	}
	return json.Unmarshal(b, &into)
}

// inputRequired is the answer to a call that stopped to ask, or nil.
func (s *server) inputRequired(a *asker) *mcp.CallToolResult {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.need == nil {
		return nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{a.need.id: a.need.params}, RequestState: s.sealState(a.answers)}
}

// canElicit reports whether the client declared the elicitation
// capability in its initialize request (form mode: an empty object, or
// one with "form").
func canElicit(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// elicitParams is the form the user answers: one choice among
// req.Choices.
func elicitParams(req tools.ApprovalRequest) *mcp.ElicitParams {
	enum := make([]any, len(req.Choices))
	for i, c := range req.Choices {
		enum[i] = string(c)
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type": "string", "title": "Decision", "enum": enum,
				"description": "allow_once: this time only; add_to_scope: write it into the configuration for good; deny: refuse",
			},
		},
		"required": []any{"decision"},
	}
	return &mcp.ElicitParams{Mode: "form", Message: message(req), RequestedSchema: schema}
}

// message is what the user reads: what the agent wants, why, and what
// each choice does.
func message(req tools.ApprovalRequest) string {
	var b strings.Builder
	if sc := req.Scope; sc != nil {
		if sc.Command != "" {
			fmt.Fprintf(&b, "The agent asks to run the command %q (%s).", sc.Command, sc.Key)
		} else {
			fmt.Fprintf(&b, "The agent asks for %s access to %q (%s).", sc.Scope, sc.Pattern, sc.Key)
		}
		fmt.Fprintf(&b, "\nReason: %s", sc.Reason)
		if sc.ConfigFile != "" {
			fmt.Fprintf(&b, "\nadd_to_scope writes it into %s.", sc.ConfigFile)
		}
		if sc.Note != "" {
			fmt.Fprintf(&b, "\nNote: %s.", sc.Note)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "The agent's call %s needs approval (risk %s): %s", req.Tool, req.Risk, req.Summary)
	return b.String()
}
