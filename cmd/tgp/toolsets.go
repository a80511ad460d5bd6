package main

// tgp keeps everything: every toolset, git.journal's journal, and pull
// requests on every host it knows.
import _ "github.com/tgp-go/tgp/kernel/all"
