package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/tools"
)

// BenchmarkTable measures every row of issue #15's table, each against its
// reference in the same run, and reports for row K the metrics K-ms (TGP),
// K-ref-ms (the reference), K-ratio and K-allocs (allocations per
// operation of TGP's side). `make bench` runs it with bench/cmd/benchtable,
// which prints them as one table. Every side is timed several times and
// the median taken, so one run (-benchtime 1x) is enough.
func BenchmarkTable(b *testing.B) {
	b.Run("persist", benchPersistRow)
	b.Run("boot", benchBootRow)
	b.Run("concurrent", benchConcurrentRows)
	b.Run("gittools", benchGitToolRows)
}

// report records one row.
func report(b *testing.B, key string, tgp, ref time.Duration, allocs float64) {
	b.ReportMetric(ms(tgp), key+"-ms")
	b.ReportMetric(ms(ref), key+"-ref-ms")
	b.ReportMetric(float64(tgp)/float64(ref), key+"-ratio")
	b.ReportMetric(allocs, key+"-allocs")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(d []time.Duration) time.Duration { return percentile(d, 0.5) }

// mallocs counts heap allocations of fn (all goroutines).
func mallocs(fn func()) uint64 {
	var a, z runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&z)
	return z.Mallocs - a.Mallocs
}

func bootKernel(b *testing.B, remote string, memory bool) *kernel.Kernel {
	b.Helper()
	opts := []kernel.Option{kernel.WithEnviron([]string{}), kernel.WithSetting("git.remote", remote),
		kernel.WithSetting("git.author.name", "Bench"), kernel.WithSetting("git.author.email", "bench@example.com"),
		kernel.WithSetting("git.retry.max_attempts", 100)}
	if memory {
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
	b.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

func writeFile(b *testing.B, k *kernel.Kernel, p string, n int) {
	args, _ := json.Marshal(map[string]string{"path": p, "content": fmt.Sprintf("/** W. */\nexport default () => %d;\n", n)})
	if _, err := k.Call(context.Background(), "write_file", args); err != nil {
		b.Fatal(err)
	}
}

// benchPersistRow: write_file until the push is accepted (p50 of 30), on
// disk and on a memory root, against write + git add + commit + push.
func benchPersistRow(b *testing.B) {
	const n = 30
	timeKernel := func(memory bool) (time.Duration, float64) {
		k := bootKernel(b, remoteWithTools(b, 10), memory)
		writeFile(b, k, "tools/p/warm.ts", 0)
		var lat []time.Duration
		allocs := mallocs(func() {
			for i := 0; i < n; i++ {
				start := time.Now()
				writeFile(b, k, fmt.Sprintf("tools/p/w%d.ts", i), i)
				lat = append(lat, time.Since(start))
			}
		})
		return median(lat), float64(allocs) / n
	}
	disk, diskAllocs := timeKernel(false)
	mem, memAllocs := timeKernel(true)

	dir := gittest.Clone(b, remoteWithTools(b, 10))
	env := gittest.Env(b.TempDir())
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	var lat []time.Duration
	for i := 0; i < n/2; i++ {
		p := fmt.Sprintf("tools/p/w%d.ts", i)
		start := time.Now()
		_ = os.MkdirAll(filepath.Join(dir, "tools/p"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf("/** W. */\nexport default () => %d;\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		git("add", p)
		git("commit", "-q", "-m", "forge: "+p)
		git("push", "-q", "origin", "main")
		lat = append(lat, time.Since(start))
	}
	ref := median(lat)
	report(b, "persist-disk", disk, ref, diskAllocs)
	report(b, "persist-memory", mem, ref, memAllocs)
}

// benchBootRow: a kernel booting (clone + registry) on an empty root,
// 1,000 tools, against git clone of the same remote (median of 3).
func benchBootRow(b *testing.B) {
	remote := remoteWithTools(b, 1000)
	var kt, gt []time.Duration
	var allocs uint64
	for i := 0; i < 3; i++ {
		root := filepath.Join(b.TempDir(), "root")
		start := time.Now()
		allocs += mallocs(func() {
			k := newKernel(b, remote, root)
			if err := k.Boot(context.Background()); err != nil {
				b.Fatal(err)
			}
			if k.Registry().Len() != 1000 {
				b.Fatalf("registry has %d tools", k.Registry().Len())
			}
			kt = append(kt, time.Since(start))
			_ = k.Shutdown(context.Background())
		})
		dir := filepath.Join(b.TempDir(), "clone")
		cmd := exec.Command("git", "clone", "-q", "-b", "main", remote, dir)
		cmd.Env = gittest.Env(b.TempDir())
		start = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		gt = append(gt, time.Since(start))
	}
	report(b, "boot-1000", median(kt), median(gt), float64(allocs)/3)
}

// writeConcurrently has each kernel write `writes` files at once and
// returns the wall time; every write is then checked on the remote.
func writeConcurrently(b *testing.B, remote string, ks []*kernel.Kernel, writes int, prefix string) time.Duration {
	var wg sync.WaitGroup
	errs := make(chan error, len(ks)*writes)
	start := time.Now()
	for j, k := range ks {
		wg.Add(1)
		go func(j int, k *kernel.Kernel) {
			defer wg.Done()
			for w := 0; w < writes; w++ {
				args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("tools/%s%d/t%d.ts", prefix, j, w), "content": "/** T. */\nexport default () => 1;\n"})
				if _, err := k.Call(context.Background(), "write_file", args); err != nil {
					errs <- err
				}
			}
		}(j, k)
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return wall
}

// checkAllLanded fails unless every tools/<prefix><j>/t<w>.ts is on the
// remote.
func checkAllLanded(b *testing.B, remote, prefix string, kernels, writes int) {
	b.Helper()
	clone := gittest.Clone(b, remote)
	lost := 0
	for j := 0; j < kernels; j++ {
		for w := 0; w < writes; w++ {
			if _, err := os.Stat(filepath.Join(clone, fmt.Sprintf("tools/%s%d/t%d.ts", prefix, j, w))); err != nil {
				lost++
			}
		}
	}
	if lost > 0 {
		b.Fatalf("%d of %d writes lost", lost, kernels*writes)
	}
}

func sequentialWrites(b *testing.B, n int) time.Duration {
	remote := remoteWithTools(b, 10)
	k := bootKernel(b, remote, false)
	return writeConcurrently(b, remote, []*kernel.Kernel{k}, n, "seq")
}

// benchConcurrentRows: K kernels × 5 writes at once on one remote (in one
// process, or as K OS processes), against the same writes by one kernel
// in a row. Every write must be on the remote.
func benchConcurrentRows(b *testing.B) {
	inProcess := func(kernels, writes int) (time.Duration, float64) {
		remote := remoteWithTools(b, 10)
		ks := make([]*kernel.Kernel, kernels)
		for j := range ks {
			ks[j] = bootKernel(b, remote, false)
		}
		var wall time.Duration
		allocs := mallocs(func() { wall = writeConcurrently(b, remote, ks, writes, "a") })
		checkAllLanded(b, remote, "a", kernels, writes)
		return wall, float64(allocs) / float64(kernels*writes)
	}
	seq40 := sequentialWrites(b, 40)
	wall, allocs := inProcess(8, 5)
	report(b, "kernels-8x5", wall, seq40, allocs)
	report(b, "processes-8x5", processWrites(b, 8, 5), seq40, 0)
	wall, allocs = inProcess(32, 5)
	report(b, "kernels-32x5", wall, sequentialWrites(b, 160), allocs)
}

// processWrites starts `procs` copies of this test binary, each booting a
// kernel on its own root; once all are booted they write at once. It
// returns the wall time of the writes.
func processWrites(b *testing.B, procs, writes int) time.Duration {
	remote := remoteWithTools(b, 10)
	dir := b.TempDir()
	gate := filepath.Join(dir, "go")
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBenchWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TGP_BENCH_REMOTE="+remote, "TGP_BENCH_ROOT="+filepath.Join(dir, fmt.Sprint("root", i)),
			"TGP_BENCH_GATE="+gate, "TGP_BENCH_READY="+filepath.Join(dir, fmt.Sprint("ready", i)),
			"TGP_BENCH_PREFIX="+fmt.Sprint("p", i), "TGP_BENCH_WRITES="+strconv.Itoa(writes))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i := 0; i < procs; i++ {
		for {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprint("ready", i))); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	start := time.Now()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("writer process %d: %v", i, err)
		}
	}
	wall := time.Since(start)
	clone := gittest.Clone(b, remote)
	for i := 0; i < procs; i++ {
		for w := 0; w < writes; w++ {
			if _, err := os.Stat(filepath.Join(clone, fmt.Sprintf("tools/p%d/t%d.ts", i, w))); err != nil {
				b.Fatalf("lost write p%d/t%d: %v", i, w, err)
			}
		}
	}
	return wall
}

// TestBenchWriterProcess is one writer of processWrites (it does nothing
// when run on its own).
func TestBenchWriterProcess(t *testing.T) {
	remote := os.Getenv("TGP_BENCH_REMOTE")
	if remote == "" {
		t.Skip("a writer process of BenchmarkTable")
	}
	k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithRoot(os.Getenv("TGP_BENCH_ROOT")),
		kernel.WithSetting("git.remote", remote), kernel.WithSetting("git.author.name", "Bench"),
		kernel.WithSetting("git.author.email", "bench@example.com"), kernel.WithSetting("git.retry.max_attempts", 100))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer k.Shutdown(context.Background())
	if err := os.WriteFile(os.Getenv("TGP_BENCH_READY"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(os.Getenv("TGP_BENCH_GATE")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	writes, _ := strconv.Atoi(os.Getenv("TGP_BENCH_WRITES"))
	for w := 0; w < writes; w++ {
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("tools/%s/t%d.ts", os.Getenv("TGP_BENCH_PREFIX"), w), "content": "/** T. */\nexport default () => 1;\n"})
		if _, err := k.Call(context.Background(), "write_file", args); err != nil {
			t.Fatal(err)
		}
	}
}

// timeTool runs a tool call `runs` times on sets made by mk and returns
// the median and the allocations per call. warm reuses one set (a booted
// kernel's state), cold makes a new set (a fresh process's view) per call.
func timeTool(b *testing.B, mk func() *tools.Set, name, args string, runs int, warm bool) (time.Duration, float64) {
	var set *tools.Set
	if warm {
		set = mk()
		runTool(b, set, name, args) // the first call loads the state
	}
	var lat []time.Duration
	var allocs uint64
	for i := 0; i < runs; i++ {
		allocs += mallocs(func() {
			start := time.Now()
			s := set
			if !warm {
				s = mk()
			}
			runTool(b, s, name, args)
			lat = append(lat, time.Since(start))
		})
	}
	return median(lat), float64(allocs) / float64(runs)
}

func timeGit(b *testing.B, dir string, runs int, args ...string) time.Duration {
	var lat []time.Duration
	for i := 0; i < runs; i++ {
		start := time.Now()
		runGit(b, dir, args...)
		lat = append(lat, time.Since(start))
	}
	return median(lat)
}

// benchGitToolRows: the git tools on the 10,000-file, 2,000-commit
// repository against the git CLI doing the same.
func benchGitToolRows(b *testing.B) {
	dir := bigRepo(b)
	const runs = 5
	clean := func() *tools.Set { return gitSet(b, dir) }
	status := []string{"status", "--porcelain=1", "-b"}
	ref := timeGit(b, dir, runs, status...)
	t, a := timeTool(b, clean, "git_status", `{}`, runs, true)
	report(b, "status-clean-warm", t, ref, a)
	t, a = timeTool(b, clean, "git_status", `{}`, runs, false)
	report(b, "status-clean-cold", t, ref, a)

	work := filepath.Join(b.TempDir(), "w")
	runGit(b, "", "clone", "-q", dir, work)
	for f := 0; f < 100; f++ {
		_ = os.WriteFile(filepath.Join(work, fmt.Sprintf("src/pkg%03d/file%05d.ts", f%100, f)), []byte("changed\n"), 0o644)
	}
	modified := func() *tools.Set { return gitSet(b, work) }
	ref = timeGit(b, work, runs, status...)
	t, a = timeTool(b, modified, "git_status", `{}`, runs, true)
	report(b, "status-100-modified-warm", t, ref, a)
	t, a = timeTool(b, modified, "git_status", `{}`, runs, false)
	report(b, "status-100-modified-cold", t, ref, a)

	ref = timeGit(b, dir, runs, "log", "--oneline", "--", "src/pkg007/file00007.ts")
	t, a = timeTool(b, clean, "git_log", `{"path":"src/pkg007/file00007.ts","oneline":true}`, runs, true)
	report(b, "log-path", t, ref, a)

	// git_add of 1,000 new files and git_commit on the 10,000-file tree:
	// each run on a fresh clone (median of 3).
	prep := func(add bool) string {
		w := filepath.Join(b.TempDir(), "w")
		runGit(b, "", "clone", "-q", dir, w)
		for f := 0; f < 1000; f++ {
			p := filepath.Join(w, "new", fmt.Sprintf("f%04d.txt", f))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(fmt.Sprint(f)), 0o644)
		}
		if add {
			runGit(b, w, "add", "--", "new")
		}
		return w
	}
	var tt, gt []time.Duration
	var allocs uint64
	for i := 0; i < 3; i++ {
		w := prep(false)
		s := gitSet(b, w)
		allocs += mallocs(func() {
			start := time.Now()
			runTool(b, s, "git_add", `{"paths":["new"]}`)
			tt = append(tt, time.Since(start))
		})
		w = prep(false)
		start := time.Now()
		runGit(b, w, "add", "--", "new")
		gt = append(gt, time.Since(start))
	}
	report(b, "add-1000", median(tt), median(gt), float64(allocs)/3)
	tt, gt, allocs = nil, nil, 0
	for i := 0; i < 3; i++ {
		w := prep(true)
		s := gitSet(b, w)
		allocs += mallocs(func() {
			start := time.Now()
			runTool(b, s, "git_commit", `{"type":"feat","message":"bench"}`)
			tt = append(tt, time.Since(start))
		})
		w = prep(true)
		start := time.Now()
		runGit(b, w, "commit", "-q", "-m", "feat: bench")
		gt = append(gt, time.Since(start))
	}
	report(b, "commit-10000", median(tt), median(gt), float64(allocs)/3)
}
