package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tgp-go/tgp/sqldb"
)

// registryTable is the git-agent contract's tool registry: the
// reference agent inserts or updates its own row on startup, so that an
// orchestrator discovers it.
const registryTable = `CREATE TABLE IF NOT EXISTS tool_registry (
	name TEXT PRIMARY KEY,
	description TEXT NOT NULL,
	version TEXT NOT NULL,
	api_version TEXT NOT NULL,
	command TEXT NOT NULL,
	actions TEXT NOT NULL,
	input_schema TEXT NOT NULL,
	updated_at TEXT NOT NULL
)`

// agentInputSchema is GitAgentRequestV1 as JSON Schema: the canonical
// payload (the action-keyed payloads are taken too).
const agentInputSchema = `{"type":"object","required":["command"],"properties":{"command":{"oneOf":[` +
	`{"type":"object","required":["type"],"properties":{"type":{"const":"git_status"}}},` +
	`{"type":"object","required":["type","files"],"properties":{"type":{"const":"git_diff"},"files":{"type":"array","items":{"type":"string"}}}},` +
	`{"type":"object","required":["type"],"properties":{"type":{"const":"git_log"},"limit":{"type":"integer","minimum":0,"maximum":4294967295,"default":10}}},` +
	`{"type":"object","required":["type","files"],"properties":{"type":{"const":"git_add"},"files":{"type":"array","items":{"type":"string"}}}},` +
	`{"type":"object","required":["type","message"],"properties":{"type":{"const":"git_commit"},"message":{"type":"string"}}}]}}}`

// registerAgent inserts or updates git_agent's row in the tool_registry
// table of the database spec names ("sqlite:PATH"), creating the table
// when it is missing.
func registerAgent(ctx context.Context, spec string) error {
	driver, dsn, ok := strings.Cut(spec, ":")
	if !ok || driver != "sqlite" || dsn == "" {
		return fmt.Errorf("--registry %q: want sqlite:PATH", spec)
	}
	db, err := sqldb.Open(ctx, "sqlite", dsn)
	if err != nil {
		return fmt.Errorf("--registry %s: %w", spec, err)
	}
	defer db.Close()
	actions, _ := json.Marshal(agentActions)
	if _, err := db.SQL().ExecContext(ctx, registryTable); err != nil {
		return fmt.Errorf("--registry %s: create tool_registry: %w", spec, err)
	}
	_, err = db.SQL().ExecContext(ctx, `INSERT INTO tool_registry (name, description, version, api_version, command, actions, input_schema, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(name) DO UPDATE SET description = excluded.description, version = excluded.version, api_version = excluded.api_version,
	command = excluded.command, actions = excluded.actions, input_schema = excluded.input_schema, updated_at = excluded.updated_at`,
		"git_agent", "Git operations on the toolbox root (status, diff, log, add, commit), in process: one ActionRequest on stdin, one ActionResponse on stdout",
		version(), "v1", "tgp agent", string(actions), agentInputSchema, time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("--registry %s: register git_agent: %w", spec, err)
	}
	return nil
}
