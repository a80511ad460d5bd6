// Command benchtable runs bench.BenchmarkTable (`go test -bench`) and
// prints the performance table of the README: every row as TGP's time, its reference's time
// measured in the same run, the ratio, the goal and TGP's allocations per
// operation. `make bench` runs it from the module root.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
)

// row is one line of the table: the metric key BenchmarkTable reports
// (<key>-ms, <key>-ref-ms, <key>-ratio, <key>-allocs), what it measures,
// what it is compared with and the goal.
type row struct {
	key, what, ref, goal string
	max                  float64 // the goal as a ratio; 0: none
	// unit of the two values ("" is ms; a size row reports MB in the
	// same metrics).
	unit string
}

func (r row) unitOf() string {
	if r.unit == "" {
		return "ms"
	}
	return r.unit
}

var rows = []row{
	{"persist-disk", "persist: write_file → push accepted, p50, root on disk", "write + git add + commit + push", "≤ 0.10×", 0.10, ""},
	{"persist-memory", "persist: write_file → push accepted, p50, memory root", "write + git add + commit + push", "≤ 0.10×", 0.10, ""},
	{"boot-1000", "cold boot, 1000 tools (clone + registry)", "git clone file://", "≤ 1.0×", 1.0, ""},
	{"kernels-8x5", "8 kernels × 5 writes at once, one remote, wall", "40 writes by one kernel in a row", "≤ 1.0× (aim 0.5×), 0 lost", 1.0, ""},
	{"kernels-8x5-settled", "the same, until every root took what it pushed (Repo.Settle)", "40 writes by one kernel in a row", "≤ 1.0×", 1.0, ""},
	{"processes-8x5", "8 OS processes × 5 writes at once, wall", "40 writes by one kernel in a row", "≤ 1.0×, 0 lost", 1.0, ""},
	{"kernels-32x5", "32 kernels × 5 writes at once, one process, wall", "160 writes by one kernel in a row", "≤ 1.0×, 0 lost", 1.0, ""},
	{"status-clean-warm", "git_status, 10,000 files, clean, booted kernel", "git status", "≤ 1.0×", 1.0, ""},
	{"status-clean-cold", "git_status, 10,000 files, clean, fresh process", "git status", "≤ 1.5×", 1.5, ""},
	{"status-100-modified-warm", "git_status, 10,000 files, 100 modified, booted kernel", "git status", "≤ 1.0×", 1.0, ""},
	{"status-100-modified-cold", "git_status, 10,000 files, 100 modified, fresh process", "git status", "≤ 1.5×", 1.5, ""},
	{"add-1000", "git_add 1,000 files", "git add", "≤ 1.0×", 1.0, ""},
	{"commit-10000", "git_commit on 10,000 files", "git commit", "≤ 1.0×", 1.0, ""},
	{"log-path", "git_log with a path", "git log -- path", "≤ 1.5×", 1.5, ""},
	{"long-boot", "cold boot, long history (5,200 commits) over file://", "git clone file://", "≤ 1.0×", 1.0, ""},
	{"long-size", ".git after boot, long history", "git clone's .git", "≤ 1.5×", 1.5, "MB"},
	{"long-log-path", "git_log with a path, long history, booted kernel", "git log -- path", "≤ 1.0×", 1.0, ""},
	{"long-blame", "git_blame of a 130 KB file, long history, booted kernel", "git blame", "≤ 1.5×", 1.5, ""},
}

func main() {
	pkg := flag.String("pkg", "./bench", "the package holding BenchmarkTable")
	raw := flag.Bool("v", false, "also show go test's own output")
	md := flag.Bool("md", false, "print the table as Markdown (for the README)")
	flag.Parse()
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkTable$", "-benchtime", "1x", "-count", "1", "-timeout", "30m", *pkg)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if *raw {
		cmd.Stdout = io.MultiWriter(&out, os.Stdout)
	}
	err := cmd.Run()
	metrics := parse(out.String())
	if err != nil {
		if !*raw {
			os.Stdout.Write(out.Bytes())
		}
		fmt.Fprintf(os.Stderr, "benchtable: go test: %v\n", err)
		os.Exit(1)
	}
	if *md {
		markdown(os.Stdout, metrics)
		return
	}
	print(os.Stdout, metrics)
}

// parse reads the metrics of the benchmark result lines ("BenchmarkX-2  1
// 123 ns/op  1.5 key-ms ...").
func parse(out string) map[string]float64 {
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
	}
	return m
}

func print(w io.Writer, m map[string]float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tTGP\treference\tref time\tratio\tgoal\tmet\tallocs/op")
	for _, r := range rows {
		ratio, ok := m[r.key+"-ratio"]
		if !ok {
			fmt.Fprintf(tw, "%s\t-\t%s\t-\t-\t%s\tnot measured\t-\n", r.what, r.ref, r.goal)
			continue
		}
		met := "yes"
		if r.max > 0 && ratio > r.max {
			met = "no"
		}
		allocs := "-"
		if a := m[r.key+"-allocs"]; a > 0 {
			allocs = strconv.FormatFloat(a, 'f', 0, 64)
		}
		fmt.Fprintf(tw, "%s\t%.2f %s\t%s\t%.2f %s\t%.2f×\t%s\t%s\t%s\n", r.what, m[r.key+"-ms"], r.unitOf(), r.ref, m[r.key+"-ref-ms"], r.unitOf(), ratio, r.goal, met, allocs)
	}
	tw.Flush()
}

func markdown(w io.Writer, m map[string]float64) {
	fmt.Fprintln(w, "| metric | TGP | reference | ratio | goal | allocs/op |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio, ok := m[r.key+"-ratio"]
		if !ok {
			fmt.Fprintf(w, "| %s | - | %s | - | %s | - |\n", r.what, r.ref, r.goal)
			continue
		}
		allocs := "-"
		if a := m[r.key+"-allocs"]; a > 0 {
			allocs = strconv.FormatFloat(a, 'f', 0, 64)
		}
		fmt.Fprintf(w, "| %s | %.2f %s | %s: %.2f %s | **%.2f×** | %s | %s |\n", r.what, m[r.key+"-ms"], r.unitOf(), r.ref, m[r.key+"-ref-ms"], r.unitOf(), ratio, r.goal, allocs)
	}
}
