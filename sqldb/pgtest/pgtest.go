// Package pgtest starts a throw-away PostgreSQL cluster for tests: initdb
// into a temporary directory, postgres on a free loopback port with its
// socket in that directory, removed on Stop. PostgreSQL refuses to run as
// root, so under root the server runs as the `postgres` user that Debian's
// package creates. `make test` installs the package when it is missing.
//
// The server dies with the test process: it is postgres itself, a child
// of this process (not a daemon pg_ctl leaves behind), and on Linux the
// kernel sends it SIGQUIT, PostgreSQL's immediate shutdown, when this
// process dies however it dies (an interrupted `make test`, a test
// binary killed at its timeout). Each cluster lives under one known
// directory (Root) with the PID of the process that owns it; Start reaps
// what a dead owner left there (a server still running where the parent
// death signal is not available, and the files).
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled: no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (run `make test`, which installs them)")

// Cluster is a running throw-away server.
type Cluster struct {
	DSN string
	dir string
	bin string
	// uid and gid run the server's commands as the postgres user (set
	// when this process is root; see runAs).
	uid, gid int
	asUser   bool
	// server is the postmaster; stop asks it to shut down and returns
	// its exit.
	server *child
}

// ownerFile, in a cluster's directory, holds the PID of the process that
// started it: a cluster whose owner is dead is a leftover.
const ownerFile = "owner.pid"

// Root is the directory every cluster is made in, where Start looks for
// leftovers.
func Root() string { return filepath.Join(os.TempDir(), "tgp-pgtest") }

// Start creates and starts a cluster.
func Start() (*Cluster, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			bins = []string{p}
		}
	}
	if len(bins) == 0 {
		return nil, ErrNotInstalled
	}
	sort.Strings(bins)
	c := &Cluster{bin: filepath.Dir(bins[len(bins)-1])}
	parent := Root()
	if err := os.MkdirAll(parent, 0o755); err != nil {
		parent = "" // another user's: clusters go to the temporary directory, unreaped
	} else {
		reapLeftovers(parent)
	}
	dir, err := os.MkdirTemp(parent, "tgp-pg-")
	if err != nil {
		return nil, err
	}
	c.dir = dir
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.uid, c.gid, c.asUser = uid, gid, true
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		c.cleanup()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		c.cleanup()
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		c.cleanup()
		return nil, err
	}
	defer logFile.Close() // the server has its own descriptor
	cmd := c.command("postgres", "-D", data, "-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off", "-c", "max_connections=100")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if c.server, err = startChild(cmd); err != nil {
		c.cleanup()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if err := c.waitReady(data, 60*time.Second); err != nil {
		_ = c.server.stop()
		log, _ := os.ReadFile(logPath)
		c.cleanup()
		return nil, fmt.Errorf("postgres: %w\n%s", err, log)
	}
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c, nil
}

// waitReady waits until the postmaster says it accepts connections (the
// status line of postmaster.pid, PostgreSQL 10 and later, what pg_ctl -w
// reads) or exits.
func (c *Cluster) waitReady(data string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.server.exited() {
			return errors.New("the server exited while starting")
		}
		if b, err := os.ReadFile(filepath.Join(data, "postmaster.pid")); err == nil {
			lines := strings.Split(string(b), "\n")
			if len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v", timeout)
}

// command is one of the server's programs, run as the postgres user when
// this process is root.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=" + c.bin + ":/usr/bin:/bin", "LANG=C", "LC_ALL=C"}
	if c.asUser {
		runAs(cmd, c.uid, c.gid)
	}
	return cmd
}

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := c.command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// Stop stops the server and removes its files.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	err := c.server.stop()
	c.cleanup()
	return err
}

func (c *Cluster) cleanup() { os.RemoveAll(c.dir) }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
