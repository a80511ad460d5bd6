package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
)

// The worker protocol: each frame is a 4-byte big-endian length and that
// many bytes of JSON. The parent sends config (once), exec and cancel, and
// answers the worker's bridge calls with reply; the worker answers config
// with ready, sends call and, when a run ends, done.
const (
	frameConfig = "config"
	frameExec   = "exec"
	frameCancel = "cancel"
	frameCall   = "call"
	frameReply  = "reply"
	frameDone   = "done"
	// ready is the worker's answer to config once it is warm: a process
	// that never sends it is not a tgp worker (a misconfigured
	// sandbox.worker_command), and the parent says so instead of hanging.
	frameReady = "ready"
)

// maxFrame bounds one frame: file contents, fetch bodies and SQL results
// cross the pipe, and a frame is decoded in one piece.
const maxFrame = 64 << 20

// frame is every message; Type says which fields are set.
type frame struct {
	Type string `json:"t"`
	ID   uint64 `json:"id,omitempty"`
	// Run is the exec a call belongs to: the parent serves a call only
	// for the run in progress, so a late call from an earlier run (an
	// async read still in flight when it timed out) never reaches the next
	// run's files or transaction.
	Run uint64 `json:"run,omitempty"`

	Config  *workerConfig `json:"config,omitempty"`
	Exec    *workerExec   `json:"exec,omitempty"`
	Outcome *Outcome      `json:"outcome,omitempty"`

	// call (worker → parent) and reply (parent → worker)
	Op      string            `json:"op,omitempty"`   // read_file, list_files, write_file, exec_sql, fetch, host_func
	Func    string            `json:"func,omitempty"` // host_func: the function's name
	Arg     json.RawMessage   `json:"arg,omitempty"`  // host_func: its argument
	Path    string            `json:"path,omitempty"`
	Data    []byte            `json:"data,omitempty"`
	Query   string            `json:"query,omitempty"`
	Params  []any             `json:"params,omitempty"`
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Files   []string          `json:"files,omitempty"`
	Result  json.RawMessage   `json:"result,omitempty"`
	Status  int               `json:"status,omitempty"`
	Err     string            `json:"err,omitempty"`
	// Denied marks an Err that is a refusal of the jail or of the
	// sandbox's policy (a permission error on the worker's side).
	Denied bool `json:"denied,omitempty"`
	// Kind types an Err the tool should see typed: KindPermissionDenied
	// or KindSecretUnavailable.
	Kind string `json:"kind,omitempty"`
}

// deniedError is a refusal relayed from the parent: it matches
// fs.ErrPermission as the parent's error did.
type deniedError struct{ msg string }

func (e *deniedError) Error() string        { return e.msg }
func (e *deniedError) Is(target error) bool { return target == fs.ErrPermission }

// denied builds a policy refusal (write dirs, git's path rules, fetch
// allow-list) that matches fs.ErrPermission.
func denied(format string, args ...any) error {
	return &deniedError{msg: fmt.Sprintf(format, args...)}
}

// workerConfig is the Runner's configuration as the worker rebuilds it.
type workerConfig struct {
	MemLimit    uint64   `json:"mem_limit"`
	AddrLimit   uint64   `json:"addr_limit"`
	DataLimit   uint64   `json:"data_limit,omitempty"`
	TimeoutMS   int64    `json:"timeout_ms"`
	Imports     []string `json:"imports"`
	FetchURLs   []string `json:"fetch_urls"`
	WriteDirs   []string `json:"write_dirs"`
	Seed        *int64   `json:"seed,omitempty"`
	MaxLogBytes int      `json:"max_log_bytes"`
	MaxStack    int      `json:"max_stack"`
	MaxFetch    int64    `json:"max_fetch"`
	ModulesDir  string   `json:"modules_dir,omitempty"`
	// HostFuncs are the host functions tools may call: the worker
	// defines them, the parent runs them.
	HostFuncs []string `json:"host_funcs,omitempty"`
}

// workerExec is one run.
type workerExec struct {
	Path      string `json:"path"`
	Source    []byte `json:"source"`
	Args      any    `json:"args"`
	TimeoutMS int64  `json:"timeout_ms"`
	HasFS     bool   `json:"has_fs"`
	HasSQL    bool   `json:"has_sql"`
	// Perms is the tool's permissions export as the host read it (nil:
	// none); Secrets are the run's placeholders by name and SecretErrs
	// why tgp.secret fails for the others. No value ever crosses.
	Perms      *Permissions      `json:"perms,omitempty"`
	Secrets    map[string]string `json:"secrets,omitempty"`
	SecretErrs map[string]string `json:"secret_errs,omitempty"`
}

func writeFrame(w io.Writer, f *frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("sandbox worker: encode %s frame: %w", f.Type, err)
	}
	if len(b) > maxFrame {
		return fmt.Errorf("sandbox worker: %s frame of %d bytes is over the %d-byte limit", f.Type, len(b), maxFrame)
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("sandbox worker: write %s frame: %w", f.Type, err)
	}
	return nil
}

func readFrame(r io.Reader) (*frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("sandbox worker: frame of %d bytes is over the %d-byte limit", n, maxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("sandbox worker: short frame: %w", err)
	}
	f := &frame{}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("sandbox worker: decode frame: %w", err)
	}
	return f, nil
}
