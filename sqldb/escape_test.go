package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteCannotReachOtherFiles: an agent's statements cannot open or
// create any file but the configured database: ATTACH (of a new or an
// existing file, by path or file: URI) and VACUUM INTO are refused, in a
// read-write and a read-only session alike, and nothing is created.
func TestSQLiteCannotReachOtherFiles(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(context.Background(), "sqlite", filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	outside := t.TempDir()
	other := filepath.Join(outside, "other.db")
	existing := filepath.Join(outside, "existing.db")
	if ex, err := Open(context.Background(), "sqlite", existing); err != nil {
		t.Fatal(err)
	} else {
		ex.Close()
	}
	stmts := []string{
		"ATTACH DATABASE '" + other + "' AS o",
		"ATTACH '" + existing + "' AS e",
		"ATTACH 'file:" + other + "?mode=rwc' AS o",
		"ATTACH ':memory:' AS m",
		"VACUUM INTO '" + other + "'",
		"PRAGMA temp_store_directory = '" + outside + "'",
		"VACUUM main INTO '" + other + "'",
		"SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')",
	}
	for _, readOnly := range []bool{false, true} {
		for _, q := range stmts {
			s := db.Session(readOnly)
			_, err := s.Exec(context.Background(), q, nil)
			_ = s.Commit()
			if err == nil {
				t.Errorf("readOnly=%v: %q was allowed", readOnly, q)
			} else if !readOnly && (strings.HasPrefix(q, "ATTACH") || strings.HasPrefix(q, "PRAGMA")) && !errors.Is(err, ErrRefused) {
				t.Errorf("%q: %v does not match ErrRefused", q, err)
			}
			// And outside a transaction's first statement too.
			s = db.Session(readOnly)
			if _, err := s.Exec(context.Background(), "SELECT 1", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), q, nil); err == nil {
				t.Errorf("readOnly=%v: %q was allowed after another statement", readOnly, q)
			}
			_ = s.Rollback()
		}
	}
	if _, err := os.Stat(other); err == nil {
		t.Fatalf("%s was created", other)
	}
}

// FuzzSQLiteStaysInItsFile runs arbitrary statements in a session and
// asks SQLite afterwards whether the process-wide temp directory moved or
// a database other than main (and temp) is attached: the guard and the
// attach limit must hold for whatever the tokenizer is shown.
func FuzzSQLiteStaysInItsFile(f *testing.F) {
	for _, s := range []string{
		"PRAGMA temp_store_directory = '/tmp'",
		"pragma main.temp_store_directory='/tmp'",
		"/* x */ PRAGMA/**/\"temp_store_directory\" = '/tmp'",
		"EXPLAIN PRAGMA [temp_store_directory]('/tmp')",
		"explain query plan pragma `temp_store_directory`='/tmp'",
		"PRAGMA 'temp_store_directory' = '/tmp'",
		"ATTACH ':memory:' AS x",
		"VACUUM INTO '/tmp/x.db'",
		"SELECT 1",
		"-- c\nPRAGMA temp.temp_store_directory = '/tmp'",
	} {
		f.Add(s)
	}
	db, err := Open(context.Background(), "sqlite", filepath.Join(f.TempDir(), "t.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	f.Fuzz(func(t *testing.T, q string) {
		s := db.Session(false)
		_, _ = s.Exec(context.Background(), q, nil)
		_ = s.Rollback()
		var dir string
		if err := db.SQL().QueryRow("PRAGMA temp_store_directory").Scan(&dir); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		if dir != "" {
			_, _ = db.SQL().Exec("PRAGMA temp_store_directory = ''")
			t.Fatalf("%q moved the process-wide temp directory to %q", q, dir)
		}
		rows, err := db.SQL().Query("PRAGMA database_list")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var seq int
			var name, file string
			if err := rows.Scan(&seq, &name, &file); err != nil {
				t.Fatal(err)
			}
			if name != "main" && name != "temp" {
				t.Fatalf("%q attached %q (%s)", q, name, file)
			}
		}
	})
}
