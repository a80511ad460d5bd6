package bench

import (
	"context"
	"encoding/json"
	"io/fs"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/kernel"
)

// benchLongRows: the rows on a long history (gittest.BenchHistory: 5,200
// commits with merges, 133 files, a 130 KB file edited by a thousand of
// them, one pack with delta chains), generated once and cached. The
// remote is reached over file:// on both sides, as a user would name it.
//
//   - long-boot: a kernel booting on an empty root against git clone
//     (median of 5, taking turns); long-size: the .git each leaves.
//   - long-log-path, long-blame: git_log of a path and git_blame of the
//     large file in the booted kernel (warm: its first call not timed),
//     against git log / git blame in git's clone.
func benchLongRows(b *testing.B) {
	dir, facts := gittest.CachedHistory(b, gittest.BenchHistory)
	remote := "file://" + dir
	var kt, gt []time.Duration
	var allocs uint64
	var k *kernel.Kernel
	var root, clone string
	const rounds = 5
	for i := 0; i < rounds; i++ {
		if k != nil {
			_ = k.Shutdown(context.Background())
		}
		root = filepath.Join(b.TempDir(), "root")
		start := time.Now()
		allocs += mallocs(func() {
			k = newKernel(b, remote, root)
			if err := k.Boot(context.Background()); err != nil {
				b.Fatal(err)
			}
			kt = append(kt, time.Since(start))
		})
		clone = filepath.Join(b.TempDir(), "clone")
		cmd := exec.Command("git", "clone", "-q", remote, clone)
		cmd.Env = gittest.Env(b.TempDir())
		start = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		gt = append(gt, time.Since(start))
	}
	b.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	report(b, "long-boot", median(kt), median(gt), float64(allocs)/rounds)
	ks, gs := dirSize(b, filepath.Join(root, ".git")), dirSize(b, filepath.Join(clone, ".git"))
	b.ReportMetric(float64(ks)/1e6, "long-size-ms") // MB, in the ms column
	b.ReportMetric(float64(gs)/1e6, "long-size-ref-ms")
	b.ReportMetric(float64(ks)/float64(gs), "long-size-ratio")

	const runs = 7
	call := func(name string, args any, allocs *float64) side {
		raw, _ := json.Marshal(args)
		if _, err := k.Call(context.Background(), name, raw); err != nil { // warm it
			b.Fatal(err)
		}
		var total uint64
		calls := 0
		return func() time.Duration {
			var d time.Duration
			total += mallocs(func() {
				start := time.Now()
				if _, err := k.Call(context.Background(), name, raw); err != nil {
					b.Fatal(err)
				}
				d = time.Since(start)
			})
			calls++
			*allocs = float64(total) / float64(calls)
			return d
		}
	}
	var logA, blameA float64
	m := interleave(runs, gitSide(b, clone, "log", "--oneline", "--", facts.Path),
		call("git_log", map[string]any{"path": facts.Path, "oneline": true}, &logA))
	report(b, "long-log-path", m[1], m[0], logA)
	m = interleave(runs, gitSide(b, clone, "blame", facts.Big),
		call("git_blame", map[string]any{"path": facts.Big}, &blameA))
	report(b, "long-blame", m[1], m[0], blameA)
}

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
