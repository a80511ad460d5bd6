package fleet

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	flagRun        = flag.Bool("fleet", false, "run the fleet table (make bench-fleet)")
	flagDelay      = flag.Duration("fleet.delay", 25*time.Millisecond, "one-way delay the proxy adds")
	flagJitter     = flag.Duration("fleet.jitter", 0, "random extra one-way delay per chunk")
	flagBandwidth  = flag.Int64("fleet.bandwidth", 0, "bytes per second per direction (0: no cap)")
	flagShapes     = flag.String("fleet.shapes", "4x8x5,16x4x5", "machines x agents x writes, comma separated")
	flagTransports = flag.String("fleet.transports", "git,http", "git, http")
	flagModes      = flag.String("fleet.modes", "proc,kernel,gitcli", "proc, kernel, gitcli")
	flagBin        = flag.String("fleet.bin", "", "tgp binary (default: built from this tree)")
	flagBaseline   = flag.String("fleet.baseline", "", "another tgp binary measured in the same run (rows named 'before')")
	flagPause      = flag.Duration("fleet.pause", 0, "stop the proxy this long, 1/4 into each row")
)

// TestFleetTable is the fleet benchmark (make bench-fleet): one table,
// every row measured in this run.
func TestFleetTable(t *testing.T) {
	if !*flagRun {
		t.Skip("run with make bench-fleet (-fleet)")
	}
	bin := *flagBin
	if bin == "" {
		bin = BuildTgp(t)
	}
	var rows []Row
	for _, shape := range strings.Split(*flagShapes, ",") {
		var m, a, w int
		if _, err := fmt.Sscanf(shape, "%dx%dx%d", &m, &a, &w); err != nil {
			t.Fatalf("shape %q: want MxAxW", shape)
		}
		for _, tr := range strings.Split(*flagTransports, ",") {
			for _, mode := range strings.Split(*flagModes, ",") {
				spec := Spec{Name: mode, Transport: tr, Machines: m, Agents: a, Writes: w, Mode: mode, TgpBin: bin,
					Link: Link{Delay: *flagDelay, Jitter: *flagJitter, BytesPerSecond: *flagBandwidth}}
				if *flagPause > 0 {
					spec.PauseAt, spec.PauseFor = 2*time.Second, *flagPause
				}
				if mode == "gitcli" && m*a > 32 {
					continue // the peer's loop at 64 agents takes minutes and says nothing new
				}
				rows = append(rows, runRow(t, spec))
				if mode == "proc" && *flagBaseline != "" {
					b := spec
					b.Name, b.TgpBin = "proc (before)", *flagBaseline
					rows = append(rows, runRow(t, b))
				}
			}
		}
	}
	fmt.Print(Table(rows))
}

func runRow(t *testing.T, spec Spec) Row {
	r := Run(t, spec)
	fmt.Fprintf(os.Stderr, "%s", Table([]Row{r}))
	for _, e := range r.Errors {
		fmt.Fprintf(os.Stderr, "  error: %s\n", e)
	}
	return r
}

// BuildTgp builds cmd/tgp from this module into a temporary directory.
func BuildTgp(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tgp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tgp-go/tgp/cmd/tgp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tgp: %v\n%s", err, out)
	}
	return bin
}

// TestProxyDelaysAndPauses: the proxy adds its delay to a round trip and
// refuses connections while down.
func TestProxyDelaysAndPauses(t *testing.T) {
	srv := NewServer(t, "git", Link{Delay: 30 * time.Millisecond})
	t0 := time.Now()
	out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("ls-remote through the proxy: %v %s", err, out)
	}
	if !strings.Contains(string(out), "refs/heads/main") {
		t.Fatalf("ls-remote: %s", out)
	}
	// Connect (1 RTT) and at least one exchange (1 RTT): 2 × 60 ms.
	if d := time.Since(t0); d < 120*time.Millisecond {
		t.Fatalf("ls-remote took %v through a 60 ms RTT link: the proxy adds no delay", d)
	}
	up := srv.Proxy.Down()
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err == nil {
		t.Fatalf("ls-remote succeeded while the proxy was down: %s", out)
	}
	up()
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err != nil {
		t.Fatalf("ls-remote once the proxy is up: %v %s", err, out)
	}
	// Pause is Down for a while: it is up again once Pause returns.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv.Proxy.Pause(ctx, time.Hour)
	if out, err := exec.Command("git", "ls-remote", srv.URL).CombinedOutput(); err != nil {
		t.Fatalf("ls-remote after a pause: %v %s", err, out)
	}
}
