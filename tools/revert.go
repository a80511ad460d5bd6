package tools

// RevertResult is revert_tool's result.
type RevertResult struct {
	Path string `json:"path"`
	// From is the commit whose content was restored.
	From string `json:"from"`
	// Warnings are check_tool's warnings on the restored content, and
	// Errors its errors when force restored it anyway.
	Warnings  []Diagnostic `json:"warnings,omitempty"`
	Errors    []Diagnostic `json:"errors,omitempty"`
	Persisted *Persisted   `json:"persisted"`
}
