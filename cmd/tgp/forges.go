package main

// tgp opens pull requests on every host it knows.
import _ "github.com/tgp-go/tgp/forge/all"
