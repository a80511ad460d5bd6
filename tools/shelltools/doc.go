// Package shelltools holds the shell tools: shell (one command line in the
// scoped shell), exec_command and write_stdin (interactive sessions on a
// PTY). The files a command changes in its write scope are persisted like
// any file tool's. It is apart from the tool framework (package tools) so
// that what needs no shell does not link one.
package shelltools
