package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func bootRefreshing(t *testing.T, remote, interval string, opts ...Option) *Kernel {
	t.Helper()
	opts = append([]Option{WithEnviron([]string{}), WithSetting("git.remote", remote), WithRoot(t.TempDir()),
		WithSetting("git.author.name", "A"), WithSetting("git.author.email", "a@x"),
		WithSetting("git.refresh_interval", interval)}, opts...)
	k, err := New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func findsTool(t *testing.T, k *Kernel, query, path string) bool {
	t.Helper()
	raw, _ := json.Marshal(call(t, k, "find_tools", map[string]any{"query": query}).Value)
	return strings.Contains(string(raw), path)
}

// TestRefreshSeesOtherAgentsTools: a long-lived kernel sees
// the tools another kernel pushed: with interval 0 on the very next read,
// with an interval once it has passed, with off never (until boot).
func TestRefreshSeesOtherAgentsTools(t *testing.T) {
	remote := gittest.BareRemote(t)
	writer := bootKernel(t, remote, false)
	call(t, writer, "write_file", map[string]string{"path": "tools/seed.ts", "content": "/** Seed. */\nexport default () => 0;\n"})

	var mu sync.Mutex
	var events []RefreshEvent
	hook := WithRefreshHook(func(e RefreshEvent) { mu.Lock(); events = append(events, e); mu.Unlock() })
	every := bootRefreshing(t, remote, "0", hook)
	later := bootRefreshing(t, remote, "50ms")
	never := bootRefreshing(t, remote, "off")

	call(t, writer, "write_file", map[string]string{"path": "tools/fresh.ts", "content": "/** Converts celsius to fahrenheit. */\nconst RATIO = 1.8;\nconst OFFSET = 32;\nexport default (c: number) => c * RATIO + OFFSET;\n"})
	if !findsTool(t, every, "celsius fahrenheit", "tools/fresh.ts") {
		t.Fatal("interval 0: find_tools did not see the tool pushed before the call")
	}
	if got := call(t, every, "read_file", map[string]any{"path": "tools/fresh.ts"}); !strings.Contains(jsonOf(got.Value), "celsius") {
		t.Fatalf("interval 0: read_file: %s", jsonOf(got.Value))
	}
	mu.Lock()
	if len(events) != 1 || strings.Join(events[0].Tools, ",") != "tools/fresh.ts" {
		t.Fatalf("refresh events: %+v", events)
	}
	mu.Unlock()

	time.Sleep(60 * time.Millisecond) // the interval has passed: the next read checks
	if !findsTool(t, later, "celsius fahrenheit", "tools/fresh.ts") {
		t.Fatal("interval 50ms: not seen once the interval passed")
	}
	time.Sleep(60 * time.Millisecond)
	if findsTool(t, never, "celsius fahrenheit", "tools/fresh.ts") {
		t.Fatal("interval off: the kernel refreshed")
	}
	if st, _ := never.Status(context.Background()); st.Refresh.LastCheck.IsZero() {
		t.Fatal("status: boot's check not reported")
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
