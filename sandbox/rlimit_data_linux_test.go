//go:build linux

package sandbox

import (
	"os"
	osexec "os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDataLimitHoldsWithoutTheWatchdog: a worker's hard limit does not
// depend on a goroutine being scheduled in time. A child process puts
// itself under RLIMIT_DATA (as a worker does) and doubles a string with a
// watchdog that never fires (a 4 GB budget), as on a machine so loaded
// the watchdog is starved: the kernel stops it, the runtime dies with
// "out of memory" (which the pool reports as memory_limit), and its peak
// resident set stays under the limit.
func TestDataLimitHoldsWithoutTheWatchdog(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector's shadow memory counts as data (workers get no data limit under -race)")
	}
	const limitMB = 320 // a 64 MB budget plus workerDataHeadroom
	if os.Getenv("TGP_DATA_LIMIT_CHILD") == "1" {
		if err := limitData(limitMB << 20); err != nil {
			t.Fatal(err)
		}
		r := New(WithTimeout(time.Minute), WithMemoryLimitMB(4096))
		fsys := newFS(t, map[string]string{"tools/h.ts": hostileAllocations["string doubling"]})
		out := exec(t, r, fsys, "tools/h.ts", nil)
		t.Fatalf("the run ended on its own: %+v", out.Error)
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^TestDataLimitHoldsWithoutTheWatchdog$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TGP_DATA_LIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "out of memory") {
		t.Fatalf("child: %v\n%s", err, firstBytes(string(out)))
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10
	t.Logf("child died out of memory at a peak RSS of %d MB", rss)
	if rss > limitMB {
		t.Fatalf("peak RSS %d MB above the %d MB data limit", rss, limitMB)
	}
}

func firstBytes(s string) string {
	if len(s) > 2000 {
		return s[:2000]
	}
	return s
}
