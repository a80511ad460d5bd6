// Package all gives a kernel everything, as before toolsets: imported
// (for its init), it registers the files, git, sandbox and shell
// toolsets as the ones kernel.New builds when it is given none
// (kernel.WithToolsets), git.journal's PostgreSQL journal, and every code
// host's pull requests (forge/all). cmd/tgp and the tests import it; a
// host that wants less passes its toolsets and imports only those.
package all

import (
	_ "github.com/tgp-go/tgp/forge/all" // every code host's pull requests
	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/journal"
	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/kernel/toolsets/files"
	"github.com/tgp-go/tgp/kernel/toolsets/git"
	"github.com/tgp-go/tgp/kernel/toolsets/sandbox"
	"github.com/tgp-go/tgp/kernel/toolsets/shell"
)

// Toolsets are every toolset, in the order the kernel builds them.
func Toolsets() []toolset.Toolset {
	return []toolset.Toolset{files.Toolset(), sandbox.Toolset(), git.Toolset(), shell.Toolset()}
}

func init() {
	for _, ts := range Toolsets() {
		toolset.Register(ts)
	}
	toolset.RegisterJournal(func(dsn string) (gitbackend.Journal, func()) {
		lazy := journal.NewLazy(dsn)
		return lazy, lazy.Close
	})
}
