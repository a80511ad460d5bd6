// Package pretty is git's commit formatting (pretty.c, log-tree.c's
// show_log) with what it is made of: dates as date.c shows and reads
// them (show_date, approxidate, strftime), the mailmap (mailmap.c),
// trailers (trailer.c), notes and decorations as git log shows them, and
// the %G placeholders of a signed commit. git log and git show print
// commits here (Context, Format, LogPrinter); git blame and the tools'
// summaries use its mailmap, widths and subjects.
//
// It is hand-written from git 2.39's sources: no Go library renders
// git's formats, and the output has to be byte-identical to git's, so
// identities and dates are read from the raw commit header, not from
// go-git's parsed signatures. The tools' tests compare it with the git
// CLI. It reads repositories and knows nothing of the tools' arguments.
package pretty
