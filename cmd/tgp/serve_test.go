package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

const serveToken = "tok-serve-0123456789abcdef"

func serveEnv(t *testing.T, remote string, extra ...string) []string {
	return append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TGP_GIT_REMOTE=" + remote, "TGP_GIT_AUTHOR_NAME=Agent", "TGP_GIT_AUTHOR_EMAIL=agent@example.com"}, extra...)
}

// Every way of starting an HTTP server that would let anyone in is refused
// with exit 2 and a one-line hint, before the root is cloned.
func TestServeRefusesOpenNetwork(t *testing.T) {
	remote := gittest.BareRemote(t)
	for _, c := range []struct {
		name string
		args []string
		env  []string
		hint string
	}{
		{"every interface, short form", []string{"--http", ":8080"}, nil, "--allow-unauthenticated"},
		{"every IPv4 interface", []string{"--http", "0.0.0.0:0"}, nil, "--token-env"},
		{"every IPv6 interface", []string{"--http", "[::]:0"}, nil, "--token-env"},
		{"a public address", []string{"--http", "192.0.2.7:0"}, nil, "--token-env"},
		{"a host name", []string{"--http", "example.com:0"}, nil, "--token-env"},
		{"loopback look-alike name", []string{"--http", "127.0.0.1.nip.io:0"}, nil, "--token-env"},
		{"token variable unset", []string{"--http", "0.0.0.0:0", "--token-env", "NOPE_TOKEN"}, nil, "NOPE_TOKEN"},
		{"token variable empty", []string{"--http", "127.0.0.1:0", "--token-env", "EMPTY_TOKEN"}, []string{"EMPTY_TOKEN="}, "EMPTY_TOKEN"},
		{"token variable from config, unset", []string{"--http", "0.0.0.0:0"}, []string{"TGP_SERVE_TOKEN_ENV=NOPE_TOKEN"}, "NOPE_TOKEN"},
		{"not host:port", []string{"--http", "8080"}, nil, "--http"},
		{"token flag without --http", []string{"--token-env", "T"}, []string{"T=" + serveToken}, "--http"},
		{"bad allowed origin in config", []string{"--http", "127.0.0.1:0"}, []string{"TGP_SERVE_ALLOWED_ORIGINS=evil.example.com"}, "serve.allowed_origins"},
		{"tiny body limit in config", []string{"--http", "127.0.0.1:0"}, []string{"TGP_SERVE_MAX_BODY_BYTES=10"}, "serve.max_body_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			var out, errb bytes.Buffer
			args := append([]string{"serve", "--root", root}, c.args...)
			code := run(context.Background(), args, strings.NewReader(""), &out, &errb, serveEnv(t, remote, c.env...))
			want := 2
			if strings.HasPrefix(c.hint, "serve.") {
				want = 1 // a configuration error, like every other bad key
			}
			if code != want || !strings.Contains(errb.String(), c.hint) {
				t.Fatalf("exit %d (want %d), stderr %q must name %q", code, want, errb.String(), c.hint)
			}
			if strings.Contains(out.String()+errb.String(), serveToken) {
				t.Fatal("the token leaks into the output")
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Fatalf("a refused start touched the root: %v", entries)
			}
		})
	}
}

// The serve.* keys from a configuration file reach the HTTP guard: the
// token named by serve.token_env, serve.allowed_origins, serve.max_body_bytes.
func TestServeHTTPConfigKeys(t *testing.T) {
	remote := gittest.BareRemote(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "tgp.config.yaml")
	if err := os.WriteFile(cfgFile, []byte("serve:\n  token_env: MY_SERVE_TOKEN\n  allowed_origins: [\"https://app.example.com\"]\n  max_body_bytes: 8192\n  session_idle_timeout: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A host gives a fresh, empty directory: boot clones into it (a
	// --root that does not exist is refused, TestNotATGPProject).
	if err := os.Mkdir(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncWriter
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--http", addr, "--config", cfgFile, "--root", filepath.Join(dir, "root")},
			strings.NewReader(""), &out, &errb, serveEnv(t, remote, "MY_SERVE_TOKEN="+serveToken))
	}()
	url := "http://" + addr + "/mcp"
	post := func(body string, hdr ...string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1
		}
		res.Body.Close()
		return res.StatusCode
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for deadline := time.Now().Add(time.Minute); post(ping) == -1; time.Sleep(20 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("tgp serve exited %d: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("tgp serve never listened")
		}
	}
	auth := "Bearer " + serveToken
	for _, c := range []struct {
		name string
		body string
		hdr  []string
		want int
	}{
		{"no token", ping, nil, http.StatusUnauthorized},
		{"the variable's name as the token", ping, []string{"Authorization", "Bearer MY_SERVE_TOKEN"}, http.StatusUnauthorized},
		{"token", ping, []string{"Authorization", auth}, http.StatusOK},
		{"configured origin", ping, []string{"Authorization", auth, "Origin", "https://app.example.com"}, http.StatusOK},
		{"foreign origin", ping, []string{"Authorization", auth, "Origin", "https://evil.example.com"}, http.StatusForbidden},
		{"body over serve.max_body_bytes", `{"x":"` + strings.Repeat("a", 9000) + `"}`, []string{"Authorization", auth}, http.StatusRequestEntityTooLarge},
	} {
		if got := post(c.body, c.hdr...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(serveToken)}}, nil)
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) == 0 {
		t.Fatalf("tools/list: %v", err)
	}
	cs.Close()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String()+errb.String(), serveToken) {
		t.Fatalf("the token leaks into the output:\n%s", errb.String())
	}
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// syncWriter is a buffer the server goroutine writes while the test reads.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
