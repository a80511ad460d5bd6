package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
)

// Error kinds of the tool's own permissions and of brokered secrets.
const (
	// KindPermissionDenied: the tool's permissions export (or
	// sandbox.require_permissions) refused what the configuration alone
	// would allow.
	KindPermissionDenied = "permission_denied"
	// KindSecretUnavailable: a secret the tool may use has no value on
	// this host (its environment variable is unset) or is not configured.
	KindSecretUnavailable = "secret_unavailable"
)

// ErrPermissionDenied matches every *PermissionError (errors.Is).
var ErrPermissionDenied = errors.New("sandbox: permission denied")

// PermissionError is a refusal by the tool's declared permissions.
type PermissionError struct{ Msg string }

func (e *PermissionError) Error() string        { return e.Msg }
func (e *PermissionError) Is(target error) bool { return target == ErrPermissionDenied }

func permissionDenied(format string, args ...any) error {
	return &PermissionError{Msg: "Permission denied: " + fmt.Sprintf(format, args...)}
}

// ErrSecretUnavailable matches every *SecretError (errors.Is).
var ErrSecretUnavailable = errors.New("sandbox: secret unavailable")

// SecretError says a secret has no value here. It names the secret and
// the environment variable, never a value.
type SecretError struct {
	Name, Env string
	Msg       string
}

func (e *SecretError) Error() string        { return e.Msg }
func (e *SecretError) Is(target error) bool { return target == ErrSecretUnavailable }

// SecretSpec is one secret the host brokers (sandbox.secrets): its value
// is read from the environment variable Env by the host when a fetch
// needs it, and goes only to URLs under one of URLs.
type SecretSpec struct {
	Env  string
	URLs []string
}

// WithSecrets configures the brokered secrets by name. lookup reads an
// environment variable (nil: os.LookupEnv); it is called in the host
// process, never in a worker, whenever a fetch carries a secret, so a
// rotated value is picked up by the next run.
func WithSecrets(specs map[string]SecretSpec, lookup func(name string) (string, bool)) Option {
	return func(r *Runner) {
		r.secrets = map[string]SecretSpec{}
		for k, v := range specs {
			r.secrets[k] = v
		}
		r.lookupEnv = lookup
	}
}

// WithRequirePermissions makes the runner refuse a tool that exports no
// permissions (sandbox.require_permissions).
func WithRequirePermissions(on bool) Option { return func(r *Runner) { r.requirePerms = on } }

// runPolicy is what one run may do beyond the runner's configuration.
type runPolicy struct {
	// perms is the tool's declaration; nil: the configuration alone.
	perms *Permissions
	// placeholders are what tgp.secret returns, by secret name: random
	// per run, so a placeholder seen in one result is worth nothing in
	// the next run.
	placeholders map[string]string
	// unavailable says, by secret name, why tgp.secret fails.
	unavailable map[string]string
	// broker turns placeholders into values; nil in a worker, which
	// never holds a value.
	broker *broker
}

// newRunPolicy is the host's side of a run's policy.
func (r *Runner) newRunPolicy(perms *Permissions) *runPolicy {
	pol := &runPolicy{perms: perms, placeholders: map[string]string{}, unavailable: map[string]string{}}
	if perms == nil {
		return pol
	}
	pol.broker = &broker{lookup: r.lookup}
	for _, name := range perms.Secrets {
		spec, ok := r.secrets[name]
		if !ok {
			pol.unavailable[name] = fmt.Sprintf("secret %s is not configured on this host (sandbox.secrets)", name)
			continue
		}
		if v, ok := r.lookup(spec.Env); !ok || v == "" {
			pol.unavailable[name] = missingEnv(name, spec.Env).Error()
			continue
		}
		ph := newPlaceholder(name)
		pol.placeholders[name] = ph
		pol.broker.entries = append(pol.broker.entries, brokered{name: name, env: spec.Env, placeholder: ph, urls: spec.URLs})
	}
	return pol
}

func (r *Runner) lookup(env string) (string, bool) {
	if r.lookupEnv != nil {
		return r.lookupEnv(env)
	}
	return os.LookupEnv(env)
}

func missingEnv(name, env string) *SecretError {
	return &SecretError{Name: name, Env: env, Msg: fmt.Sprintf("secret %s: environment variable %s is not set on the host", name, env)}
}

// newPlaceholder is an opaque token made of characters that survive
// URLs, headers and JSON unescaped, so the host finds it where the tool
// put it.
func newPlaceholder(name string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "tgp_secret_" + name + "_" + hex.EncodeToString(b[:])
}

// secret is tgp.secret(name): the placeholder, or the refusal.
func (pol *runPolicy) secret(name string) (string, error) {
	if pol == nil || pol.perms == nil || !contains(pol.perms.Secrets, name) {
		return "", permissionDenied("tgp.secret(%q): the tool does not list %s in its permissions.secrets", name, name)
	}
	if why, ok := pol.unavailable[name]; ok {
		return "", &SecretError{Name: name, Msg: why}
	}
	ph, ok := pol.placeholders[name]
	if !ok {
		return "", &SecretError{Name: name, Msg: fmt.Sprintf("secret %s is not available", name)}
	}
	return ph, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkFetch says why this run may not fetch u (nil: it may): the
// configuration's allow-list first (a security violation), then the
// tool's own (a permission refusal).
func (r *Runner) checkFetch(pol *runPolicy, u string) error {
	if len(r.fetchURLs) == 0 {
		return securityErr{securityMessage("Network access is disabled. No URLs are allowed (sandbox.allowed_fetch_urls).")}
	}
	if !urlAllowedAny(r.fetchURLs, u) {
		return securityErr{securityMessage("URL \"%s\" is not in the allowed list.", u)}
	}
	if pol != nil && pol.perms != nil && !urlAllowedAny(pol.perms.Fetch, u) {
		return permissionDenied("URL %q is not in the tool's permissions.fetch (%s)", u, orNone(pol.perms.Fetch))
	}
	return nil
}

// checkWrite says why this run may not write p (nil: it may).
func (r *Runner) checkWrite(pol *runPolicy, p string) error {
	if !writeAllowed(r.writeDirs, p) {
		return securityErr{securityMessage("Write access denied for '%s'. Allowed directories: %s", p, strings.Join(r.writeDirs, ", "))}
	}
	if pol != nil && pol.perms != nil && !writeAllowed(pol.perms.Write, p) {
		return permissionDenied("write_file(%q): not under the tool's permissions.write (%s)", p, orNone(pol.perms.Write))
	}
	return nil
}

// ReadOnlySQL is a session that says whether it refuses writes. A tool
// limited to permissions.sql "read" runs its statements only on a session
// that does (the database refuses its writes, not a statement parser).
type ReadOnlySQL interface {
	SQL
	ReadOnly() bool
}

// permSQL holds a run's statements to the tool's permissions.sql.
type permSQL struct {
	inner SQL
	mode  string
}

func (s permSQL) Exec(ctx context.Context, q string, params []any) (any, error) {
	switch s.mode {
	case SQLNone:
		return nil, permissionDenied("exec_sql: the tool's permissions grant no SQL (add sql: \"read\" or \"write\")")
	case SQLRead:
		ro, ok := s.inner.(ReadOnlySQL)
		if !ok || !ro.ReadOnly() {
			return nil, permissionDenied("exec_sql: the tool may only read (permissions.sql: \"read\") and the host's session is not read-only")
		}
		res, err := s.inner.Exec(ctx, q, params)
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "read-only") {
			return nil, permissionDenied("exec_sql: the tool may only read (permissions.sql: \"read\"): %v", err)
		}
		return res, err
	}
	return s.inner.Exec(ctx, q, params)
}

// brokered is one secret a run may use.
type brokered struct {
	name, env, placeholder string
	urls                   []string
}

// broker substitutes a run's placeholders with values, in the host, and
// scrubs the values out of what goes back.
type broker struct {
	lookup  func(string) (string, bool)
	entries []brokered
}

// fetchReply is a fetch's response as it goes back to the tool.
type fetchReply struct {
	status  int
	headers map[string]string // canonical keys
	body    []byte
}

// doFetch makes one tgp.fetch request for a run: the allow-lists checked
// (again: in a worker the host checks what the worker asks), the
// placeholders of the run's secrets substituted where their URLs allow it,
// redirects held to the same rules, the body capped, and the values
// scrubbed from the response and from any error.
func (r *Runner) doFetch(ctx context.Context, client *http.Client, pol *runPolicy, method, u string, headers map[string]string, body []byte) (*fetchReply, error) {
	if err := r.checkFetch(pol, u); err != nil {
		return nil, err
	}
	var b *broker
	if pol != nil {
		b = pol.broker
	}
	sendURL, sendHeaders, sendBody, used, err := b.substitute(u, headers, body)
	if err != nil {
		return nil, err
	}
	// A value is scrubbed from everything that goes back, as it was sent
	// and in the encodings a server may echo it in.
	scrub := b.scrubber()
	if len(used) > 0 {
		// The value must not move the request: its URL must still be
		// allowed once it is in.
		if err := r.checkFetch(pol, sendURL); err != nil {
			return nil, scrub.err(permissionDenied("fetch %q: a secret's value changes the URL so that it is no longer allowed", u))
		}
		for _, e := range used {
			if !urlAllowedAny(e.urls, sendURL) {
				return nil, permissionDenied("fetch %q: secret %s's value changes the URL so that it leaves sandbox.secrets.%s.urls", u, e.name, e.name)
			}
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, sendURL, bytes.NewReader(sendBody))
	if err != nil {
		return nil, scrub.err(err)
	}
	for k, v := range sendHeaders {
		req.Header.Set(k, v)
	}
	c := *client
	hostCheck := client.CheckRedirect
	c.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		to := next.URL.String()
		if err := r.checkFetch(pol, to); err != nil {
			return fmt.Errorf("redirect refused: %w", err)
		}
		for _, e := range used {
			if !urlAllowedAny(e.urls, to) {
				return permissionDenied("redirect to %s refused: the request carries secret %s, which goes only to %s", to, e.name, strings.Join(e.urls, ", "))
			}
		}
		if hostCheck != nil {
			return hostCheck(next, via)
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, scrub.err(unwrapRedirect(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.maxFetch+1))
	if err != nil {
		return nil, scrub.err(err)
	}
	if int64(len(data)) > r.maxFetch {
		return nil, fmt.Errorf("fetch %s: response body over %d bytes (sandbox limit)", u, r.maxFetch)
	}
	rep := &fetchReply{status: resp.StatusCode, headers: map[string]string{}, body: scrub.bytes(data)}
	for k := range resp.Header {
		rep.headers[k] = scrub.string(resp.Header.Get(k))
	}
	return rep, nil
}

// unwrapRedirect keeps a policy refusal made while following a redirect
// typed (the client wraps it in a *url.Error).
func unwrapRedirect(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		var pe *PermissionError
		if errors.As(ue.Err, &pe) {
			return pe
		}
		var se securityErr
		if errors.As(ue.Err, &se) {
			return se
		}
	}
	return err
}

// substitute puts the values of the secrets whose placeholders appear in
// the URL, a header's value or the body, after checking the URL is one
// each secret may go to. used are the secrets it put in.
func (b *broker) substitute(u string, headers map[string]string, body []byte) (string, map[string]string, []byte, []brokered, error) {
	if b == nil || len(b.entries) == 0 {
		return u, headers, body, nil, nil
	}
	var used []brokered
	out := map[string]string{}
	for k, v := range headers {
		out[k] = v
	}
	for _, e := range b.entries {
		in := strings.Contains(u, e.placeholder) || bytes.Contains(body, []byte(e.placeholder))
		for k, v := range headers {
			if strings.Contains(k, e.placeholder) {
				return "", nil, nil, nil, permissionDenied("fetch %q: secret %s may go in a header's value, not in its name", u, e.name)
			}
			in = in || strings.Contains(v, e.placeholder)
		}
		if !in {
			continue
		}
		if !urlAllowedAny(e.urls, u) {
			return "", nil, nil, nil, permissionDenied("fetch %q refused: it carries secret %s, which goes only to %s (sandbox.secrets.%s.urls)",
				u, e.name, orNone(e.urls), e.name)
		}
		v, ok := b.lookup(e.env)
		if !ok || v == "" {
			return "", nil, nil, nil, missingEnv(e.name, e.env)
		}
		u = strings.ReplaceAll(u, e.placeholder, v)
		body = bytes.ReplaceAll(body, []byte(e.placeholder), []byte(v))
		for k, hv := range out {
			out[k] = strings.ReplaceAll(hv, e.placeholder, v)
		}
		used = append(used, e)
	}
	return u, out, body, used, nil
}

// scrubber replaces the values of every secret of the run (not only the
// ones this fetch sent: a server may echo one it got earlier) with their
// placeholders.
func (b *broker) scrubber() *scrubber {
	s := &scrubber{}
	if b == nil {
		return s
	}
	for _, e := range b.entries {
		v, ok := b.lookup(e.env)
		if !ok || v == "" {
			continue
		}
		forms := map[string]bool{v: true, url.QueryEscape(v): true, url.PathEscape(v): true,
			base64.StdEncoding.EncodeToString([]byte(v)): true, base64.RawURLEncoding.EncodeToString([]byte(v)): true}
		for f := range forms {
			s.pairs = append(s.pairs, [2]string{f, e.placeholder})
		}
	}
	// Longest first, so a value that contains another is replaced whole.
	sort.Slice(s.pairs, func(i, j int) bool { return len(s.pairs[i][0]) > len(s.pairs[j][0]) })
	return s
}

type scrubber struct {
	once  sync.Once
	pairs [][2]string
	rep   *strings.Replacer
}

func (s *scrubber) replacer() *strings.Replacer {
	s.once.Do(func() {
		var args []string
		for _, p := range s.pairs {
			args = append(args, p[0], p[1])
		}
		s.rep = strings.NewReplacer(args...)
	})
	return s.rep
}

func (s *scrubber) string(v string) string {
	if len(s.pairs) == 0 {
		return v
	}
	return s.replacer().Replace(v)
}

func (s *scrubber) bytes(v []byte) []byte {
	if len(s.pairs) == 0 {
		return v
	}
	return []byte(s.replacer().Replace(string(v)))
}

// err keeps err's type where it is one of the sandbox's and scrubs its
// text otherwise (a *url.Error quotes the URL, value included).
func (s *scrubber) err(err error) error {
	if err == nil || len(s.pairs) == 0 {
		return err
	}
	msg := err.Error()
	clean := s.string(msg)
	if clean == msg {
		return err
	}
	var pe *PermissionError
	if errors.As(err, &pe) {
		return &PermissionError{Msg: s.string(pe.Msg)}
	}
	return errors.New(clean)
}
