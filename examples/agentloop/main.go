// Command agentloop is the TGP demo (`make demo`) and an example of wiring
// the kernel into an agent loop. A scripted "model" stands in for an LLM:
// it receives the tools as OpenAI function-tool JSON and answers with tool
// calls; the loop runs each call through the kernel and feeds the result
// back. Two kernels share one throw-away remote: agent A forges a tool,
// checks and runs it; agent B boots, finds it and reuses it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
	"github.com/tgp-go/tgp/tools"
)

// toolCall is what a model returns: a function name and JSON arguments.
type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"arguments"`
}

// model is the interface an LLM client would implement.
type model interface {
	Next(ctx context.Context, toolDefs []tools.OpenAITool, lastResult string) (*toolCall, string)
}

// scripted replays a fixed plan, ignoring results (a real model would read them).
type scripted struct {
	steps []toolCall
	say   []string
	i     int
}

func (s *scripted) Next(ctx context.Context, _ []tools.OpenAITool, _ string) (*toolCall, string) {
	if s.i >= len(s.steps) {
		return nil, "done"
	}
	c := s.steps[s.i]
	msg := s.say[s.i]
	s.i++
	return &c, msg
}

func call(name string, args any) toolCall {
	raw, _ := json.Marshal(args)
	return toolCall{Name: name, Args: raw}
}

// runAgent is the agent loop: ask the model, run its tool call, repeat.
func runAgent(ctx context.Context, who string, k *kernel.Kernel, m model) error {
	defs := tools.OpenAI(k.Tools())
	last := ""
	for {
		c, say := m.Next(ctx, defs, last)
		if c == nil {
			return nil
		}
		fmt.Printf("\n[%s] %s\n[%s] → %s %s\n", who, say, who, c.Name, abbreviate(string(c.Args), 100))
		res, err := k.Call(ctx, c.Name, c.Args)
		if err != nil {
			last = err.Error()
			fmt.Printf("[%s] ← error: %s\n", who, err)
			continue
		}
		out, _ := json.Marshal(res.Value)
		last = string(out)
		fmt.Printf("[%s] ← %s\n", who, abbreviate(last, 240))
	}
}

func abbreviate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "\\n")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

const discountTool = `/**
 * Applies a percentage discount to each order's total and reports the sum.
 * Reads orders from the database; the rate comes from the arguments.
 */
interface Order { id: number; total: number }

export default async function discount(args: { rate: number }): Promise<{ orders: number; total: number }> {
  const rows = (await tgp.exec_sql('SELECT id, total FROM orders ORDER BY id', [])) as Order[];
  const discounted = rows.map((o) => o.total * (1 - args.rate));
  const total = discounted.reduce((sum, t) => sum + t, 0);
  tgp.log('discounted', rows.length, 'orders');
  return { orders: rows.length, total };
}
`

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := demo(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func demo(ctx context.Context) error {
	work, err := os.MkdirTemp("", "tgp-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	remote := filepath.Join(work, "toolbox.git")
	// A throw-away shared remote, made in process: no git binary needed.
	if _, err := git.PlainInitWithOptions(remote, &git.PlainInitOptions{Bare: true,
		InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}}); err != nil {
		return err
	}
	dbPath := filepath.Join(work, "shop.sqlite")
	newKernel := func(name string) (*kernel.Kernel, error) {
		return kernel.New(ctx,
			kernel.WithEnviron([]string{"TGP_SQL_DSN=" + dbPath}),
			kernel.WithRoot(filepath.Join(work, name)),
			kernel.WithSetting("git.remote", remote),
			kernel.WithSetting("git.author.name", "Agent "+name),
			kernel.WithSetting("git.author.email", name+"@agents.example"),
			kernel.WithSetting("sql.driver", "sqlite"))
	}
	fmt.Println("== TGP demo: two agents, one shared toolbox ==")
	fmt.Println("remote:", remote)
	a, err := newKernel("agent-a")
	if err != nil {
		return err
	}
	defer a.Shutdown(ctx)
	if err := a.Boot(ctx); err != nil {
		return err
	}
	for _, q := range []string{"CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)", "INSERT INTO orders (total) VALUES (100), (250), (40)"} {
		raw, _ := json.Marshal(map[string]string{"sql": q})
		if _, err := a.Call(ctx, "exec_sql", raw); err != nil {
			return err
		}
	}
	agentA := &scripted{
		say: []string{"Is there a discount tool already?", "No: forging one.", "Checking it against the 8 standards.", "Running it with a 10% rate."},
		steps: []toolCall{
			call("find_tools", map[string]any{"query": "discount orders"}),
			call("write_file", map[string]any{"path": "tools/shop/discount.ts", "content": discountTool}),
			call("check_tool", map[string]any{"path": "tools/shop/discount.ts"}),
			call("exec_tool", map[string]any{"path": "tools/shop/discount.ts", "args": map[string]any{"rate": 0.1}}),
		},
	}
	if err := runAgent(ctx, "A", a, agentA); err != nil {
		return err
	}
	fmt.Println("\n== agent B wakes up elsewhere and pulls the toolbox ==")
	b, err := newKernel("agent-b")
	if err != nil {
		return err
	}
	defer b.Shutdown(ctx)
	if err := b.Boot(ctx); err != nil {
		return err
	}
	agentB := &scripted{
		say: []string{"Reuse before forging: searching.", "Found it; running it with 25%."},
		steps: []toolCall{
			call("find_tools", map[string]any{"query": "apply a discount"}),
			call("exec_tool", map[string]any{"path": "tools/shop/discount.ts", "args": map[string]any{"rate": 0.25}}),
		},
	}
	if err := runAgent(ctx, "B", b, agentB); err != nil {
		return err
	}
	fmt.Println("\n== git log of the shared remote ==")
	repo, err := git.PlainOpen(remote)
	if err != nil {
		return err
	}
	iter, err := repo.Log(&git.LogOptions{})
	if err != nil {
		return err
	}
	return iter.ForEach(func(c *object.Commit) error {
		fmt.Printf("%s %-28s %s\n", c.Hash.String()[:7], c.Author.Name+" <"+c.Author.Email+">", strings.TrimSpace(c.Message))
		return nil
	})
}
