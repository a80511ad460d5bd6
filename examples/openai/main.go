// Command openai runs an agent loop on the official OpenAI Go SDK (Chat
// Completions) with the kernel's tools (adapters/openaisdk): the model is
// asked to forge a tool, check it and run it; every tool call runs through
// the kernel and its tool message goes back in the next request, until the
// model answers without tool calls. The kernel persists the tool to a
// throw-away git remote, as it would to the team's shared toolbox.
//
// With OPENAI_API_KEY set it talks to the real API (OPENAI_MODEL picks the
// model). Without it, the SDK is pointed at a local server that replays a
// recorded exchange (testdata/exchange.json) and checks each request as the
// API would; `make test` runs it that way, with no network.
//
//	go run ./examples/openai
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tgp-go/tgp/adapters/openaisdk"
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
		fmt.Fprintln(os.Stderr, "openai example:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, w io.Writer) (err error) {
	work, err := os.MkdirTemp("", "tgp-openai-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	opts := []option.RequestOption{}
	model := openai.ChatModelGPT5_5
	if os.Getenv("OPENAI_API_KEY") != "" {
		if m := os.Getenv("OPENAI_MODEL"); m != "" {
			model = m
		}
		fmt.Fprintln(w, "== live: the OpenAI API, model", model, "==")
	} else {
		steps, lerr := replay.Load(recording)
		if lerr != nil {
			return lerr
		}
		srv := replay.Start(replay.OpenAIChat, steps)
		defer srv.Close()
		opts = replayOptions(srv.URL)
		fmt.Fprintln(w, "== replay: a recorded exchange on", srv.URL, "(set OPENAI_API_KEY for the real API) ==")
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
	return []option.RequestOption{option.WithBaseURL(url + "/v1/"), option.WithAPIKey("replay-key"), option.WithMaxRetries(0)}
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
		kernel.WithSetting("git.author.name", "GPT"),
		kernel.WithSetting("git.author.email", "gpt@agents.example"),
		kernel.WithSetting("sql.driver", "sqlite"))
	if err != nil {
		return "", err
	}
	defer k.Shutdown(ctx)
	if err := k.Boot(ctx); err != nil {
		return "", err
	}
	client := openai.NewClient(opts...)
	params := openai.ChatCompletionNewParams{
		Model: model,
		Tools: openaisdk.Tools(k.Tools()),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(k.SystemPrompt()),
			openai.UserMessage(task),
		},
	}
	fmt.Fprintln(w, "[user]", task)
	last := ""
	for turn := 0; turn < 20; turn++ {
		cc, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return "", fmt.Errorf("turn %d: %w", turn+1, err)
		}
		if len(cc.Choices) == 0 {
			return "", fmt.Errorf("turn %d: no choices", turn+1)
		}
		msg := cc.Choices[0].Message
		if msg.Content != "" {
			last = msg.Content
			fmt.Fprintln(w, "[model]", msg.Content)
		}
		for _, c := range msg.ToolCalls {
			fmt.Fprintf(w, "[model] → %s %s\n", c.Function.Name, abbreviate(c.Function.Arguments, 120))
		}
		results := openaisdk.Run(ctx, k, msg.ToolCalls)
		if len(results) == 0 {
			return last, nil
		}
		for _, r := range results {
			fmt.Fprintf(w, "[kernel] ← %s\n", abbreviate(r.OfTool.Content.OfString.Value, 160))
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, results...)
	}
	return last, fmt.Errorf("the model did not finish in 20 turns")
}

func abbreviate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
