package gitbackend

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// A remote URL is checked once, when the root is opened: a URL that can
// never work (a control character, a bad escape, a transport tgp does not
// speak) fails there with its cause instead of being retried like a
// remote that did not answer. Credentials in the URL never go further
// than this file: the URL the root keeps (and writes to .git/config, and
// prints) has none, and they become the transport's auth.

// ErrPermanent matches every remote error that no retry can change: a
// malformed URL, an unsupported transport, a refused authentication, a
// repository that does not exist, a push the remote's policy declines.
var ErrPermanent = errors.New("permanent remote error")

// ErrUnsupportedTransport matches *UnsupportedTransportError.
var ErrUnsupportedTransport = errors.New("unsupported transport")

// UnsupportedTransportError: the remote names a transport tgp does not
// speak (git's remote helpers "ext::" and "fd::", an unknown scheme).
// tgp never runs a helper: "ext::" would run any command the URL names.
type UnsupportedTransportError struct {
	Remote    string // redacted
	Transport string
}

func (e *UnsupportedTransportError) Error() string {
	return fmt.Sprintf("remote %s: unsupported transport %q (tgp speaks https://, http://, ssh://, git://, user@host:path, file:// and local paths)", e.Remote, e.Transport)
}

func (e *UnsupportedTransportError) Is(t error) bool {
	return t == ErrUnsupportedTransport || t == ErrPermanent
}

// ErrBadRemoteURL matches *RemoteURLError.
var ErrBadRemoteURL = errors.New("invalid remote URL")

// RemoteURLError: the remote URL cannot be parsed.
type RemoteURLError struct {
	Remote string // redacted, control characters quoted
	Err    error  // the parser's reason, without the URL
}

func (e *RemoteURLError) Error() string {
	return fmt.Sprintf("invalid remote URL %s: %v", e.Remote, e.Err)
}

func (e *RemoteURLError) Unwrap() error { return e.Err }

func (e *RemoteURLError) Is(t error) bool { return t == ErrBadRemoteURL || t == ErrPermanent }

// helperRE is git's remote-helper syntax, <transport>::<address>.
var helperRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)::`)

// schemeRE is a URL's scheme.
var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// netSchemes are the URL schemes of go-git's transports.
var netSchemes = map[string]bool{"http": true, "https": true, "ssh": true, "git": true, "file": true}

// checkRemoteURL refuses a remote that no attempt can reach.
func checkRemoteURL(remote string) error {
	if m := helperRE.FindStringSubmatch(remote); m != nil {
		return &UnsupportedTransportError{Remote: RedactURL(remote), Transport: m[1] + "::"}
	}
	if i := strings.IndexFunc(remote, isControl); i >= 0 {
		return &RemoteURLError{Remote: fmt.Sprintf("%q", RedactURL(remote)), Err: fmt.Errorf("control character %q at byte %d", remote[i], i)}
	}
	m := schemeRE.FindStringSubmatch(remote)
	if m == nil {
		return nil // a path, or scp-like user@host:path
	}
	if !netSchemes[strings.ToLower(m[1])] {
		return &UnsupportedTransportError{Remote: RedactURL(remote), Transport: m[1] + "://"}
	}
	if _, err := url.Parse(remote); err != nil {
		// url.Error quotes the whole URL, password included: keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &RemoteURLError{Remote: RedactURL(remote), Err: err}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// splitUserinfo cuts the userinfo out of a URL's authority ("" when the
// URL has no scheme: scp-like user@host:path carries no password). It
// works on the string, so that a URL the parser refuses is cut too.
func splitUserinfo(remote string) (rest, user, pass string, hasPass bool) {
	i := strings.Index(remote, "://")
	if i < 0 {
		return remote, "", "", false
	}
	auth := remote[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return remote, "", "", false
	}
	user, pass, hasPass = strings.Cut(auth[:at], ":")
	return remote[:i+3] + remote[i+3+at+1:], user, pass, hasPass
}

// RedactURL removes the userinfo (a user name can be a token too) from a
// remote URL before it is shown: "https://***@host/r.git".
func RedactURL(remote string) string {
	rest, user, pass, hasPass := splitUserinfo(remote)
	if rest == remote {
		return remote
	}
	if user == "" && pass == "" && !hasPass {
		return rest // a bare "@": nothing to hide
	}
	i := strings.Index(rest, "://")
	return rest[:i+3] + "***@" + rest[i+3:]
}

// redact is RedactURL (the name the package uses).
func redact(remote string) string { return RedactURL(remote) }

// HasPassword says whether remote carries a password in its userinfo.
func HasPassword(remote string) bool {
	_, _, pass, hasPass := splitUserinfo(remote)
	return hasPass && pass != ""
}

// stripCredentials returns the URL the root keeps and the auth the URL's
// credentials make (nil: none). HTTP keeps no userinfo at all (the user
// and password become basic auth); SSH keeps its user, which names the
// account, and drops the password.
func stripCredentials(remote string) (string, transport.AuthMethod) {
	rest, user, pass, hasPass := splitUserinfo(remote)
	if rest == remote {
		return remote, nil
	}
	scheme := ""
	if m := schemeRE.FindStringSubmatch(remote); m != nil {
		scheme = strings.ToLower(m[1])
	}
	user = unescapeUserinfo(user)
	pass = unescapeUserinfo(pass)
	switch scheme {
	case "http", "https":
		if user == "" && pass == "" {
			return rest, nil
		}
		return rest, &githttp.BasicAuth{Username: user, Password: pass}
	case "ssh":
		if !hasPass {
			return remote, nil
		}
		i := strings.Index(rest, "://")
		kept := rest
		if user != "" {
			kept = rest[:i+3] + url.PathEscape(user) + "@" + rest[i+3:]
		}
		if pass == "" {
			return kept, nil
		}
		return kept, &gitssh.Password{User: user, Password: pass}
	}
	return rest, nil
}

// unescapeUserinfo decodes a URL's percent escapes (a password may hold
// "@" or ":" escaped); an undecodable one is taken as it is.
func unescapeUserinfo(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// permanentRemoteErr says whether no retry can change err's outcome.
// net/url's *url.Error is also a net.Error: a URL that does not parse
// looked like a remote that did not answer and was retried for seconds.
func permanentRemoteErr(err error) bool {
	if errors.Is(err, ErrPermanent) || errors.Is(err, ErrAuth) || errors.Is(err, ErrDeclined) ||
		errors.Is(err, transport.ErrRepositoryNotFound) || errors.Is(err, transport.ErrInvalidAuthMethod) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) && ue.Op == "parse"
}
