// Package all links every code host into a program: importing it
// registers github, gitlab, gitea, forgejo and bitbucket with forge.New.
// A program that opens pull requests on one host imports that host's
// package instead (forge/github...), and links that SDK only.
package all

import (
	_ "github.com/tgp-go/tgp/forge/bitbucket" // registers bitbucket
	_ "github.com/tgp-go/tgp/forge/gitea"     // registers gitea and forgejo
	_ "github.com/tgp-go/tgp/forge/github"    // registers github
	_ "github.com/tgp-go/tgp/forge/gitlab"    // registers gitlab
)
