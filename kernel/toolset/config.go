package toolset

import (
	"errors"
	"fmt"
	"time"
)

// FSConfig configures the jail.
type FSConfig struct {
	AllowedDirs          []string `koanf:"allowed_dirs"`
	BlockUpwardTraversal bool     `koanf:"block_upward_traversal"`
}

// SandboxConfig configures the goja sandbox.
type SandboxConfig struct {
	Timeout          time.Duration `koanf:"timeout"`
	MemoryMB         int           `koanf:"memory_mb"`
	AllowedImports   []string      `koanf:"allowed_imports"`
	AllowedFetchURLs []string      `koanf:"allowed_fetch_urls"`
	Check            CheckConfig   `koanf:"check"`
	// Isolation is "process" (the default: a pool of warm worker
	// processes, each under an OS address-space limit that holds for any
	// allocation, killed and replaced on timeout or limit; the bridge
	// stays in the kernel) or "inproc" (tools run on goja in the kernel's
	// process, faster, with a memory limit that trusts the tool: objects
	// built in a JS loop can overshoot it before the watchdog stops the
	// run).
	Isolation string `koanf:"isolation"`
	// Workers is how many worker processes may run at once (process
	// isolation).
	Workers int `koanf:"workers"`
	// WorkerCommand is the argv that starts a worker; empty means this
	// executable with the hidden __worker subcommand (the tgp binary).
	WorkerCommand []string `koanf:"worker_command"`
	// ModulesDir is a host directory laid out like node_modules that
	// allowed packages missing from the toolbox are bundled from
	// (relative paths are relative to the configuration file).
	ModulesDir string `koanf:"modules_dir"`
	// TrustedSigners is the path of an allowed_signers file (git's
	// gpg.ssh.allowedSignersFile format): when set, exec_tool and
	// check_tool refuse a tool whose last change is not a commit signed
	// by a key it lists for the committer (relative paths are relative
	// to the configuration file).
	TrustedSigners string `koanf:"trusted_signers"`
	// RequirePermissions refuses to run a tool that does not export
	// permissions (sandbox.Permissions); off, such a tool runs under this
	// configuration alone.
	RequirePermissions bool `koanf:"require_permissions"`
	// Secrets are the secrets the kernel brokers for tools, by name: a
	// tool that lists the name in its permissions.secrets gets a
	// placeholder from tgp.secret(name), and the kernel puts the value of
	// the environment variable Env in its place in a fetch to one of
	// URLs, and nowhere else.
	Secrets map[string]SecretConfig `koanf:"secrets"`
}

// SecretConfig is one brokered secret (sandbox.secrets.NAME).
type SecretConfig struct {
	// Env names the environment variable that holds the value; the value
	// is never configuration, never in a file.
	Env string `koanf:"env"`
	// URLs are the prefixes the value may be sent to.
	URLs []string `koanf:"urls"`
}

// CheckConfig configures check_tool's static rules.
type CheckConfig struct {
	// Rules maps a rule id to off | warning | error.
	Rules map[string]string `koanf:"rules"`
}

// SQLConfig configures exec_sql.
type SQLConfig struct {
	Driver   string `koanf:"driver"`
	DSNEnv   string `koanf:"dsn_env"`
	ReadOnly bool   `koanf:"read_only"`
}

// GitToolsConfig configures the eleven git tools.
type GitToolsConfig struct {
	Enabled   bool `koanf:"enabled"`
	TimeoutMS int  `koanf:"timeout_ms"`
	MaxBytes  int  `koanf:"max_bytes"`
}

// ConfigError reports a configuration key with a bad value.
type ConfigError struct {
	Key     string // "" for a file that does not parse
	Source  string // file path (with :line), "environment NAME" or "options"
	Problem string
}

// ErrConfig matches every *ConfigError with errors.Is.
var ErrConfig = errors.New("invalid configuration")

func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("config file %s: %s", e.Source, e.Problem)
	}
	if e.Source != "" {
		return fmt.Sprintf("config %s (%s): %s", e.Key, e.Source, e.Problem)
	}
	return fmt.Sprintf("config %s: %s", e.Key, e.Problem)
}
