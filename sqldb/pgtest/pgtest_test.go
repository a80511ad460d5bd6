//go:build unix

package pgtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary a process that starts a cluster, says
// where, and waits to be killed, when TGP_PGTEST_HELPER is set.
func TestMain(m *testing.M) {
	if os.Getenv("TGP_PGTEST_HELPER") == "1" {
		c, err := Start()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		pid, _ := postmasterPID(filepath.Join(c.dir, "data"))
		fmt.Println(pid, c.dir)
		select {}
	}
	os.Exit(m.Run())
}

func start(t *testing.T) *Cluster {
	t.Helper()
	c, err := Start()
	if errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitGone waits until pid is no running process.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Fatalf("%s (pid %d) still runs", what, pid)
}

// The server dies with the process that started it, however that dies
// (here SIGKILL, as a test binary at its timeout or an interrupted make
// test): pg_ctl's daemon survived its parent, under PID 1. The next Start
// removes the files the dead process left.
func TestServerDiesWithItsProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent death signal is Linux's")
	}
	if _, err := exec.LookPath(os.Args[0]); err != nil && !filepath.IsAbs(os.Args[0]) {
		t.Skip("cannot re-run the test binary")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TGP_PGTEST_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if strings.Contains(line, ErrNotInstalled.Error()) {
			t.Skip(line)
		}
		t.Fatalf("helper: %q %v", line, err)
	}
	f := strings.Fields(line)
	pid, _ := strconv.Atoi(f[0])
	dir := f[1]
	if pid <= 0 || !alive(pid) {
		t.Fatalf("no server: %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pid, "the server of a killed test process")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the dead process's cluster is gone before the next start: %v", err)
	}
	start(t).Stop()
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("the next Start left %s", dir)
	}
}

// A server a dead process left running (started as the package did
// before, by pg_ctl, a daemon) is stopped and its cluster removed by the
// next Start; a cluster whose owner lives is left alone.
func TestStartReapsLeftovers(t *testing.T) {
	c := start(t)
	defer c.Stop()
	// A second cluster, by hand, as a dead owner's with its server up.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := &Cluster{bin: c.bin, uid: c.uid, gid: c.gid, asUser: c.asUser}
	dir, err := os.MkdirTemp(Root(), "tgp-pg-")
	if err != nil {
		t.Fatal(err)
	}
	left.dir = dir
	defer os.RemoveAll(dir)
	if left.asUser {
		if err := os.Chown(dir, left.uid, left.gid); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := left.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "--locale=C"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=''", port, dir)
	if out, err := left.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	pid, ok := postmasterPID(data)
	if !ok || !alive(pid) {
		t.Fatal("the leftover server is not running")
	}
	defer stopPID(pid)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := start(t)
	defer next.Stop()
	waitGone(t, pid, "the leftover server")
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("the leftover %s is still there", dir)
	}
	if _, err := os.Stat(c.dir); err != nil {
		t.Fatalf("the live cluster was reaped: %v", err)
	}
	if c.server.exited() {
		t.Fatal("the live cluster's server was stopped")
	}
}
