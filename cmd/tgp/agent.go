package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/tools"
)

// actionRequest is the git-agent contract's request (v1, README "tgp
// agent"): one JSON object on stdin.
type actionRequest struct {
	RequestID     json.RawMessage `json:"request_id"`
	APIVersion    json.RawMessage `json:"api_version"`
	Tool          string          `json:"tool"`
	Action        string          `json:"action"`
	Context       string          `json:"context"`
	PlanID        json.RawMessage `json:"plan_id"`
	TaskID        json.RawMessage `json:"task_id"`
	CorrelationID json.RawMessage `json:"correlation_id"`
	Payload       json.RawMessage `json:"payload"`
}

type actionResult struct {
	OutputType string         `json:"output_type"`
	Data       any            `json:"data"`
	Metadata   map[string]any `json:"metadata"`
}

// actionResponse is the contract's response: one JSON object on stdout.
// Absent ids are echoed as null.
type actionResponse struct {
	RequestID     json.RawMessage `json:"request_id"`
	APIVersion    json.RawMessage `json:"api_version"`
	Status        string          `json:"status"`
	Code          int             `json:"code"`
	Result        *actionResult   `json:"result"`
	Error         *string         `json:"error"`
	PlanID        json.RawMessage `json:"plan_id"`
	TaskID        json.RawMessage `json:"task_id"`
	CorrelationID json.RawMessage `json:"correlation_id"`
}

func orNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

func newAgentCmd(a *app) *cobra.Command {
	var registry string
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Answer one git-agent ActionRequest from stdin with one ActionResponse on stdout",
		Long: "The git-agent contract v1: read one ActionRequest JSON from stdin, run its action, write one\n" +
			"ActionResponse JSON to stdout and exit (0 when status is success, 1 otherwise).\n" +
			"Actions: git_status, git_diff {files}, git_log {limit: number or string, default 10},\n" +
			"git_add {files}, git_commit {message}, and any other kernel tool by name with the payload as its arguments.\n" +
			"The canonical payload {\"command\": {\"type\": \"git_log\", \"limit\": 5}} (GitAgentCommandV1) is taken too,\n" +
			"with or without action. One JSON log line per request goes to stderr with request_id, plan_id,\n" +
			"task_id and correlation_id. --registry sqlite:PATH registers git_agent in PATH's tool_registry table first.",
		Example: `  echo '{"request_id":"1","tool":"git_agent","action":"git_log","payload":{"limit":"5"}}' | tgp agent
  echo '{"request_id":"2","payload":{"command":{"type":"git_log","limit":5}}}' | tgp agent --registry sqlite:memory.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if registry != "" {
				if err := registerAgent(cmd.Context(), registry); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			start := time.Now()
			req, resp := a.handleAction(cmd, a.stdin)
			logAction(a.stderr, req, resp, time.Since(start))
			if err := writeJSON(a.stdout, resp); err != nil {
				return &exitError{code: 1, err: err}
			}
			if resp.Code != 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&registry, "registry", "", "register git_agent (insert or update) in the tool_registry table of this database at startup: sqlite:PATH")
	return cmd
}

// logAction writes the request's one structured log line: what an
// orchestrator joins its plan, task and trace on.
func logAction(w io.Writer, req actionRequest, resp actionResponse, took time.Duration) {
	attrs := []any{
		slog.Any("request_id", orNull(req.RequestID)),
		slog.String("action", req.Action),
		slog.Any("plan_id", orNull(req.PlanID)),
		slog.Any("task_id", orNull(req.TaskID)),
		slog.Any("correlation_id", orNull(req.CorrelationID)),
		slog.String("status", resp.Status),
		slog.Int("code", resp.Code),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
	}
	level := slog.LevelInfo
	if resp.Code != 0 {
		level = slog.LevelError
		if resp.Result != nil {
			if msg, ok := resp.Result.Data.(string); ok {
				attrs = append(attrs, slog.String("error", msg))
			}
		}
	}
	slog.New(slog.NewJSONHandler(w, nil)).With(slog.String("agent", "git_agent")).Log(context.Background(), level, "action", attrs...)
}

func (a *app) handleAction(cmd *cobra.Command, in io.Reader) (actionRequest, actionResponse) {
	var req actionRequest
	fail := func(msg string, meta map[string]any) (actionRequest, actionResponse) {
		return req, actionResponse{RequestID: orNull(req.RequestID), APIVersion: orNull(req.APIVersion), Status: "error", Code: 1,
			Result: &actionResult{OutputType: "error", Data: msg, Metadata: meta},
			PlanID: orNull(req.PlanID), TaskID: orNull(req.TaskID), CorrelationID: orNull(req.CorrelationID)}
	}
	body, err := io.ReadAll(in)
	if err != nil {
		return fail("cannot read stdin: "+err.Error(), nil)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		req = actionRequest{}
		return fail("invalid ActionRequest JSON: "+err.Error(), map[string]any{"kind": string(tools.KindBadArgs)})
	}
	action, payload, err := canonical(req.Action, req.Payload)
	if err != nil {
		return fail(err.Error(), map[string]any{"kind": string(tools.KindBadArgs)})
	}
	if req.Action == "" {
		req.Action = action
	}
	if action == "" {
		return fail("ActionRequest has no action", map[string]any{"kind": string(tools.KindBadArgs)})
	}
	toolName, toolArgs, err := mapAction(action, payload)
	if err != nil {
		return fail(err.Error(), map[string]any{"kind": string(tools.KindBadArgs)})
	}
	ctx := cmd.Context()
	k, err := a.openKernel(ctx, true)
	if err != nil {
		return fail(err.Error(), map[string]any{"kind": string(tools.KindExecutionFailed)})
	}
	res, callErr := k.Call(ctx, toolName, toolArgs)
	if err := k.Shutdown(ctx); err != nil && callErr == nil {
		callErr = err
	}
	if callErr != nil {
		te := tools.Classify(callErr, nil)
		return fail(te.Message, map[string]any{"kind": string(te.Kind)})
	}
	out := actionResponse{RequestID: orNull(req.RequestID), APIVersion: orNull(req.APIVersion), Status: "success", Code: 0,
		PlanID: orNull(req.PlanID), TaskID: orNull(req.TaskID), CorrelationID: orNull(req.CorrelationID)}
	if s, ok := res.Value.(string); ok {
		out.Result = &actionResult{OutputType: "text", Data: s}
	} else {
		out.Result = &actionResult{OutputType: "json", Data: res.Value}
	}
	if res.Truncated {
		out.Result.Metadata = map[string]any{"truncated": true}
		if res.TruncatedReason != "" {
			out.Result.Metadata["truncated_reason"] = res.TruncatedReason
		}
	}
	return req, out
}

// agentActions are the contract's actions (GitAgentCommandV1's variants).
var agentActions = []string{"git_status", "git_diff", "git_log", "git_add", "git_commit"}

// canonical reads the contract's canonical payload, GitAgentRequestV1:
// {"command": {"type": "git_log", "limit": 5}} (serde's internally tagged
// GitAgentCommandV1), into the action and the action-keyed payload the
// rest of the agent takes, checked as serde would (files and message are
// required, limit is a u32 defaulting to 10). Any other payload is
// returned as it is.
func canonical(action string, payload json.RawMessage) (string, json.RawMessage, error) {
	var outer map[string]json.RawMessage
	if json.Unmarshal(payload, &outer) != nil {
		return action, payload, nil
	}
	var cmd map[string]json.RawMessage
	if raw, ok := outer["command"]; !ok || json.Unmarshal(raw, &cmd) != nil {
		return action, payload, nil // not an object: a tool's own "command" argument
	}
	rawType, ok := cmd["type"]
	var typ string
	if !ok || json.Unmarshal(rawType, &typ) != nil {
		return action, payload, nil
	}
	if !slices.Contains(agentActions, typ) {
		return "", nil, fmt.Errorf("payload.command.type %q is not a GitAgentCommandV1 variant (%s)", typ, strings.Join(agentActions, ", "))
	}
	if action != "" && action != typ {
		return "", nil, fmt.Errorf("action %q and payload.command.type %q disagree", action, typ)
	}
	delete(cmd, "type")
	require := func(field, what string) error {
		if _, ok := cmd[field]; !ok {
			return fmt.Errorf("payload.command: %s needs %s (%s)", typ, field, what)
		}
		return nil
	}
	switch typ {
	case "git_diff", "git_add":
		if err := require("files", "an array of paths"); err != nil {
			return "", nil, err
		}
	case "git_commit":
		if err := require("message", "a string"); err != nil {
			return "", nil, err
		}
	case "git_log":
		if raw, ok := cmd["limit"]; ok {
			var n uint32
			if json.Unmarshal(raw, &n) != nil {
				return "", nil, fmt.Errorf("payload.command.limit must be a whole number from 0 to 4294967295, got %s", raw)
			}
		}
	}
	out, err := json.Marshal(cmd)
	return typ, out, err
}

var conventional = regexp.MustCompile(`^([a-z]+)(\(([a-z0-9_-]+)\))?: (.+)$`)

// mapAction turns a contract action and payload into a kernel tool call.
func mapAction(action string, payload json.RawMessage) (string, json.RawMessage, error) {
	p := map[string]any{}
	if len(payload) > 0 && string(payload) != "null" {
		if err := json.Unmarshal(payload, &p); err != nil {
			return "", nil, fmt.Errorf("payload must be a JSON object: %v", err)
		}
	}
	files := func() ([]string, error) {
		v, ok := p["files"]
		if !ok || v == nil {
			return nil, nil
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("payload.files must be an array of strings")
		}
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("payload.files must be an array of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	var args map[string]any
	switch action {
	case "git_status":
		args = map[string]any{}
	case "git_diff":
		fs, err := files()
		if err != nil {
			return "", nil, err
		}
		args = map[string]any{}
		if len(fs) > 0 {
			args["paths"] = fs
		}
	case "git_log":
		limit := 10
		switch v := p["limit"].(type) {
		case nil:
		case float64:
			limit = int(v)
			if float64(limit) != v {
				return "", nil, fmt.Errorf("payload.limit must be a whole number, got %v", v)
			}
		case string:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return "", nil, fmt.Errorf("payload.limit must be a number, got %q", v)
			}
			limit = n
		default:
			return "", nil, fmt.Errorf("payload.limit must be a number or a numeric string")
		}
		if limit < 1 {
			return "", nil, fmt.Errorf("payload.limit must be at least 1, got %d", limit)
		}
		args = map[string]any{"max_count": limit}
	case "git_add":
		fs, err := files()
		if err != nil {
			return "", nil, err
		}
		if len(fs) == 0 {
			return "", nil, fmt.Errorf("git_add needs payload.files, a non-empty array of paths")
		}
		args = map[string]any{"paths": fs}
	case "git_commit":
		msg, ok := p["message"].(string)
		if !ok || strings.TrimSpace(msg) == "" {
			return "", nil, fmt.Errorf("git_commit needs payload.message, a non-empty string")
		}
		// The contract carries one message; the kernel's git_commit takes
		// its conventional parts.
		args = map[string]any{"message": msg}
		if typ, ok := p["type"].(string); ok {
			args["type"] = typ
			if scope, ok := p["scope"].(string); ok {
				args["scope"] = scope
			}
		} else if m := conventional.FindStringSubmatch(msg); m != nil {
			args["type"], args["message"] = m[1], m[4]
			if m[3] != "" {
				args["scope"] = m[3]
			}
		} else {
			return "", nil, fmt.Errorf("git_commit payload.message must be conventional: \"type(scope): description\" or \"type: description\"")
		}
	default:
		// Any other kernel tool by name, the payload as its arguments.
		if len(payload) == 0 || string(payload) == "null" {
			payload = json.RawMessage("{}")
		}
		return action, payload, nil
	}
	raw, err := json.Marshal(args)
	return action, raw, err
}
