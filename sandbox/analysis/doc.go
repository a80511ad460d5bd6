// Package analysis is check_tool's static analysis of agent-written
// TypeScript tools: the TGP rules (no any, no eval or Function tricks, no
// process except process.env.NODE_ENV, no hardcoded secrets or e-mail
// addresses, no magic numbers, literal and allowed requires only), each with
// a rule id and a severity, reported at TS line:column.
//
// Types are erased by the compiler, so no-any is checked on the TS source
// with a small scanner that skips comments, strings and templates. Every
// other rule walks goja's AST of esbuild's CommonJS output and maps
// positions back through the inline source map, so the positions are the
// agent's. goja's ast package has no walker; a reflection walk over its
// node structs is used (the AST is small: one tool).
//
// no-magic-numbers mirrors the original TGP validator: -1, 0, 1, 2, 100
// and 1000 are allowed anywhere; other numbers only in a top-level const
// declaration, as a default parameter value, or as an array index.
package analysis
