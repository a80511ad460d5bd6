package kernel

// The code hosts register themselves with forge.New when imported.
import (
	_ "github.com/tgp-go/tgp/forge/bitbucket"
	_ "github.com/tgp-go/tgp/forge/gitea"
	_ "github.com/tgp-go/tgp/forge/github"
	_ "github.com/tgp-go/tgp/forge/gitlab"
)
