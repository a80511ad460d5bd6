package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
)

// remoteWithTools makes a bare remote holding n tool files (one commit).
func remoteWithTools(b *testing.B, n int) string {
	b.Helper()
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("tools/group%02d/tool%04d.ts", i%50, i)] = fmt.Sprintf("/** Tool %d. */\nexport default (a: { x: number }) => a.x + %d;\n", i, i%3)
	}
	return gittest.SeedRemote(b, files)
}

func newKernel(b *testing.B, remote, root string) *kernel.Kernel {
	b.Helper()
	k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithRoot(root),
		kernel.WithSetting("git.remote", remote), kernel.WithSetting("git.author.name", "Bench"),
		kernel.WithSetting("git.author.email", "bench@example.com"), kernel.WithSetting("git.retry.max_attempts", 100))
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkColdBoot: a kernel booting (clone + registry) on an empty root
// versus `git clone` of the same remote.
func BenchmarkColdBoot(b *testing.B) {
	for _, n := range []int{10, 1000} {
		remote := remoteWithTools(b, n)
		b.Run(fmt.Sprintf("tools=%d/kernel", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k := newKernel(b, remote, filepath.Join(b.TempDir(), "root"))
				if err := k.Boot(context.Background()); err != nil {
					b.Fatal(err)
				}
				if k.Registry().Len() != n {
					b.Fatalf("registry has %d tools", k.Registry().Len())
				}
				_ = k.Shutdown(context.Background())
			}
		})
		b.Run(fmt.Sprintf("tools=%d/git-clone", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(b.TempDir(), "clone")
				cmd := exec.Command("git", "clone", "-q", "-b", "main", remote, dir)
				cmd.Env = gittest.Env(b.TempDir())
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
			}
		})
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkPersist: write_file until the push is accepted, on a local
// bare remote, 50 writes per iteration; reports p50/p90. The reference is
// the git CLI doing the same (write, add, commit, push) on the same disk.
func BenchmarkPersist(b *testing.B) {
	for _, mode := range []string{"kernel-disk", "kernel-memory", "git-cli"} {
		b.Run(mode, func(b *testing.B) {
			remote := remoteWithTools(b, 10)
			var write func(p, content string)
			switch mode {
			case "git-cli":
				dir := gittest.Clone(b, remote)
				env := gittest.Env(b.TempDir())
				git := func(args ...string) {
					cmd := exec.Command("git", args...)
					cmd.Dir, cmd.Env = dir, env
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("git %v: %v %s", args, err, out)
					}
				}
				write = func(p, content string) {
					full := filepath.Join(dir, p)
					_ = os.MkdirAll(filepath.Dir(full), 0o755)
					if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
						b.Fatal(err)
					}
					git("add", p)
					git("commit", "-q", "-m", "forge: "+p)
					git("push", "-q", "origin", "main")
				}
			default:
				opts := []kernel.Option{kernel.WithEnviron([]string{}), kernel.WithSetting("git.remote", remote),
					kernel.WithSetting("git.author.name", "Bench"), kernel.WithSetting("git.author.email", "bench@example.com")}
				if mode == "kernel-memory" {
					opts = append(opts, kernel.WithMemoryFS())
				} else {
					opts = append(opts, kernel.WithRoot(filepath.Join(b.TempDir(), "root")))
				}
				k, err := kernel.New(context.Background(), opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := k.Boot(context.Background()); err != nil {
					b.Fatal(err)
				}
				defer k.Shutdown(context.Background())
				write = func(p, content string) {
					args, _ := json.Marshal(map[string]string{"path": p, "content": content})
					if _, err := k.Call(context.Background(), "write_file", args); err != nil {
						b.Fatal(err)
					}
				}
			}
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := 0; j < 50; j++ {
					start := time.Now()
					write(fmt.Sprintf("tools/p/w%d_%d.ts", i, j), fmt.Sprintf("/** W. */\nexport default () => '%d';\n", j))
					lat = append(lat, time.Since(start))
				}
			}
			b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.9).Microseconds())/1000, "p90-ms")
		})
	}
}

// BenchmarkConcurrentAgents: K kernels × 5 writes each, concurrently, on
// one remote (K=1 is the reference: the writes of 8 kernels by one kernel
// in a row); every write must land. For profiles of the concurrent rows of
// BenchmarkTable (-bench 'ConcurrentAgents/kernels=8' -cpuprofile).
func BenchmarkConcurrentAgents(b *testing.B) {
	for _, c := range []struct{ kernels, writes int }{{8, 5}, {32, 5}, {1, 40}} {
		b.Run(fmt.Sprintf("kernels=%d", c.kernels), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				concurrentAgents(b, c.kernels, c.writes)
			}
		})
	}
}

func concurrentAgents(b *testing.B, kernels, writes int) {
	b.StopTimer()
	remote := remoteWithTools(b, 10)
	ks := make([]*kernel.Kernel, kernels)
	for j := range ks {
		ks[j] = newKernel(b, remote, filepath.Join(b.TempDir(), fmt.Sprint("root", j)))
		if err := ks[j].Boot(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StartTimer()
	var wg sync.WaitGroup
	errs := make(chan error, kernels*writes)
	for j, k := range ks {
		wg.Add(1)
		go func(j int, k *kernel.Kernel) {
			defer wg.Done()
			for w := 0; w < writes; w++ {
				args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("tools/a%d/t%d.ts", j, w), "content": "/** T. */\nexport default () => 1;\n"})
				if _, err := k.Call(context.Background(), "write_file", args); err != nil {
					errs <- err
				}
			}
		}(j, k)
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	clone := gittest.Clone(b, remote)
	for j := 0; j < kernels; j++ {
		for w := 0; w < writes; w++ {
			if _, err := os.Stat(filepath.Join(clone, fmt.Sprintf("tools/a%d/t%d.ts", j, w))); err != nil {
				b.Fatalf("lost write: %v", err)
			}
		}
	}
	for _, k := range ks {
		_ = k.Shutdown(context.Background())
	}
	b.StartTimer()
}
