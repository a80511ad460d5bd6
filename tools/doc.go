// Package tools is the agent-tool framework of TGP: one definition per tool
// serves the Go API, `tgp call`, the MCP server and the OpenAI / Anthropic
// tool-JSON exports.
//
// A tool is declared with [Define] from a Go struct of arguments. The input
// JSON Schema is generated from that struct (github.com/google/jsonschema-go,
// additionalProperties false) and extended from struct tags (default, enum,
// minimum, maximum) that jsonschema-go does not read itself. Every call goes
// through [Set.Call], which validates the raw JSON against the schema (an
// unknown field, a wrong type or a broken rule is a bad_args error that names
// the field), fills in defaults, asks the approval policy, emits events, caps
// the output and turns any error or panic into a typed [*Error].
//
// The file tools (list_files, list_dir, read_file, write_file, patch_file,
// apply_patch, grep_files, delete_file) and find_tools also live here, on
// the jailed vfs. The three that write check an agent tool's new source
// before it is written, through the [ToolChecker] the host gives (the
// kernel gives check_tool's analysis): a tool with errors is refused
// with compile_error unless the call says force. The families that need a runtime are packages of their
// own (forgetools: the goja sandbox; shelltools: the shell; gittools: the
// git tools), so that the framework and what imports it (the MCP server)
// link neither goja, esbuild nor the shell.
package tools
