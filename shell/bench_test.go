package shell

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"
)

func p50(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkShellVsBash: the shell tool's engine running `true` and `ls`
// (parse, scope checks, snapshot of the root before and after, and for ls
// the Landlock helper: this test binary re-executed) side by side with
// `bash -c` of the same, interleaved in one run; p50 of each and the
// ratios are reported.
//
//	go test ./shell -run '^$' -bench ShellVsBash -benchtime 200x
func BenchmarkShellVsBash(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	root := testRoot(b)
	modes := map[string]*Runner{"landlock": newRunner(b, root, DefaultConfig())}
	if modes["landlock"].Isolation().Mode != "landlock" {
		delete(modes, "landlock")
	}
	modes["process"] = newRunner(b, root, DefaultConfig(), WithLandlock(false))
	ctx := context.Background()
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, line := range []string{"true", "ls"} {
			for mode, r := range modes {
				start := time.Now()
				res, err := r.Run(ctx, Request{Command: line})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%s: %v %+v", line, err, res)
				}
				times["shell-"+mode+"-"+line] = append(times["shell-"+mode+"-"+line], time.Since(start))
			}
			start := time.Now()
			cmd := exec.Command(bash, "-c", line)
			cmd.Dir = root
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			times["bash-"+line] = append(times["bash-"+line], time.Since(start))
		}
	}
	b.StopTimer()
	for name, d := range times {
		b.ReportMetric(float64(p50(d).Microseconds()), name+"-p50-µs")
	}
	for _, line := range []string{"true", "ls"} {
		for mode := range modes {
			b.ReportMetric(float64(p50(times["shell-"+mode+"-"+line]))/float64(p50(times["bash-"+line])), "ratio-"+mode+"-"+line)
		}
	}
}
