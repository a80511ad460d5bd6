package gitbackend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestGroupCommit: persists that queue behind one in progress go out in
// one commit and one push, each caller told the commit holding its change.
func TestGroupCommit(t *testing.T) {
	for _, memory := range []bool{false, true} {
		t.Run(fmt.Sprint("memory=", memory), func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
			a := newAgent(t, remote, memory)
			const n = 12
			results := make([]*PersistResult, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			// Hold the repository while the callers queue: the persist in
			// progress.
			release := make(chan struct{})
			held := make(chan struct{})
			go func() {
				_ = a.repo.Do(context.Background(), func(*git.Repository) error {
					close(held)
					<-release
					return nil
				})
			}()
			<-held
			for i := 0; i < n; i++ {
				p := fmt.Sprintf("g/f%d.txt", i)
				if err := a.fs.WriteFile(p, []byte(p), 0o644); err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func(i int, p string) {
					defer wg.Done()
					results[i], errs[i] = a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p})
				}(i, p)
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				a.repo.batch.mu.Lock()
				queued := len(a.repo.batch.queue)
				a.repo.batch.mu.Unlock()
				if queued == n {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d persists queued", queued, n)
				}
			}
			close(release)
			wg.Wait()
			for i := range errs {
				if errs[i] != nil {
					t.Fatalf("persist %d: %v", i, errs[i])
				}
				if results[i].Commit != results[0].Commit || results[i].Batched != n {
					t.Fatalf("persist %d: %+v, want commit %s in a batch of %d", i, results[i], results[0].Commit, n)
				}
			}
			clone := gittest.Clone(t, remote)
			for i := 0; i < n; i++ {
				if _, err := os.Stat(filepath.Join(clone, fmt.Sprintf("g/f%d.txt", i))); err != nil {
					t.Fatalf("write %d lost: %v", i, err)
				}
			}
			if c := strings.Count(gittest.Git(t, clone, "log", "--format=%H"), "\n"); c != 2 {
				t.Fatalf("%d commits on the remote, want the seed and one batch", c)
			}
			body := gittest.Git(t, clone, "log", "-1", "--format=%B")
			for i := 0; i < n; i++ {
				if !strings.Contains(body, fmt.Sprintf("forge: g/f%d.txt", i)) {
					t.Fatalf("the batch's message lacks change %d:\n%s", i, body)
				}
			}
		})
	}
}

// TestGroupCommitCancelledWaiter: a caller whose context ends while it
// waits is withdrawn; its change is not committed by the batch.
func TestGroupCommitCancelledWaiter(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, true)
	release := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = a.repo.Do(context.Background(), func(*git.Repository) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	if err := a.fs.WriteFile("x.txt", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.repo.Persist(ctx, Change{Paths: []string{"x.txt"}}); err == nil {
		t.Fatal("a persist that never got the lock succeeded")
	}
	close(release)
	if err := a.fs.WriteFile("y.txt", []byte("y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{"y.txt"}}); err != nil {
		t.Fatal(err)
	}
	clone := gittest.Clone(t, remote)
	if _, err := os.Stat(filepath.Join(clone, "x.txt")); err == nil {
		t.Fatal("the withdrawn change was committed")
	}
	if _, err := os.Stat(filepath.Join(clone, "y.txt")); err != nil {
		t.Fatal(err)
	}
}
