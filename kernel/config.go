package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/sandbox/hostapi"
)

// Config is the kernel configuration. Field tags name the keys of
// tgp.config.yaml; the environment form of a key is TGP_ + the key upper-cased
// with dots as underscores (git.retry.max_attempts → TGP_GIT_RETRY_MAX_ATTEMPTS).
type Config struct {
	RootDir  string         `koanf:"root_dir"`
	Git      GitConfig      `koanf:"git"`
	FS       FSConfig       `koanf:"fs"`
	Sandbox  SandboxConfig  `koanf:"sandbox"`
	SQL      SQLConfig      `koanf:"sql"`
	Tools    ToolsConfig    `koanf:"tools"`
	Approval ApprovalConfig `koanf:"approval"`
	Serve    ServeConfig    `koanf:"serve"`
	Shell    ShellConfig    `koanf:"shell"`
}

// GitConfig configures the remote and how changes are persisted.
type GitConfig struct {
	Remote        string   `koanf:"remote"`
	Branch        string   `koanf:"branch"`
	Provider      string   `koanf:"provider"`
	Repo          string   `koanf:"repo"`
	Depth         int      `koanf:"depth"`
	WriteStrategy string   `koanf:"write_strategy"`
	Author        Identity `koanf:"author"`
	TokenEnv      string   `koanf:"token_env"`
	// CarryKeyEnv names the variable holding the fleet's secret that
	// proves a carry (refs/tgp/carry/, git.retry.carry): without it a
	// network remote gets no carries.
	CarryKeyEnv string `koanf:"carry_key_env"`
	// SigningKey is the path of an unencrypted OpenSSH private key that
	// signs every commit the kernel makes (git's SSH signatures); empty:
	// git's commit.gpgsign + gpg.format=ssh + user.signingkey, else
	// unsigned. A relative path is read from the config file's directory.
	SigningKey string      `koanf:"signing_key"`
	Retry      RetryConfig `koanf:"retry"`
	PR         PRConfig    `koanf:"pr"`
	APIURL     string      `koanf:"api_url"`
	// RefreshInterval is how stale a long-lived kernel's view of the
	// remote may get: before a call that reads the toolbox, a remote
	// check older than this is repeated ("0": before every such call;
	// "off": at boot only). See Kernel.refresh.
	RefreshInterval string `koanf:"refresh_interval"`
	// LockDir is where this machine's processes that push to one remote
	// take turns ("" : the user's cache directory; "off": no turns).
	LockDir string `koanf:"lock_dir"`
	// DeferReplays: a replay a write pushed to a local remote reaches the
	// root's .git when something next reads the root (gitbackend's
	// pending replay), not at once.
	DeferReplays bool `koanf:"defer_replays"`
	// PushesPerMinute is the machine's push budget with the remote: auto
	// (6, GitHub's documented limit, when the remote is on github.com;
	// none elsewhere), off, or a count (RemoteBudgets).
	PushesPerMinute string `koanf:"pushes_per_minute"`
	// ReadsPerSecond bounds fetches and tip checks: auto (12, a fifth
	// under GitHub's documented 15: sessions reach the host with the
	// link's jitter; whenever there is a push budget), off, or a count.
	ReadsPerSecond string `koanf:"reads_per_second"`
	// Journal is the PostgreSQL DSN of the journal that the machines
	// pushing to the remote share (empty: none). It holds a password, so
	// it comes from the environment (TGP_GIT_JOURNAL), never the file.
	Journal string `koanf:"journal"`
	// JournalAck is when a write through the journal returns: landed
	// (on the remote, the default) or journal (once its entry is durable
	// in the journal; the result says landed: false and the entry's id,
	// and the entry lands with the fleet's next push).
	JournalAck string `koanf:"journal_ack"`
}

// RemoteBudgets resolves git.pushes_per_minute and git.reads_per_second
// for the remote (0: no budget).
func (g GitConfig) RemoteBudgets() (pushesPerMinute, readsPerSecond int, err error) {
	pushes, err := budgetValue("git.pushes_per_minute", g.PushesPerMinute)
	if err != nil {
		return 0, 0, err
	}
	if pushes < 0 { // auto
		pushes = 0
		if forge.Host(g.Remote) == "github.com" {
			pushes = 6
		}
	}
	reads, err := budgetValue("git.reads_per_second", g.ReadsPerSecond)
	if err != nil {
		return 0, 0, err
	}
	if reads < 0 {
		reads = 0
		if pushes > 0 {
			reads = 12
		}
	}
	return pushes, reads, nil
}

// validateJournalAck checks git.journal_ack: landed or journal, and
// journal only with a journal to be durable in.
func (g GitConfig) validateJournalAck() error {
	switch g.JournalAck {
	case "", "landed":
		return nil
	case "journal":
		if g.Journal == "" {
			return &ConfigError{Key: "git.journal_ack", Problem: "journal needs git.journal (set TGP_GIT_JOURNAL=postgres://...): without a journal a write is acknowledged only once it is on the remote"}
		}
		return nil
	}
	return &ConfigError{Key: "git.journal_ack", Problem: fmt.Sprintf("%q is not allowed; use one of: landed, journal", g.JournalAck)}
}

// budgetValue parses a budget key: -1 for auto (and empty), 0 for off.
func budgetValue(key, v string) (int, error) {
	switch strings.TrimSpace(v) {
	case "", "auto":
		return -1, nil
	case "off", "0":
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, &ConfigError{Key: key, Problem: fmt.Sprintf("%q is not a budget; use auto, off or a positive count such as 6", v)}
	}
	return n, nil
}

// MachineLockDir resolves git.lock_dir against environ: empty is
// $XDG_CACHE_HOME/tgp/locks, else $HOME/.cache/tgp/locks (so a process
// started with another HOME is another machine); "off" is none.
func (g GitConfig) MachineLockDir(environ []string) string {
	switch g.LockDir {
	case "off":
		return ""
	case "":
	default:
		return g.LockDir
	}
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	if x := get("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "tgp", "locks")
	}
	if h := get("HOME"); h != "" {
		return filepath.Join(h, ".cache", "tgp", "locks")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "tgp", "locks")
	}
	return ""
}

// RefreshEvery parses git.refresh_interval: off is true for "off".
func (g GitConfig) RefreshEvery() (every time.Duration, off bool, err error) {
	if g.RefreshInterval == "off" {
		return 0, true, nil
	}
	d, err := time.ParseDuration(g.RefreshInterval)
	if g.RefreshInterval == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 {
		return 0, false, &ConfigError{Key: "git.refresh_interval", Problem: fmt.Sprintf("%q is not a duration; use e.g. 5s, 0 (before every read) or off (boot only)", g.RefreshInterval)}
	}
	return d, false, nil
}

// Identity is a commit author or committer.
type Identity struct {
	Name  string `koanf:"name"`
	Email string `koanf:"email"`
}

// RetryConfig bounds the push-replay loop.
type RetryConfig struct {
	// Deadline bounds a direct push (every attempt and the wait for this
	// machine's turn).
	Deadline    time.Duration `koanf:"deadline"`
	BaseDelay   time.Duration `koanf:"base_delay"`
	MaxAttempts int           `koanf:"max_attempts"`
	// Carry lets a push that lost leave its commits on the remote for the
	// push that won to land with its own (refs/tgp/carry/).
	Carry bool `koanf:"carry"`
}

// PRConfig configures pull-request mode.
type PRConfig struct {
	// Per is "session" (one branch and PR per kernel session) or "tool".
	Per string `koanf:"per"`
}

// ToolsConfig configures tool families.
type ToolsConfig struct {
	Git GitToolsConfig `koanf:"git"`
}

// ServeConfig guards `tgp serve --http`.
type ServeConfig struct {
	// TokenEnv names the variable holding the bearer token every HTTP
	// request must carry (empty: no token).
	TokenEnv string `koanf:"token_env"`
	// AllowedOrigins pass the Origin check besides loopback origins.
	AllowedOrigins []string `koanf:"allowed_origins"`
	// MaxBodyBytes bounds a request body (413 above it).
	MaxBodyBytes int64 `koanf:"max_body_bytes"`
	// SessionIdleTimeout closes sessions idle this long.
	SessionIdleTimeout time.Duration `koanf:"session_idle_timeout"`
}

// ApprovalConfig configures the approval policy.
type ApprovalConfig struct {
	Policy string `koanf:"policy"`
}

// The sections a toolset reads are kernel/toolset's types (a toolset
// builds on them without importing the kernel).
type (
	FSConfig       = toolset.FSConfig
	SandboxConfig  = toolset.SandboxConfig
	SecretConfig   = toolset.SecretConfig
	CheckConfig    = toolset.CheckConfig
	SQLConfig      = toolset.SQLConfig
	GitToolsConfig = toolset.GitToolsConfig
	// ConfigError reports a configuration key with a bad value.
	ConfigError = toolset.ConfigError
)

// ErrConfig matches every *ConfigError with errors.Is.
var ErrConfig = toolset.ErrConfig

// Defaults are the built-in configuration values, the lowest layer.
func Defaults() map[string]any {
	return withShellDefaults(map[string]any{
		"root_dir":                   ".tgp",
		"git.remote":                 "",
		"git.branch":                 "", // empty: follow the remote's HEAD like git clone
		"git.provider":               "auto",
		"git.repo":                   "",
		"git.depth":                  0,
		"git.write_strategy":         "direct",
		"git.author.name":            "",
		"git.author.email":           "",
		"git.token_env":              "TGP_GIT_TOKEN",
		"git.carry_key_env":          "TGP_CARRY_KEY",
		"git.signing_key":            "",
		"git.retry.max_attempts":     8,
		"git.retry.deadline":         "2m",
		"git.retry.carry":            true,
		"git.lock_dir":               "",
		"git.defer_replays":          true,
		"git.pushes_per_minute":      "auto",
		"git.reads_per_second":       "auto",
		"git.journal":                "",
		"git.journal_ack":            "landed",
		"git.retry.base_delay":       "20ms",
		"git.pr.per":                 "session",
		"git.api_url":                "",
		"git.refresh_interval":       "5s",
		"fs.allowed_dirs":            []any{"tools", "data"},
		"fs.block_upward_traversal":  true,
		"sandbox.timeout":            "5s",
		"sandbox.memory_mb":          128,
		"sandbox.allowed_imports":    []any{"@tgp/std", "zod", "date-fns"},
		"sandbox.allowed_fetch_urls": []any{},
		"sandbox.check.rules":        map[string]any{},
		"sandbox.isolation":          "process",
		"sandbox.workers":            4,
		"sandbox.worker_command":     []any{},
		"sandbox.modules_dir":        "",
		"sandbox.trusted_signers":    "",
		"sql.driver":                 "",
		"sql.dsn_env":                "TGP_SQL_DSN",
		"sql.read_only":              false,
		"tools.git.enabled":          true,
		"tools.git.timeout_ms":       30000,
		"tools.git.max_bytes":        1048576,
		"approval.policy":            "never",
		"serve.token_env":            "",
		"serve.allowed_origins":      []any{},
		"serve.max_body_bytes":       4 << 20,
		"serve.session_idle_timeout": "30m",

		// Per-tool permissions and brokered secrets (docs/tool-permissions.md).
		"sandbox.require_permissions": false,
		"sandbox.secrets":             map[string]any{},
	})
}

// LoadOptions says where configuration comes from.
type LoadOptions struct {
	// File is a YAML file; "" means none. A missing file is an error only
	// when Required is set.
	File     string
	Required bool
	// Environ is the environment to read TGP_* from (os.Environ() if nil).
	Environ []string
	// Overrides are Go options, the highest layer, by dotted key.
	Overrides map[string]any
}

// LoadConfig merges defaults < file < TGP_* environment < overrides and
// validates the result.
func LoadConfig(lo LoadOptions) (*Config, error) {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(Defaults(), "."), nil); err != nil {
		return nil, fmt.Errorf("config defaults: %w", err)
	}
	known := knownKeys()
	src := &layers{file: lo.File, fileKeys: map[string]bool{}, fileLines: map[string]int{}, envVars: map[string]string{}, overrides: lo.Overrides}
	if lo.File != "" {
		if _, err := os.Stat(lo.File); err == nil || lo.Required {
			fk := koanf.New(".")
			if err := fk.Load(file.Provider(lo.File), yaml.Parser()); err != nil {
				if data, rerr := os.ReadFile(lo.File); rerr == nil && strings.Contains(err.Error(), "yaml: ") {
					return nil, yamlError(lo.File, data, err)
				}
				// The file's own error names it already (open x.yaml:
				// ...): say the path once.
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return nil, fmt.Errorf("config file %s: %w", lo.File, err)
			}
			if data, err := os.ReadFile(lo.File); err == nil {
				src.fileLines = keyLines(data)
			}
			if err := checkKeys(fk, known, src.fileAt); err != nil {
				return nil, err
			}
			for _, key := range fk.Keys() {
				src.fileKeys[key] = true
			}
			if fk.String("git.journal") != "" {
				return nil, &ConfigError{Key: "git.journal", Source: lo.File, Problem: "a DSN holds a password and the file is shared: set TGP_GIT_JOURNAL in the environment instead"}
			}
			if err := k.Merge(fk); err != nil {
				return nil, err
			}
		}
	}
	environ := lo.Environ
	if environ == nil {
		environ = os.Environ()
	}
	// The variables the *_env keys name hold secrets, not configuration,
	// whichever layer names them (the file, a TGP_*_ENV variable, an
	// option).
	secrets := map[string]bool{}
	for key := range known {
		if !strings.HasSuffix(key, "_env") {
			continue
		}
		secrets[k.String(key)] = true
		secrets[Secret(environ, envName(key))] = true
		if v, ok := lo.Overrides[key].(string); ok {
			secrets[v] = true
		}
	}
	// So are the variables sandbox.secrets names, from the file or from
	// TGP_SANDBOX_SECRETS.
	fileSecrets, _ := k.Get("sandbox.secrets").(map[string]any)
	for _, spec := range fileSecrets {
		if m, ok := spec.(map[string]any); ok {
			if env, ok := m["env"].(string); ok {
				secrets[env] = true
			}
		}
	}
	if raw := Secret(environ, envName("sandbox.secrets")); raw != "" {
		var specs map[string]struct {
			Env string `json:"env"`
		}
		if json.Unmarshal([]byte(raw), &specs) == nil {
			for _, spec := range specs {
				secrets[spec.Env] = true
			}
		}
	}
	envMap, err := envLayer(environ, known, secrets)
	if err != nil {
		return nil, err
	}
	for key := range envMap {
		src.envVars[key] = envName(key)
	}
	if err := k.Load(confmap.Provider(envMap, "."), nil); err != nil {
		return nil, err
	}
	if len(lo.Overrides) > 0 {
		ok := koanf.New(".")
		if err := ok.Load(confmap.Provider(lo.Overrides, "."), nil); err != nil {
			return nil, err
		}
		if err := checkKeys(ok, known, func(string) string { return "options" }); err != nil {
			return nil, err
		}
		if err := k.Merge(ok); err != nil {
			return nil, err
		}
	}
	var c Config
	err = k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		ErrorUnused:      true,
		Result:           &c,
		TagName:          "koanf",
	}})
	if err != nil {
		key := decodeKey(err)
		return nil, &ConfigError{Key: key, Source: src.source(key), Problem: typeProblem(key, k.Get(key))}
	}
	if err := c.Validate(); err != nil {
		return nil, src.attribute(err)
	}
	return &c, nil
}

// knownKeys lists every leaf key; maps (sandbox.check.rules) are leaves.
func knownKeys() map[string]bool {
	out := map[string]bool{}
	for k := range Defaults() {
		out[k] = true
	}
	return out
}

// checkKeys refuses a key no configuration has; source names where a key
// was given (the file and its line, or options).
func checkKeys(k *koanf.Koanf, known map[string]bool, source func(key string) string) error {
	for _, key := range k.Keys() {
		if known[key] {
			continue
		}
		if strings.HasPrefix(key, "sandbox.check.rules.") {
			continue
		}
		if rest, ok := strings.CutPrefix(key, "sandbox.secrets."); ok {
			// sandbox.secrets.NAME.env and sandbox.secrets.NAME.urls
			if i := strings.LastIndexByte(rest, '.'); i > 0 && (rest[i+1:] == "env" || rest[i+1:] == "urls") {
				continue
			}
			return &ConfigError{Key: key, Source: source(key), Problem: "a brokered secret has two keys: env (the variable holding the value) and urls (where it may be sent)"}
		}
		// A parent given a scalar (git: 3) shows up as a known prefix.
		return unknownKeyError(key, source(key), known)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// envLayer maps TGP_GIT_RETRY_MAX_ATTEMPTS to git.retry.max_attempts. The
// variable names that hold secrets (the values of token_env and dsn_env) are
// not configuration and are skipped.
func envLayer(environ []string, known, secrets map[string]bool) (map[string]any, error) {
	byEnv := map[string]string{}
	for k := range known {
		byEnv[envName(k)] = k
	}
	sections := map[string]bool{}
	for k := range known {
		sections["TGP_"+strings.ToUpper(strings.Split(k, ".")[0])+"_"] = true
	}
	out := map[string]any{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "TGP_") {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			// A secret named by token_env/dsn_env, or a variable outside our
			// sections, is not configuration; a typo inside a section is.
			if secrets[name] || secretLike(name) {
				continue
			}
			for prefix := range sections {
				if strings.HasPrefix(name, prefix) {
					return nil, unknownEnvError(name, byEnv)
				}
			}
			continue
		}
		if key == "sandbox.secrets" {
			// {"NAME": {"env": "VAR", "urls": ["https://..."]}}: a
			// mapping does not fit a,b lists.
			specs := map[string]any{}
			if err := json.Unmarshal([]byte(val), &specs); err != nil {
				return nil, &ConfigError{Key: key, Source: "environment " + name, Problem: `want JSON such as {"API": {"env": "API_TOKEN", "urls": ["https://api.example.com/v1/"]}}`}
			}
			out[key] = specs
			continue
		}
		if key == "sandbox.check.rules" {
			rules := map[string]any{}
			for _, part := range strings.Split(val, ",") {
				if part = strings.TrimSpace(part); part == "" {
					continue
				}
				id, sev, ok := strings.Cut(part, "=")
				if !ok {
					return nil, &ConfigError{Key: key, Source: "environment " + name, Problem: "want rule=severity pairs separated by commas"}
				}
				rules[strings.TrimSpace(id)] = strings.TrimSpace(sev)
			}
			out[key] = rules
			continue
		}
		out[key] = val
	}
	return out, nil
}

func sortedEnvNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// envName is a key's environment variable: git.retry.max_attempts is
// TGP_GIT_RETRY_MAX_ATTEMPTS.
func envName(key string) string {
	return "TGP_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Validate checks ranges and enumerations; the error names the key and what
// is allowed.
func (c *Config) Validate() error {
	oneOf := func(key, v string, allowed ...string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return &ConfigError{Key: key, Problem: fmt.Sprintf("%q is not allowed; use one of: %s", v, strings.Join(allowed, ", "))}
	}
	positiveDuration := func(key string, d time.Duration) error {
		if d <= 0 {
			return &ConfigError{Key: key, Problem: fmt.Sprintf("%v is out of range; must be a positive duration such as 2m or 30s", d)}
		}
		return nil
	}
	atLeast := func(key string, v, min int) error {
		if v < min {
			return &ConfigError{Key: key, Problem: fmt.Sprintf("%d is out of range; must be >= %d", v, min)}
		}
		return nil
	}
	checks := []error{
		oneOf("git.provider", c.Git.Provider, providerChoices...),
		oneOf("git.write_strategy", c.Git.WriteStrategy, "direct", "pr"),
		oneOf("git.pr.per", c.Git.PR.Per, "session", "tool"),
		oneOf("approval.policy", c.Approval.Policy, "never", "on_risk", "always"),
		oneOf("sql.driver", c.SQL.Driver, "", "sqlite", "postgres"),
		oneOf("sandbox.isolation", c.Sandbox.Isolation, "inproc", "process"),
		atLeast("sandbox.workers", c.Sandbox.Workers, 1),
		atLeast("git.depth", c.Git.Depth, 0),
		atLeast("git.retry.max_attempts", c.Git.Retry.MaxAttempts, 1),
		positiveDuration("git.retry.deadline", c.Git.Retry.Deadline),
		atLeast("sandbox.memory_mb", c.Sandbox.MemoryMB, 1),
		atLeast("tools.git.timeout_ms", c.Tools.Git.TimeoutMS, 1),
		atLeast("tools.git.max_bytes", c.Tools.Git.MaxBytes, 1),
		atLeast("serve.max_body_bytes", int(min(c.Serve.MaxBodyBytes, 1<<40)), 1024),
	}
	if c.Serve.SessionIdleTimeout < 0 {
		checks = append(checks, &ConfigError{Key: "serve.session_idle_timeout", Problem: "must not be negative (0: sessions never expire)"})
	}
	for _, o := range c.Serve.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			checks = append(checks, &ConfigError{Key: "serve.allowed_origins", Problem: fmt.Sprintf("%q is not an origin; use scheme://host[:port]", o)})
		}
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	if c.RootDir == "" {
		return &ConfigError{Key: "root_dir", Problem: "must not be empty"}
	}
	if _, _, err := c.Git.RefreshEvery(); err != nil {
		return err
	}
	if _, _, err := c.Git.RemoteBudgets(); err != nil {
		return err
	}
	if err := c.Git.validateJournalAck(); err != nil {
		return err
	}
	if c.Git.Retry.BaseDelay < 0 {
		return &ConfigError{Key: "git.retry.base_delay", Problem: "must be a non-negative duration such as 50ms"}
	}
	if c.Sandbox.Timeout <= 0 {
		return &ConfigError{Key: "sandbox.timeout", Problem: "must be a positive duration such as 5s"}
	}
	if c.Git.WriteStrategy == "pr" {
		p, err := c.Git.ResolvedProvider()
		if err != nil {
			return err
		}
		if hasForge(p) && c.Git.Repo == "" && c.Git.Remote == "" {
			return &ConfigError{Key: "git.repo", Problem: fmt.Sprintf("required for write_strategy pr with provider %s (owner/name, or group/sub/project on GitLab)", p)}
		}
	}
	if err := c.Shell.validate(); err != nil {
		return err
	}
	for _, u := range c.Sandbox.AllowedFetchURLs {
		if err := hostapi.CheckURLPrefix(u); err != nil {
			return &ConfigError{Key: "sandbox.allowed_fetch_urls", Problem: fmt.Sprintf("%q: %s (a prefix is scheme://host[:port]/path/)", u, urlProblem(err))}
		}
	}
	for _, name := range sortedSecretNames(c.Sandbox.Secrets) {
		spec := c.Sandbox.Secrets[name]
		key := "sandbox.secrets." + name
		switch {
		case !secretNameRe.MatchString(name):
			return &ConfigError{Key: key, Problem: "a secret's name is letters, digits and _ (tools call tgp.secret(\"NAME\"))"}
		case spec.Env == "":
			return &ConfigError{Key: key + ".env", Problem: "must name the environment variable that holds the value"}
		case len(spec.URLs) == 0:
			return &ConfigError{Key: key + ".urls", Problem: "must list at least one URL prefix the value may be sent to"}
		}
		for _, u := range spec.URLs {
			if err := hostapi.CheckURLPrefix(u); err != nil {
				return &ConfigError{Key: key + ".urls", Problem: fmt.Sprintf("%q: %s (a prefix is scheme://host[:port]/path/)", u, urlProblem(err))}
			}
		}
	}
	for id, sev := range c.Sandbox.Check.Rules {
		if err := oneOf("sandbox.check.rules."+id, sev, "off", "warning", "error"); err != nil {
			return err
		}
	}
	return nil
}

var secretNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func sortedSecretNames(m map[string]SecretConfig) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// urlProblem is CheckURLPrefix's reason without the URL it quotes.
func urlProblem(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		return msg[i+3:]
	}
	return msg
}

// Secret reads a secret from the environment by the name the configuration
// gives; secrets never come from files and are never logged.
func Secret(environ []string, name string) string { return toolset.Secret(environ, name) }
