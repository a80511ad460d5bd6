// Package files is the files toolset: read_file, write_file, list_files,
// search and the other file tools on the kernel's jailed root
// (tools.FileTools). It links no engine.
package files

import (
	"context"

	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/tools"
)

// Name is the toolset's name.
const Name = "files"

// Toolset is the file tools.
func Toolset() toolset.Toolset {
	return toolset.Toolset{
		Name:        Name,
		Description: "the file tools on the jailed root: read, write, edit, list, search, delete",
		Build: func(_ context.Context, env *toolset.Env) ([]*tools.Tool, error) {
			return tools.FileTools(env.FS, env.Box, tools.FileToolsConfig{
				BlockUpwardTraversal: env.FSConfig.BlockUpwardTraversal,
				Checker:              env.Checker,
			}), nil
		},
	}
}
