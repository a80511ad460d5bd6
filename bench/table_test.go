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

// BenchmarkTable measures every row of the performance table
// (docs/performance.md), each against its reference in the same run, and
// reports for row K the metrics K-ms (TGP), K-ref-ms (the reference),
// K-ratio and K-allocs (allocations per operation of TGP's side). `make bench` runs it with bench/cmd/benchtable,
// which prints them as one table. Every side is timed several times and
// the median taken, so one run (-benchtime 1x) is enough.
func BenchmarkTable(b *testing.B) {
	b.Run("persist", benchPersistRow)
	b.Run("boot", benchBootRow)
	b.Run("concurrent", benchConcurrentRows)
	b.Run("gittools", benchGitToolRows)
	b.Run("long", benchLongRows)
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
	args, _ := json.Marshal(map[string]string{"path": p, "content": fmt.Sprintf("/** W. */\nexport default () => '%d';\n", n)})
	if _, err := k.Call(context.Background(), "write_file", args); err != nil {
		b.Fatal(err)
	}
}

// benchPersistRow: write_file until the push is accepted (p50 of 30), on
// disk and on a memory root, against write + git add + commit + push (p50
// of 15), the three taking turns write by write.
func benchPersistRow(b *testing.B) {
	const n = 30
	disk := bootKernel(b, remoteWithTools(b, 10), false)
	mem := bootKernel(b, remoteWithTools(b, 10), true)
	writeFile(b, disk, "tools/p/warm.ts", 0)
	writeFile(b, mem, "tools/p/warm.ts", 0)

	dir := gittest.Clone(b, remoteWithTools(b, 10))
	env := gittest.Env(b.TempDir())
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	var diskLat, memLat, gitLat []time.Duration
	var diskAllocs, memAllocs uint64
	kernelWrite := func(k *kernel.Kernel, i int, lat *[]time.Duration, allocs *uint64) {
		*allocs += mallocs(func() {
			start := time.Now()
			writeFile(b, k, fmt.Sprintf("tools/p/w%d.ts", i), i)
			*lat = append(*lat, time.Since(start))
		})
	}
	for i := 0; i < n; i++ {
		kernelWrite(disk, i, &diskLat, &diskAllocs)
		kernelWrite(mem, i, &memLat, &memAllocs)
		if i%2 != 0 {
			continue
		}
		p := fmt.Sprintf("tools/p/w%d.ts", i)
		start := time.Now()
		_ = os.MkdirAll(filepath.Join(dir, "tools/p"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf("/** W. */\nexport default () => %d;\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		git("add", p)
		git("commit", "-q", "-m", "forge: "+p)
		git("push", "-q", "origin", "main")
		gitLat = append(gitLat, time.Since(start))
	}
	ref := median(gitLat)
	report(b, "persist-disk", median(diskLat), ref, float64(diskAllocs)/n)
	report(b, "persist-memory", median(memLat), ref, float64(memAllocs)/n)
}

// benchBootRow: a kernel booting (clone + registry) on an empty root,
// 1,000 tools, against git clone of the same remote (median of 5, the two
// sides taking turns).
func benchBootRow(b *testing.B) {
	remote := remoteWithTools(b, 1000)
	var kt, gt []time.Duration
	var allocs uint64
	const rounds = 5
	for i := 0; i < rounds; i++ {
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
	report(b, "boot-1000", median(kt), median(gt), float64(allocs)/rounds)
}

// writeConcurrently has each kernel write `writes` files at once and
// returns the wall time; every write is then checked on the remote.
func writeConcurrently(b *testing.B, remote string, ks []*kernel.Kernel, writes int, prefix string) time.Duration {
	wall, _ := writeAndSettle(b, ks, writes, prefix)
	return wall
}

// writeAndSettle is writeConcurrently that also has each kernel, once its
// writes returned, bring its root to what it pushed (Repo.Settle: a replay
// the root takes when next read, gitbackend.Config.DeferReplays); it
// returns the wall time until the last write returned and until the last
// root was settled.
func writeAndSettle(b *testing.B, ks []*kernel.Kernel, writes int, prefix string) (wall, settled time.Duration) {
	var wg sync.WaitGroup
	errs := make(chan error, len(ks)*(writes+1))
	var mu sync.Mutex
	var lastWrite time.Time
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
			mu.Lock()
			if now := time.Now(); now.After(lastWrite) {
				lastWrite = now
			}
			mu.Unlock()
			if err := k.Repo().Settle(context.Background()); err != nil {
				errs <- err
			}
		}(j, k)
	}
	wg.Wait()
	settled = time.Since(start)
	wall = lastWrite.Sub(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return wall, settled
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
// in a row, in two rounds taking turns. Every write must be on the remote.
func benchConcurrentRows(b *testing.B) {
	var settled8 []time.Duration
	inProcess := func(kernels, writes int) (time.Duration, float64) {
		remote := remoteWithTools(b, 10)
		ks := make([]*kernel.Kernel, kernels)
		for j := range ks {
			ks[j] = bootKernel(b, remote, false)
		}
		var wall, settled time.Duration
		allocs := mallocs(func() { wall, settled = writeAndSettle(b, ks, writes, "a") })
		checkAllLanded(b, remote, "a", kernels, writes)
		if kernels == 8 {
			settled8 = append(settled8, settled)
		}
		return wall, float64(allocs) / float64(kernels*writes)
	}
	// Two rounds, the reference and the rows taking turns; each row's
	// median (of two: the lower) against the reference's.
	var seq40, k8, p8, seq160, k32 []time.Duration
	var k8A, k32A float64
	for round := 0; round < 2; round++ {
		seq40 = append(seq40, sequentialWrites(b, 40))
		wall, allocs := inProcess(8, 5)
		k8, k8A = append(k8, wall), allocs
		p8 = append(p8, processWrites(b, 8, 5))
		seq160 = append(seq160, sequentialWrites(b, 160))
		wall, allocs = inProcess(32, 5)
		k32, k32A = append(k32, wall), allocs
	}
	report(b, "kernels-8x5", median(k8), median(seq40), k8A)
	// The same writes until every root was brought to what it pushed
	// (the replays a root takes when next read, settled at once).
	report(b, "kernels-8x5-settled", median(settled8), median(seq40), 0)
	report(b, "processes-8x5", median(p8), median(seq40), 0)
	report(b, "kernels-32x5", median(k32), median(seq160), k32A)
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

// side is one side of a row: a call timed again and again.
type side func() time.Duration

// interleave times the sides one after the other, round after round, so
// that load from other jobs on the machine falls on all of them alike,
// and returns each side's median.
func interleave(rounds int, sides ...side) []time.Duration {
	lat := make([][]time.Duration, len(sides))
	for r := 0; r < rounds; r++ {
		for i, sd := range sides {
			lat[i] = append(lat[i], sd())
		}
	}
	out := make([]time.Duration, len(sides))
	for i := range lat {
		out[i] = median(lat[i])
	}
	return out
}

// toolSide times a tool call on sets made by mk and counts its
// allocations (into allocs, per call). warm reuses one set (a booted
// kernel's state; its first call, which loads the state, is not timed),
// cold makes a new set (a fresh process's view) per call.
func toolSide(b *testing.B, mk func() *tools.Set, name, args string, warm bool, allocs *float64) side {
	var set *tools.Set
	if warm {
		set = mk()
		runTool(b, set, name, args)
	}
	var total uint64
	calls := 0
	return func() time.Duration {
		var d time.Duration
		total += mallocs(func() {
			start := time.Now()
			s := set
			if !warm {
				s = mk()
			}
			runTool(b, s, name, args)
			d = time.Since(start)
		})
		calls++
		*allocs = float64(total) / float64(calls)
		return d
	}
}

func gitSide(b *testing.B, dir string, args ...string) side {
	return func() time.Duration {
		start := time.Now()
		runGit(b, dir, args...)
		return time.Since(start)
	}
}

// benchGitToolRows: the git tools on the 10,000-file, 2,000-commit
// repository against the git CLI doing the same.
func benchGitToolRows(b *testing.B) {
	dir := bigRepo(b)
	const runs = 9
	clean := func() *tools.Set { return gitSet(b, dir) }
	status := []string{"status", "--porcelain=1", "-b"}
	var warmA, coldA float64
	m := interleave(runs, gitSide(b, dir, status...),
		toolSide(b, clean, "git_status", `{}`, true, &warmA), toolSide(b, clean, "git_status", `{}`, false, &coldA))
	report(b, "status-clean-warm", m[1], m[0], warmA)
	report(b, "status-clean-cold", m[2], m[0], coldA)

	work := filepath.Join(b.TempDir(), "w")
	runGit(b, "", "clone", "-q", dir, work)
	for f := 0; f < 100; f++ {
		_ = os.WriteFile(filepath.Join(work, fmt.Sprintf("src/pkg%03d/file%05d.ts", f%100, f)), []byte("changed\n"), 0o644)
	}
	modified := func() *tools.Set { return gitSet(b, work) }
	m = interleave(runs, gitSide(b, work, status...),
		toolSide(b, modified, "git_status", `{}`, true, &warmA), toolSide(b, modified, "git_status", `{}`, false, &coldA))
	report(b, "status-100-modified-warm", m[1], m[0], warmA)
	report(b, "status-100-modified-cold", m[2], m[0], coldA)

	var logA float64
	m = interleave(runs, gitSide(b, dir, "log", "--oneline", "--", "src/pkg007/file00007.ts"),
		toolSide(b, clean, "git_log", `{"path":"src/pkg007/file00007.ts","oneline":true}`, true, &logA))
	report(b, "log-path", m[1], m[0], logA)

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
	const rounds = 5
	for i := 0; i < rounds; i++ {
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
	report(b, "add-1000", median(tt), median(gt), float64(allocs)/rounds)
	tt, gt, allocs = nil, nil, 0
	for i := 0; i < rounds; i++ {
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
	report(b, "commit-10000", median(tt), median(gt), float64(allocs)/rounds)
}
