package sandbox

import "github.com/tgp-go/tgp/sandbox/hostapi"

// CheckURLPrefix is hostapi.CheckURLPrefix.
func CheckURLPrefix(prefix string) error { return hostapi.CheckURLPrefix(prefix) }

// URLAllowed is hostapi.URLAllowed.
func URLAllowed(prefix, target string) bool { return hostapi.URLAllowed(prefix, target) }

func urlAllowedAny(prefixes []string, target string) bool {
	return hostapi.URLAllowedAny(prefixes, target)
}
