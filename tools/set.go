package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"
	"unicode/utf8"
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

// ApprovalRequest is what an Approver is asked.
type ApprovalRequest struct {
	Tool    string          `json:"tool"`
	Summary string          `json:"summary"`
	Risk    Risk            `json:"risk"`
	Args    json.RawMessage `json:"args"`
}

// Approver is supplied by the host; it returns true to allow the call.
type Approver func(ctx context.Context, req ApprovalRequest) (bool, error)

// EventType names a point in a call's life.
type EventType string

// Event types.
const (
	EventStart     EventType = "start"
	EventEnd       EventType = "end"
	EventError     EventType = "error"
	EventTruncated EventType = "truncated"
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
}

// TruncationMarker is appended where output was cut.
const TruncationMarker = "\n\n... [output truncated]"

// DefaultMaxOutputBytes caps string results no tool capped itself.
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
		return Result{}, &Error{Kind: KindNotFound, Message: fmt.Sprintf("unknown tool %q; list the tools with `tgp tools`", name)}
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
	if str, ok := res.Value.(string); ok && s.maxOutput > 0 {
		if cut, truncated := Truncate(str, s.maxOutput); truncated {
			res.Value, res.Truncated = cut, true
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
	if s.approver == nil {
		return ctx, refused
	}
	ok, err := s.approver(ctx, ApprovalRequest{Tool: t.Name, Summary: summary, Risk: risk, Args: raw})
	if err != nil {
		refused.Message += ": " + err.Error()
		refused.Err = err
		return ctx, refused
	}
	if !ok {
		return ctx, refused
	}
	return context.WithValue(ctx, approvedKey{}, true), nil
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
