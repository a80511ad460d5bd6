package hostapi

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// URL allow-lists (sandbox.allowed_fetch_urls, a tool's permissions.fetch,
// a brokered secret's urls) are matched on parsed URLs, never as strings:
// "https://api.example.com" as a string prefix admits
// "https://api.example.com.evil.com/", and "/v1" admits "/v10". A target
// is under a prefix when its scheme, host and port are the prefix's
// (case-insensitive host, default ports filled in) and its path is the
// prefix's path or lies below it by whole segments.
//
// Targets a server could read differently from this matcher are refused
// whatever the list says: userinfo (https://api.example.com@evil.com/
// reads as host evil.com to some parsers), dot segments (/v1/../admin),
// encoded slashes and backslashes (/v1%2F..%2Fadmin, /v1\..\admin), an
// opaque or host-less URL, a scheme other than http and https.

// errURL is the reason a URL is not matchable.
var errURL = errors.New("sandbox: URL")

// parsedURL is a URL reduced to what the matcher compares.
type parsedURL struct {
	scheme, host, port string
	path               string // decoded; "/" for an empty path
}

// parseMatchURL parses s for matching; prefix says whether s is an
// allow-list entry (no query or fragment: a prefix names a place, not a
// request).
func parseMatchURL(s string, prefix bool) (parsedURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return parsedURL{}, fmt.Errorf("%w %q does not parse: %v", errURL, s, unwrapURLError(err))
	}
	bad := func(why string) (parsedURL, error) {
		return parsedURL{}, fmt.Errorf("%w %q: %s", errURL, s, why)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("the scheme must be http or https")
	case u.Opaque != "":
		return bad("not an absolute URL (scheme://host/path)")
	case u.User != nil:
		return bad("userinfo (user@ or user:password@) is refused: it hides the host from a reader")
	case u.Host == "" || u.Hostname() == "":
		return bad("no host")
	case prefix && (u.RawQuery != "" || u.ForceQuery || u.Fragment != ""):
		return bad("a prefix has no query or fragment")
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	} else {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return bad("bad port")
		}
		port = strconv.FormatUint(n, 10)
	}
	raw := strings.ToLower(u.EscapedPath())
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") || strings.Contains(u.Path, `\`) {
		return bad("encoded slashes and backslashes in the path are refused: servers read them differently")
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return bad("the path must start with /")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return bad("dot segments (. and ..) in the path are refused")
		}
	}
	return parsedURL{scheme: u.Scheme, host: host, port: port, path: p}, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// under reports whether t lies under the prefix p.
func (p parsedURL) under(t parsedURL) bool {
	if p.scheme != t.scheme || p.host != t.host || p.port != t.port {
		return false
	}
	if p.path == "/" || t.path == p.path {
		return true
	}
	dir := p.path
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	} else if t.path == strings.TrimSuffix(dir, "/") {
		// https://h/v1 is the directory https://h/v1/ names.
		return true
	}
	return strings.HasPrefix(t.path, dir)
}

// CheckURLPrefix says why prefix cannot be an allow-list entry
// (sandbox.allowed_fetch_urls, permissions.fetch, sandbox.secrets urls);
// nil when it can.
func CheckURLPrefix(prefix string) error {
	_, err := parseMatchURL(prefix, true)
	return err
}

// URLAllowed reports whether target lies under prefix: same scheme, host
// and port, and a path that is the prefix's or below it by whole
// segments. A prefix or target that does not parse, or that a server
// could read differently (userinfo, dot segments, encoded slashes), is
// never allowed.
func URLAllowed(prefix, target string) bool {
	p, err := parseMatchURL(prefix, true)
	if err != nil {
		return false
	}
	t, err := parseMatchURL(target, false)
	if err != nil {
		return false
	}
	return p.under(t)
}

// urlAllowedAny reports whether target lies under one of prefixes.
// URLAllowedAny reports whether target is under one of prefixes.
func URLAllowedAny(prefixes []string, target string) bool {
	t, err := parseMatchURL(target, false)
	if err != nil {
		return false
	}
	for _, s := range prefixes {
		if p, err := parseMatchURL(s, true); err == nil && p.under(t) {
			return true
		}
	}
	return false
}
