// Command anthropic runs an agent loop on the official Anthropic Go SDK
// with the kernel's tools (adapters/anthropicsdk): Claude is asked to
// forge a tool, check it and run it; every tool_use block runs through the
// kernel and its tool_result goes back in the next message, until the
// model ends its turn. The kernel persists the tool to a throw-away git
// remote, as it would to the team's shared toolbox.
//
// With ANTHROPIC_API_KEY set it talks to the real API (ANTHROPIC_MODEL
// picks the model). Without it, the SDK is pointed at a local server that
// replays a recorded exchange (testdata/exchange.json) and checks each
// request as the API would; `make test` runs it that way, with no network.
//
//	go run ./examples/anthropic
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/adapters/anthropicsdk"
	"github.com/tgp-go/tgp/examples/internal/replay"
	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
)

//go:embed testdata/exchange.json
var recording []byte

// task is what the user asks; the recording answers exactly this.
const task = "Forge a reusable TypeScript tool at tools/math/add.ts that adds two numbers a and b, " +
	"check it, then run it with a=2 and b=3 and tell me the result."

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := realMain(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic example:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, w io.Writer) (err error) {
	work, err := os.MkdirTemp("", "tgp-anthropic-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	opts := []option.RequestOption{}
	model := anthropic.ModelClaudeSonnet5_5
	if os.Getenv("ANTHROPIC_API_KEY") != "" {
		if m := os.Getenv("ANTHROPIC_MODEL"); m != "" {
			model = m
		}
		fmt.Fprintln(w, "== live: the Anthropic API, model", model, "==")
	} else {
		steps, lerr := replay.Load(recording)
		if lerr != nil {
			return lerr
		}
		srv := replay.Start(replay.Anthropic, steps)
		defer srv.Close()
		opts = replayOptions(srv.URL)
		fmt.Fprintln(w, "== replay: a recorded exchange on", srv.URL, "(set ANTHROPIC_API_KEY for the real API) ==")
		defer func() {
			if rerr := srv.Err(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	_, err = run(ctx, w, work, model, opts...)
	return err
}

// replayOptions point the SDK at the replay server, whatever the
// environment says.
func replayOptions(url string) []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(url), option.WithAPIKey("replay-key"), option.WithMaxRetries(0)}
}

// run boots a kernel on a fresh remote under work and runs the agent loop;
// it returns the model's last text.
func run(ctx context.Context, w io.Writer, work, model string, opts ...option.RequestOption) (string, error) {
	remote := filepath.Join(work, "toolbox.git")
	if _, err := git.PlainInitWithOptions(remote, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}}); err != nil {
		return "", err
	}
	k, err := kernel.New(ctx,
		kernel.WithEnviron([]string{}),
		kernel.WithRoot(filepath.Join(work, "agent")),
		kernel.WithSetting("git.remote", remote),
		kernel.WithSetting("git.author.name", "Claude"),
		kernel.WithSetting("git.author.email", "claude@agents.example"),
		kernel.WithSetting("sql.driver", "sqlite"))
	if err != nil {
		return "", err
	}
	defer k.Shutdown(ctx)
	if err := k.Boot(ctx); err != nil {
		return "", err
	}
	client := anthropic.NewClient(opts...)
	params := anthropic.MessageNewParams{
		Model:     model,
		MaxTokens: 4096,
		System:    []anthropic.TextBlockParam{{Text: k.SystemPrompt()}},
		Tools:     anthropicsdk.Tools(k.Tools()),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(task))},
	}
	fmt.Fprintln(w, "[user]", task)
	last := ""
	for turn := 0; turn < 20; turn++ {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return "", fmt.Errorf("turn %d: %w", turn+1, err)
		}
		for _, b := range msg.Content {
			switch b.Type {
			case "text":
				last = b.Text
				fmt.Fprintln(w, "[claude]", b.Text)
			case "tool_use":
				fmt.Fprintf(w, "[claude] → %s %s\n", b.Name, abbreviate(compact(b.Input), 120))
			}
		}
		results := anthropicsdk.Run(ctx, k, msg.Content)
		if len(results) == 0 {
			return last, nil
		}
		for _, r := range results {
			tr := r.OfToolResult
			mark := "←"
			if tr.IsError.Value {
				mark = "← error:"
			}
			fmt.Fprintf(w, "[kernel] %s %s\n", mark, abbreviate(tr.Content[0].OfText.Text, 160))
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}
	return last, fmt.Errorf("the model did not finish in 20 turns")
}

func compact(raw []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func abbreviate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
