package journal

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var databases atomic.Int64

// FreshDatabase creates an empty database on the server dsn names and
// returns its DSN: tests that share one server each get a journal of
// their own.
func FreshDatabase(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("j_%d_%d", time.Now().UnixNano(), databases.Add(1))
	if _, err := admin.pool.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(dsn, "/")
	rest := ""
	if q := strings.Index(dsn[i:], "?"); q >= 0 {
		rest = dsn[i+q:]
	}
	return dsn[:i+1] + name + rest
}

// CountLanded counts the entries settled as landed with commit.
func CountLanded(t testing.TB, p *Postgres, commit string) int {
	t.Helper()
	var n int
	if err := p.pool.QueryRow(context.Background(), `SELECT count(*) FROM tgp_journal_entries WHERE state = 'landed' AND commit_hash = $1`, commit).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
