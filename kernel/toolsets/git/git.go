// Package git is the git toolset: the git tools on the root's repository
// (tools/gittools), when tools.git.enabled. It links no engine beyond
// go-git.
package git

import (
	"context"

	"github.com/tgp-go/tgp/kernel/toolset"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/tools/gittools"
)

// Name is the toolset's name.
const Name = "git"

// Toolset is the git tools.
func Toolset() toolset.Toolset {
	return toolset.Toolset{
		Name:        Name,
		Description: "the git tools on the root's repository: status, diff, log, show, commit, branch, stash...",
		Build: func(_ context.Context, env *toolset.Env) ([]*tools.Tool, error) {
			if !env.GitTools.Enabled {
				return nil, nil
			}
			return gittools.Tools(gittools.Deps{
				FS: env.Raw, Repo: env.Box.Repo, Persister: env.Box,
				TimeoutMS: env.GitTools.TimeoutMS, MaxBytes: env.GitTools.MaxBytes,
				Environ: env.Environment(), AuthorName: env.Author.Name, AuthorEmail: env.Author.Email,
				SigningKey: env.SigningKey,
			}), nil
		},
	}
}
