package sqldb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/sqldb/pgtest"
)

var pgDSN string

func TestMain(m *testing.M) {
	c, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if os.Getenv("CI") != "" {
			os.Exit(1) // PostgreSQL tests must run in CI
		}
	} else {
		pgDSN = c.DSN
	}
	code := m.Run()
	_ = c.Stop()
	os.Exit(code)
}

// each runs f against SQLite and PostgreSQL.
func each(t *testing.T, f func(t *testing.T, db *DB)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		f(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		if pgDSN == "" {
			t.Skip("PostgreSQL not available (set up by `make test`)")
		}
		db, err := Open(context.Background(), "postgres", pgDSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		if _, err := db.SQL().ExecContext(ctx, "DROP TABLE IF EXISTS users"); err != nil {
			t.Fatal(err)
		}
		f(t, db)
	})
}

func seedUsers(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	s := db.Session(false)
	id := "INTEGER PRIMARY KEY"
	if db.Dialect() == Postgres {
		id = "SERIAL PRIMARY KEY"
	}
	for _, q := range []string{"CREATE TABLE users (id " + id + ", name TEXT NOT NULL UNIQUE, age INTEGER)", "CREATE INDEX users_age ON users(age)"} {
		if _, err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range []string{"Alice", "Bob"} {
		if _, err := s.Exec(ctx, "INSERT INTO users (name, age) VALUES (?, ?)", []any{n, 30 + i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, db *DB) int {
	t.Helper()
	s := db.Session(true)
	defer s.Rollback()
	rows, err := s.Exec(context.Background(), "SELECT COUNT(*) AS n FROM users", nil)
	if err != nil {
		t.Fatal(err)
	}
	switch v := rows.([]map[string]any)[0]["n"].(type) {
	case int64:
		return int(v)
	default:
		t.Fatalf("count type %T", v)
	}
	return 0
}

func TestSelectRows(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		s := db.Session(false)
		defer s.Rollback()
		res, err := s.Exec(context.Background(), "SELECT name, age FROM users WHERE age >= ? ORDER BY name", []any{30})
		if err != nil {
			t.Fatal(err)
		}
		rows := res.([]map[string]any)
		if len(rows) != 2 || rows[0]["name"] != "Alice" || rows[1]["name"] != "Bob" || rows[1]["age"] != int64(31) {
			t.Fatalf("%v", rows)
		}
	})
}

func TestRollbackLeavesTableUnchanged(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		s := db.Session(false)
		res, err := s.Exec(context.Background(), "INSERT INTO users (name, age) VALUES (?, ?)", []any{"Charlie", 40})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.(*StatementResult); r.RowsAffected != 1 {
			t.Fatalf("%+v", r)
		}
		if err := s.Rollback(); err != nil { // the tool threw
			t.Fatal(err)
		}
		if n := count(t, db); n != 2 {
			t.Fatalf("rows after rollback: %d", n)
		}
	})
}

func TestCancelledContextRollsBack(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		// The tool's deadline passes after its insert: cancelled here
		// rather than timed, so a slow insert on a loaded machine does
		// not pass the deadline before it is made.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := db.Session(false)
		if _, err := s.Exec(ctx, "INSERT INTO users (name) VALUES (?)", []any{"Dave"}); err != nil {
			t.Fatal(err)
		}
		cancel() // the tool looped until its deadline
		if err := s.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db); n != 2 {
			t.Fatalf("rows: %d", n)
		}
	})
}

func TestConcurrentSessionsIsolated(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		ctx := context.Background()
		a := db.Session(false)
		if _, err := a.Exec(ctx, "INSERT INTO users (name) VALUES (?)", []any{"Eve"}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var seen any
		var rerr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := db.Session(true)
			defer b.Rollback()
			seen, rerr = b.Exec(ctx, "SELECT name FROM users WHERE name = ?", []any{"Eve"})
		}()
		wg.Wait()
		if rerr != nil {
			t.Fatal(rerr)
		}
		if rows := seen.([]map[string]any); len(rows) != 0 {
			t.Fatalf("uncommitted row visible to another session: %v", rows)
		}
		if err := a.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db); n != 3 {
			t.Fatalf("after commit: %d", n)
		}
	})
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		s := db.Session(true)
		defer s.Rollback()
		_, err := s.Exec(context.Background(), "INSERT INTO users (name) VALUES (?)", []any{"Mallory"})
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("want ErrReadOnly, got %v", err)
		}
	})
}

func TestErrorsCarrySQLState(t *testing.T) {
	each(t, func(t *testing.T, db *DB) {
		seedUsers(t, db)
		s := db.Session(false)
		defer s.Rollback()
		_, err := s.Exec(context.Background(), "INSERT INTO users (name) VALUES (?)", []any{"Alice"})
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v", err)
		}
		if db.Dialect() == Postgres && e.SQLState != "23505" {
			t.Fatalf("SQLSTATE %q: %v", e.SQLState, e)
		}
		if db.Dialect() == SQLite && e.Code == "" {
			t.Fatalf("no sqlite code: %v", e)
		}
		if _, err := s.Exec(context.Background(), "SELECT 1; DROP TABLE users", nil); err == nil {
			t.Fatal("multiple statements accepted")
		}
	})
}

func TestTruncation(t *testing.T) {
	db, err := Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "t.db"), WithMaxRows(5))
	if err != nil {
		t.Fatal(err)
	}
	s := db.Session(false)
	rows, err := s.Exec(context.Background(), "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20) SELECT x FROM c", nil)
	if err != nil || len(rows.([]map[string]any)) != 5 || !s.Truncated() {
		t.Fatalf("%v %v %v", rows, err, s.Truncated())
	}
}

func TestTranslate(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $2"},
		{"SELECT '?' , \"a?\" FROM t WHERE x = ? -- why?\n", "SELECT '?' , \"a?\" FROM t WHERE x = $1 -- why?\n"},
		{"SELECT data ?| array['a'] FROM t WHERE id = ?", "SELECT data ?| array['a'] FROM t WHERE id = $1"},
		{"SELECT data ?? 'k' FROM t", "SELECT data ? 'k' FROM t"},
		{"SELECT $$ ? $$ , ?", "SELECT $$ ? $$ , $1"},
		{"SELECT 'it''s ?' , ?;", "SELECT 'it''s ?' , $1"},
		{"/* ? */ SELECT ?", "/* ? */ SELECT $1"},
	}
	for _, c := range cases {
		got, _, err := translate(c.in, true)
		if err != nil || got != c.want {
			t.Errorf("translate(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"SELECT 1; SELECT 2", "SELECT 'open", "SELECT /* open"} {
		if _, _, err := translate(bad, true); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzTranslate(f *testing.F) {
	f.Add("SELECT ? FROM t WHERE a = '?' AND b = ?")
	f.Add("$a$ ? $a$")
	f.Fuzz(func(t *testing.T, q string) {
		out, n, err := translate(q, true)
		if err != nil {
			return
		}
		for i := 1; i <= n; i++ {
			if !containsPlaceholder(out, i) {
				t.Fatalf("placeholder $%d missing in %q", i, out)
			}
		}
	})
}

func containsPlaceholder(s string, i int) bool {
	return len(s) > 0 && (stringsContains(s, fmt.Sprintf("$%d", i)))
}

func stringsContains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func BenchmarkIndexedSelect(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			dsn := filepath.Join(b.TempDir(), "b.db")
			if dialect == "postgres" {
				if pgDSN == "" {
					b.Skip("no PostgreSQL")
				}
				dsn = pgDSN
			}
			db, err := Open(context.Background(), dialect, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			_, _ = db.SQL().ExecContext(ctx, "DROP TABLE IF EXISTS bench")
			if _, err := db.SQL().ExecContext(ctx, "CREATE TABLE bench (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
				b.Fatal(err)
			}
			s := db.Session(false)
			for i := 0; i < 1000; i++ {
				if _, err := s.Exec(ctx, "INSERT INTO bench (id, v) VALUES (?, ?)", []any{i, fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
			}
			_ = s.Commit()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := db.Session(true)
				if _, err := s.Exec(ctx, "SELECT v FROM bench WHERE id = ?", []any{i % 1000}); err != nil {
					b.Fatal(err)
				}
				_ = s.Commit()
			}
		})
	}
}
