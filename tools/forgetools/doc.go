// Package forgetools holds the tools that check and run the agent's own
// TypeScript tools and its SQL: check_tool (the sandbox's static
// analysis), exec_tool (a run in the goja sandbox, whose written files are
// persisted like any file tool's) and exec_sql. It is apart from the tool
// framework (package tools) so that what needs no JavaScript runtime does
// not link one.
package forgetools
