package receive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// hookMustRun finds a hook: "" when there is none. A hook file that exists
// but cannot be executed is an error: git would skip it with a hint; a
// policy that cannot run must not be skipped silently.
func (p *Policy) hookMustRun(name string) (string, error) {
	path := filepath.Join(p.hooksDir, name)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("hook %s: %w", path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("hook %s is a directory", path)
	}
	if fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("the '%s' hook at %s is not executable: refusing the push rather than skipping the remote's policy (git would ignore it; make it executable or remove it)", name, path)
	}
	return path, nil
}

// localRepoEnv are the variables git unsets before it starts receive-pack
// for a local push (local_repo_env): the pusher's repository must not leak
// into the remote's hooks.
var localRepoEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_COMMON_DIR", "GIT_QUARANTINE_PATH", "GIT_PUSH_OPTION_COUNT",
}

func hookEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := strings.HasPrefix(name, "GIT_PUSH_OPTION_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
		for _, v := range localRepoEnv {
			drop = drop || name == v
		}
		if !drop {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_DIR=.")
	return append(env, extra...)
}

// hookOutputLimit bounds what is kept of a hook's output.
const hookOutputLimit = 64 << 10

// hookWaitDelay is how long a finished hook's descendants may keep its
// output open (a post-receive that starts a CI job in the background).
const hookWaitDelay = 5 * time.Second

type cappedBuffer struct {
	buf       bytes.Buffer
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := hookOutputLimit - c.buf.Len(); room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// runHook runs a hook in $GIT_DIR with its stdout and stderr interleaved
// in one stream, as receive-pack relays them. ran is false when there is
// no such hook; err is set when it could not run or exited non-zero.
func (p *Policy) runHook(ctx context.Context, name string, args []string, stdin string, env []string) (out []string, ran bool, err error) {
	path, err := p.hookMustRun(name)
	if err != nil {
		return nil, true, err
	}
	if path == "" {
		return nil, false, nil
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = p.gitdir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var buf cappedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = hookWaitDelay
	runErr := cmd.Run()
	out = splitLines(buf.buf.String())
	if buf.truncated {
		out = append(out, fmt.Sprintf("(hook output cut at %d bytes)", hookOutputLimit))
	}
	if errors.Is(runErr, exec.ErrWaitDelay) {
		runErr = nil
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return out, true, fmt.Errorf("hook %s: %w", name, runErr)
		}
		// Not started: no interpreter, not a format this platform runs.
		return out, true, fmt.Errorf("cannot run the '%s' hook %s (refusing the push rather than skipping the remote's policy): %w", name, path, runErr)
	}
	return out, true, nil
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
