package sandbox

import (
	"math/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestURLAllowedTable(t *testing.T) {
	const p = "https://api.example.com/v1/"
	cases := []struct {
		prefix, target string
		want           bool
	}{
		{p, "https://api.example.com/v1/", true},
		{p, "https://api.example.com/v1/users?id=3", true},
		{p, "https://api.example.com/v1", true},
		{p, "https://API.Example.COM:443/v1/x", true},
		{p, "https://api.example.com/v10", false},
		{p, "https://api.example.com/v10/x", false},
		{p, "https://api.example.com/v2/", false},
		{p, "https://api.example.com/", false},
		{p, "https://api.example.com.evil.com/v1/", false},
		{p, "https://evil.com/https://api.example.com/v1/", false},
		{p, "https://api.example.com@evil.com/v1/", false},
		{p, "https://user:pw@api.example.com/v1/", false},
		{p, "https://api.example.com:8443/v1/", false},
		{p, "http://api.example.com/v1/", false},
		{p, "https://api.example.com/v1/../admin", false},
		{p, "https://api.example.com/v1/%2e%2e/admin", false},
		{p, "https://api.example.com/v1%2F..%2Fadmin", false},
		{p, "https://api.example.com/v1/..%5Cadmin", false},
		{p, `https://api.example.com/v1/..\admin`, false},
		{p, "https://api.example.com./v1/", false},
		{p, "https:api.example.com/v1/", false},
		{p, "//api.example.com/v1/", false},
		{p, "ftp://api.example.com/v1/", false},
		{p, "https://api.example.com:443.evil.com/v1/", false},
		{"https://api.example.com/v1", "https://api.example.com/v1/x", true},
		{"https://api.example.com/v1", "https://api.example.com/v10", false},
		{"https://api.example.com", "https://api.example.com/anything/at/all", true},
		{"https://api.example.com", "https://api.example.com", true},
		{"http://127.0.0.1:8080/a/", "http://127.0.0.1:8080/a/b", true},
		{"http://127.0.0.1:8080/a/", "http://127.0.0.1:8080/b/", false},
		{"http://127.0.0.1:8080/a/", "http://127.0.0.1:80/a/", false},
		{"http://[::1]:8080/a/", "http://[::1]:8080/a/x", true},
		{"https://user@api.example.com/", "https://user@api.example.com/", false},
		{"https://api.example.com/?q=1", "https://api.example.com/?q=1", false},
		{"https://api.example.com/a/../b/", "https://api.example.com/b/", false},
	}
	for _, c := range cases {
		if got := URLAllowed(c.prefix, c.target); got != c.want {
			t.Errorf("URLAllowed(%q, %q) = %v, want %v", c.prefix, c.target, got, c.want)
		}
	}
}

// genURL is a URL built from parts, so that a reference matcher can
// decide on the parts (what the URL means) instead of on the string.
type genURL struct {
	scheme, host, port, user string
	segs                     []string
	slash                    bool // trailing slash
	query                    string
}

func (g genURL) String() string {
	var b strings.Builder
	b.WriteString(g.scheme + "://" + g.user + g.host + g.port)
	for _, s := range g.segs {
		b.WriteString("/" + s)
	}
	if g.slash || len(g.segs) == 0 {
		b.WriteString("/")
	}
	if g.query != "" {
		b.WriteString("?" + g.query)
	}
	return b.String()
}

var (
	genHosts = []string{"api.example.com", "API.example.com", "api.example.com.evil.com", "evil.com", "example.com", "127.0.0.1"}
	genPorts = []string{"", "", ":443", ":80", ":8443", ":0443"}
	genUsers = []string{"", "", "", "u@", "api.example.com@", "u:p@"}
	genSegs  = []string{"v1", "v1", "v10", "a", "b", "v1.evil", "..", ".", "%2e%2e", "%2F", "x%5Cy", "A", "%76%31"}
)

func randGen(rng *rand.Rand, prefix bool) genURL {
	g := genURL{scheme: []string{"https", "https", "http"}[rng.Intn(3)], host: genHosts[rng.Intn(len(genHosts))],
		port: genPorts[rng.Intn(len(genPorts))], user: genUsers[rng.Intn(len(genUsers))], slash: rng.Intn(2) == 0}
	for n := rng.Intn(4); n > 0; n-- {
		g.segs = append(g.segs, genSegs[rng.Intn(len(genSegs))])
	}
	if !prefix && rng.Intn(4) == 0 {
		g.query = "k=v"
	}
	return g
}

// refDecode is the segment as a server decodes it (the few escapes the
// generator uses).
func refDecode(s string) string {
	return strings.NewReplacer("%2e", ".", "%2F", "/", "%5C", `\`, "%76", "v", "%31", "1").Replace(s)
}

// refPort is the effective port.
func refPort(g genURL) string {
	switch g.port {
	case "":
		if g.scheme == "http" {
			return "80"
		}
		return "443"
	case ":0443":
		return "443"
	}
	return g.port[1:]
}

// refAllowed decides on the parts: a reference written separately from
// the matcher, as plainly as the rule reads.
func refAllowed(p, t genURL) bool {
	if p.user != "" || t.user != "" || p.scheme != t.scheme || !strings.EqualFold(p.host, t.host) || refPort(p) != refPort(t) {
		return false
	}
	for _, g := range []genURL{p, t} {
		for _, s := range g.segs {
			d := refDecode(s)
			if d == "." || d == ".." || strings.ContainsAny(d, `/\`) {
				return false
			}
		}
	}
	if len(t.segs) < len(p.segs) {
		return false
	}
	for i := range p.segs {
		if refDecode(p.segs[i]) != refDecode(t.segs[i]) {
			return false
		}
	}
	return true
}

// TestURLAllowedGenerated checks seeded random prefixes and targets
// against the reference matcher.
func TestURLAllowedGenerated(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	allowed := 0
	for i := 0; i < 20000; i++ {
		p, tg := randGen(rng, true), randGen(rng, false)
		if rng.Intn(3) == 0 {
			// Targets near the prefix, where the bugs live.
			tg = p
			tg.segs = append(append([]string(nil), p.segs...), genSegs[rng.Intn(len(genSegs))])
			tg.slash = rng.Intn(2) == 0
		}
		want, got := refAllowed(p, tg), URLAllowed(p.String(), tg.String())
		if got != want {
			t.Fatalf("URLAllowed(%q, %q) = %v, the reference says %v", p, tg, got, want)
		}
		if got {
			allowed++
		}
	}
	if allowed < 500 {
		t.Fatalf("only %d of the generated pairs were allowed: the generator misses the interesting cases", allowed)
	}
}

// FuzzURLAllowed: whatever the strings, an allowed target is one Go's
// HTTP client would send to the prefix's host and port, with the
// prefix's path segments first.
func FuzzURLAllowed(f *testing.F) {
	for _, s := range [][2]string{
		{"https://api.example.com/v1/", "https://api.example.com/v1/x"},
		{"https://api.example.com/v1/", "https://api.example.com.evil.com/v1/"},
		{"https://api.example.com/v1", "https://api.example.com/v10"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/a?b=c#d"},
		{"https://api.example.com/v1/", "https://api.example.com@evil.com/v1/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, target string) {
		if !URLAllowed(prefix, target) {
			return
		}
		pu, err := url.Parse(prefix)
		if err != nil {
			t.Fatalf("allowed under a prefix that does not parse: %q", prefix)
		}
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatalf("allowed a target the client refuses: %q: %v", target, err)
		}
		tu := req.URL
		if tu.User != nil || pu.User != nil {
			t.Fatalf("userinfo allowed: %q %q", prefix, target)
		}
		if !strings.EqualFold(tu.Hostname(), pu.Hostname()) || tu.Scheme != pu.Scheme {
			t.Fatalf("%q reaches host %q, not the prefix's %q", target, tu.Hostname(), pu.Hostname())
		}
		want := strings.TrimSuffix(pu.Path, "/")
		got := tu.Path
		if got != want && !strings.HasPrefix(got, want+"/") {
			t.Fatalf("%q (path %q) is not under %q", target, got, pu.Path)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("dot segment allowed: %q", target)
			}
		}
	})
}
