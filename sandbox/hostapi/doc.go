// Package hostapi is what a host sees of the sandbox without linking it
// (no goja, no esbuild): host functions (tgp.<name>) and their TypeScript
// declarations, exec_tool's Outcome, and the URL prefix rules of
// sandbox.allowed_fetch_urls and a tool's permissions. The sandbox
// re-exports each under its old name.
package hostapi
