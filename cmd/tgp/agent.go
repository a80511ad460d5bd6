package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/tools"
)

// actionRequest is the git-agent contract's request (seeds/001): one JSON
// object on stdin.
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
	return &cobra.Command{
		Use:   "agent",
		Short: "Answer one git-agent ActionRequest from stdin with one ActionResponse on stdout",
		Long: "The git-agent contract v1: read one ActionRequest JSON from stdin, run its action, write one\n" +
			"ActionResponse JSON to stdout and exit (0 when status is success, 1 otherwise).\n" +
			"Actions: git_status, git_diff {files}, git_log {limit: number or string, default 10},\n" +
			"git_add {files}, git_commit {message}, and any other kernel tool by name with the payload as its arguments.",
		Example: `  echo '{"request_id":"1","tool":"git_agent","action":"git_log","payload":{"limit":"5"}}' | tgp agent`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			resp := a.handleAction(cmd, a.stdin)
			if err := writeJSON(a.stdout, resp); err != nil {
				return &exitError{code: 1, err: err}
			}
			if resp.Code != 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
}

func (a *app) handleAction(cmd *cobra.Command, in io.Reader) actionResponse {
	var req actionRequest
	fail := func(msg string, meta map[string]any) actionResponse {
		return actionResponse{RequestID: orNull(req.RequestID), APIVersion: orNull(req.APIVersion), Status: "error", Code: 1,
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
	if req.Action == "" {
		return fail("ActionRequest has no action", map[string]any{"kind": string(tools.KindBadArgs)})
	}
	toolName, toolArgs, err := mapAction(req.Action, req.Payload)
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
	}
	return out
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
