// Command embedhost is a Go program that embeds the kernel the simplest
// way, calling neither shell.ServeExecIfRequested nor
// sandbox.ServeWorkerIfRequested, with a side effect in main that must
// happen once: TestEmbeddingHostWithoutHooks builds it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
)

// marker is the file main appends a line to each time it runs (set with
// -ldflags -X: a re-executed child has neither the parent's arguments nor
// its environment).
var marker string

func main() {
	f, err := os.OpenFile(marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "main ran: %q\n", os.Args)
		f.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	k, err := kernel.New(ctx, kernel.WithRoot(os.Getenv("EMBED_ROOT")), kernel.WithSetting("sandbox.isolation", "process"),
		kernel.WithSetting("git.author.name", "Host"), kernel.WithSetting("git.author.email", "host@example.com"))
	if err != nil {
		fail(err)
	}
	defer k.Shutdown(context.Background())
	if err := k.Boot(ctx); err != nil {
		fail(err)
	}
	out := map[string]any{}
	for _, c := range []struct{ name, tool, args string }{
		{"write", "write_file", `{"path":"tools/add.ts","content":"/** Adds. */\nexport default (a: {x: number; y: number}) => a.x + a.y;\n"}`},
		{"shell", "shell", `{"command":"ls tools"}`},
		{"exec", "exec_tool", `{"path":"tools/add.ts","args":{"x":1,"y":2}}`},
	} {
		start := time.Now()
		res, err := k.Call(ctx, c.tool, json.RawMessage(c.args))
		r := map[string]any{"seconds": time.Since(start).Seconds()}
		if err != nil {
			r["error"] = err.Error()
		} else {
			r["value"] = res.Value
		}
		out[c.name] = r
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "embedhost:", err)
	os.Exit(1)
}
