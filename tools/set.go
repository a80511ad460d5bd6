package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tgp-go/tgp/internal/suggest"
)

// Policy decides which calls need a human (or senior agent) to approve.
type Policy string

// Approval policies.
const (
	// PolicyNever runs every call without asking.
	PolicyNever Policy = "never"
	// PolicyOnRisk asks for high-risk calls only.
	PolicyOnRisk Policy = "on_risk"
	// PolicyAlways asks for every call that changes something (not
	// read-only, risk above low).
	PolicyAlways Policy = "always"
)

// Decision is a host's answer to an approval request.
type Decision string

// Decisions. A call's approval offers allow_once and deny; a scope
// expansion (request_scope_expansion) also offers add_to_scope when the
// configuration file can take it.
const (
	// DecisionDeny refuses.
	DecisionDeny Decision = "deny"
	// DecisionAllowOnce allows this call; for a scope expansion, the
	// session's next call.
	DecisionAllowOnce Decision = "allow_once"
	// DecisionAddToScope writes the expansion into the configuration file:
	// it holds from then on.
	DecisionAddToScope Decision = "add_to_scope"
)

// ScopeRequest is an agent's request to widen the shell's scope
// (request_scope_expansion): a command, or a path pattern.
type ScopeRequest struct {
	// Command is a command name; Category is the list add_to_scope would
	// put it in (shell.categories.<category>).
	Command  string `json:"command,omitempty"`
	Category string `json:"category,omitempty"`
	// Pattern is a glob relative to the root; Scope is read or write
	// (shell.paths.<scope>).
	Pattern string `json:"pattern,omitempty"`
	Scope   string `json:"scope,omitempty"`
	// Reason is the agent's explanation.
	Reason string `json:"reason"`
	// Key is the configuration key add_to_scope edits, ConfigFile the file
	// (empty when add_to_scope is not offered).
	Key        string `json:"key"`
	ConfigFile string `json:"config_file,omitempty"`
	// Dangerous marks a command of shell.categories.dangerous: it stays
	// dangerous, so allow_once runs it once and add_to_scope is not
	// offered.
	Dangerous bool `json:"dangerous,omitempty"`
	// Note says why a choice is missing (no configuration file, a file
	// inside the agents' root).
	Note string `json:"note,omitempty"`
}

// ApprovalRequest is what an Approver is asked.
type ApprovalRequest struct {
	Tool    string          `json:"tool"`
	Summary string          `json:"summary"`
	Risk    Risk            `json:"risk"`
	Args    json.RawMessage `json:"args"`
	// Choices are the decisions the host may answer; any other answer is
	// taken as an error (and the call refused).
	Choices []Decision `json:"choices"`
	// Scope is set when an agent asks to widen the shell's scope.
	Scope *ScopeRequest `json:"scope,omitempty"`
	// Session is the session asking (an MCP session's id; empty for a
	// kernel's own calls).
	Session string `json:"session,omitempty"`
	// MidCall is set when the call has already done something before
	// asking (a dangerous command found while its command line runs): an
	// approver that can only ask by running the call again from the start
	// (MCP's multi-round-trip requests) must refuse instead.
	MidCall bool `json:"mid_call,omitempty"`
}

// Offers reports whether d is one of r's choices.
func (r ApprovalRequest) Offers(d Decision) bool {
	for _, c := range r.Choices {
		if c == d {
			return true
		}
	}
	return false
}

// Approver is supplied by the host: it answers one of the request's
// Choices. An error refuses the call and is reported with it.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// YesNo adapts a yes/no approver: true is allow_once, false deny.
func YesNo(f func(ctx context.Context, req ApprovalRequest) (bool, error)) Approver {
	return func(ctx context.Context, req ApprovalRequest) (Decision, error) {
		ok, err := f(ctx, req)
		if err != nil || !ok {
			return DecisionDeny, err
		}
		return DecisionAllowOnce, nil
	}
}

// ErrNoApprover is returned by Set.Ask when neither the host nor the
// call's context gives an approver.
var ErrNoApprover = errors.New("no approver: the host gave none (kernel.WithApprover) and the client cannot be asked")

type ctxApproverKey struct{}

// ContextWithApprover gives the calls made with ctx an approver (an MCP
// server asks its client through elicitation). The host's own approver,
// when it gave one, is asked instead.
func ContextWithApprover(ctx context.Context, a Approver) context.Context {
	return context.WithValue(ctx, ctxApproverKey{}, a)
}

type sessionKey struct{}

// ContextWithSession names the session a call belongs to: what an agent
// is allowed once holds for that session's next call only.
func ContextWithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom is the session ContextWithSession named ("" for none).
func SessionFrom(ctx context.Context) string { s, _ := ctx.Value(sessionKey{}).(string); return s }

// EventType names a point in a call's life.
type EventType string

// Event types.
const (
	EventStart     EventType = "start"
	EventEnd       EventType = "end"
	EventError     EventType = "error"
	EventTruncated EventType = "truncated"
	// EventApproval is a decision on an approval request (Decision, Summary,
	// Scope; Err when the approver failed or was missing).
	EventApproval EventType = "approval"
)

// Event is reported to the host's hook for logging and metrics. Arguments
// are deliberately absent: they may hold file contents or secrets.
type Event struct {
	Type     EventType
	Tool     string
	Time     time.Time
	Duration time.Duration
	Kind     Kind
	Err      error
	// Approval events: what was asked, of which session, and the answer.
	Decision Decision
	Summary  string
	Session  string
	Scope    *ScopeRequest
}

// TruncationMarker is appended where output was cut.
const TruncationMarker = "\n\n... [output truncated]"

// DefaultMaxOutputBytes caps string results no tool capped itself (see
// Result.Limit).
const DefaultMaxOutputBytes = 1 << 20

// Set is the registry of a kernel's tools and the one place calls go through.
type Set struct {
	mu          sync.RWMutex
	tools       map[string]*Tool
	policy      Policy
	approver    Approver
	hooks       []func(Event)
	classifiers []Classifier
	maxOutput   int
}

// SetOption configures a Set.
type SetOption func(*Set)

// WithPolicy sets the approval policy (default never).
func WithPolicy(p Policy) SetOption { return func(s *Set) { s.policy = p } }

// WithApprover sets the host's approval callback.
func WithApprover(a Approver) SetOption { return func(s *Set) { s.approver = a } }

// WithEventHook adds a hook called for every event, synchronously.
func WithEventHook(h func(Event)) SetOption {
	return func(s *Set) { s.hooks = append(s.hooks, h) }
}

// WithClassifier adds an error classifier (see [Classify]).
func WithClassifier(c Classifier) SetOption {
	return func(s *Set) { s.classifiers = append(s.classifiers, c) }
}

// WithMaxOutputBytes caps string results (default [DefaultMaxOutputBytes]).
func WithMaxOutputBytes(n int) SetOption { return func(s *Set) { s.maxOutput = n } }

// NewSet makes an empty Set.
func NewSet(opts ...SetOption) *Set {
	s := &Set{tools: map[string]*Tool{}, policy: PolicyNever, maxOutput: DefaultMaxOutputBytes}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Add registers tools; a duplicate name is an error.
func (s *Set) Add(ts ...*Tool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		if _, dup := s.tools[t.Name]; dup {
			return fmt.Errorf("tools: duplicate tool %q", t.Name)
		}
		s.tools[t.Name] = t
	}
	return nil
}

// Get returns a tool by name.
func (s *Set) Get(name string) (*Tool, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tools[name]
	return t, ok
}

// List returns every tool sorted by name.
func (s *Set) List() []*Tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Tool, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Call runs one tool call: validate, approve, execute, cap. The error is
// always an *Error; no panic escapes.
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) (res Result, err error) {
	start := time.Now()
	s.emit(Event{Type: EventStart, Tool: name, Time: start})
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Kind: KindInternal, Message: fmt.Sprintf("tool %s panicked: %v", name, r),
				Details: map[string]any{"stack": string(debug.Stack())}}
			res = Result{}
		}
		if err != nil {
			te := Classify(err, s.classifiers)
			err = te
			s.emit(Event{Type: EventError, Tool: name, Time: time.Now(), Duration: time.Since(start), Kind: te.Kind, Err: te})
			return
		}
		if res.Truncated {
			s.emit(Event{Type: EventTruncated, Tool: name, Time: time.Now(), Duration: time.Since(start)})
		}
		s.emit(Event{Type: EventEnd, Tool: name, Time: time.Now(), Duration: time.Since(start)})
	}()
	t, ok := s.Get(name)
	if !ok {
		return Result{}, s.unknownTool(name)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	a, err := t.Decode(args)
	if err != nil {
		return Result{}, err
	}
	if ctx, err = s.approve(ctx, t, a, args); err != nil {
		return Result{}, err
	}
	res, err = t.run(ctx, a)
	if err != nil {
		return Result{}, err
	}
	limit := s.maxOutput
	if res.Limit > 0 {
		limit = res.Limit // the tool capped its result at what it was asked
	}
	if str, ok := res.Value.(string); ok && limit > 0 {
		if cut, truncated := Truncate(str, limit); truncated {
			res.Value, res.Truncated = cut, true
			if res.TruncatedReason == "" {
				res.TruncatedReason = fmt.Sprintf("output over %d bytes", limit)
			}
		}
	}
	return res, nil
}

// approvedKey marks the context of a call the Approver allowed.
type approvedKey struct{}

// Approved reports whether the host's Approver allowed this call (its
// summary named what it does): a tool need not ask again for the same
// call (shell's dangerous commands).
func Approved(ctx context.Context) bool { v, _ := ctx.Value(approvedKey{}).(bool); return v }

func (s *Set) approve(ctx context.Context, t *Tool, args any, raw json.RawMessage) (context.Context, error) {
	need := false
	risk := t.RiskOf(args)
	switch s.policy {
	case PolicyAlways:
		need = !t.Annotations.ReadOnly && risk != RiskLow
	case PolicyOnRisk:
		need = risk == RiskHigh
	}
	if !need {
		return ctx, nil
	}
	summary := t.Summary(args)
	refused := &Error{Kind: KindApprovalRequired,
		Message: fmt.Sprintf("%s needs approval (risk %s): %s", t.Name, risk, summary),
		Details: map[string]any{"summary": summary, "risk": string(risk)}}
	d, err := s.Ask(ctx, ApprovalRequest{Tool: t.Name, Summary: summary, Risk: risk, Args: raw,
		Choices: []Decision{DecisionAllowOnce, DecisionDeny}})
	if err != nil {
		if !errors.Is(err, ErrNoApprover) {
			refused.Message += ": " + err.Error()
			refused.Err = err
		}
		return ctx, refused
	}
	if d != DecisionAllowOnce {
		return ctx, refused
	}
	return context.WithValue(ctx, approvedKey{}, true), nil
}

// Ask puts req to the host's approver, else to the one the call's context
// carries (ContextWithApprover), and reports the decision as an
// EventApproval. Without either it returns ErrNoApprover; an answer that
// is not one of req.Choices is an error. Choices default to allow_once
// and deny.
func (s *Set) Ask(ctx context.Context, req ApprovalRequest) (d Decision, err error) {
	if len(req.Choices) == 0 {
		req.Choices = []Decision{DecisionAllowOnce, DecisionDeny}
	}
	if req.Session == "" {
		req.Session = SessionFrom(ctx)
	}
	start := time.Now()
	defer func() {
		if err != nil {
			d = DecisionDeny
		}
		s.emit(Event{Type: EventApproval, Tool: req.Tool, Time: time.Now(), Duration: time.Since(start), Err: err,
			Decision: d, Summary: req.Summary, Session: req.Session, Scope: req.Scope})
	}()
	a := s.approver
	if a == nil {
		a, _ = ctx.Value(ctxApproverKey{}).(Approver)
	}
	if a == nil {
		return DecisionDeny, ErrNoApprover
	}
	d, err = func() (d Decision, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("the approver panicked: %v", r)
			}
		}()
		return a(ctx, req)
	}()
	if err != nil {
		return DecisionDeny, err
	}
	if !req.Offers(d) {
		return DecisionDeny, fmt.Errorf("the approver answered %q, which is not one of %v", d, req.Choices)
	}
	return d, nil
}

func (s *Set) emit(e Event) {
	for _, h := range s.hooks {
		func() {
			defer func() { _ = recover() }() // a broken hook must not break the call
			h(e)
		}()
	}
}

// Truncate cuts s to at most max bytes (marker included) at a UTF-8
// boundary and appends [TruncationMarker].
func Truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max - len(TruncationMarker)
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + TruncationMarker, true
}

// unknownTool is the error for a call of a tool the set does not have,
// with the name a typo meant (`tgp call wirte_file`), also in
// details.did_you_mean for a host that offers it.
func (s *Set) unknownTool(name string) *Error {
	var names []string
	for _, t := range s.List() {
		names = append(names, t.Name)
	}
	near := suggest.Nearest(name, names)
	if near == "" {
		return &Error{Kind: KindNotFound, Message: fmt.Sprintf("unknown tool %q; list the tools with `tgp tools`", name)}
	}
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("unknown tool %q; did you mean %s? (list the tools with `tgp tools`)", name, near),
		Details: map[string]any{"did_you_mean": near}}
}
