package hostapi

// Outcome is exec_tool's result.
type Outcome struct {
	Success    bool       `json:"success"`
	Result     any        `json:"result"`
	Logs       []string   `json:"logs"`
	Error      *ExecError `json:"error,omitempty"`
	DurationMS float64    `json:"duration_ms"`
	// Persisted is set by a host that commits the files the tool wrote
	// through tgp.write_file (the kernel: a *tools.Persisted).
	Persisted any `json:"persisted,omitempty"`
}

// Error kinds of a failed run.
const (
	KindTimeout           = "timeout"
	KindMemoryLimit       = "memory_limit"
	KindStackOverflow     = "stack_overflow"
	KindRuntime           = "runtime_error"
	KindCompile           = "compile_error"
	KindSecurity          = "security_violation"
	KindModuleNotFound    = "module_not_found"
	KindNotSerializable   = "not_serializable"
	KindCancelled         = "cancelled"
	KindResourceLimit     = "resource_limit"
	KindUnhandledRejected = "unhandled_rejection"
)

// ExecError describes why a run failed, at a TS position when known.
type ExecError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func (e *ExecError) Error() string { return e.Kind + ": " + e.Message }

// Err is the run's failure as an error (an *ExecError), nil when it
// succeeded: `if err := out.Err(); err != nil` reads as any Go call.
func (o *Outcome) Err() error {
	if o == nil || o.Success {
		return nil
	}
	if o.Error == nil {
		return &ExecError{Kind: KindRuntime, Message: "the tool failed"}
	}
	return o.Error
}
