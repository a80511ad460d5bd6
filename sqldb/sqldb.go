// Package sqldb is the database behind exec_sql: SQLite in process
// (modernc.org/sqlite, no cgo) or PostgreSQL (pgx), parameterised
// statements with `?` placeholders on both, rows as JSON-friendly objects,
// capped results, typed errors with SQLSTATE, and one transaction per tool
// run (Session): begun on the first statement, committed only when the tool
// succeeds, rolled back otherwise.
//
// The placeholder translator is hand-written: it is a small lexer (strings,
// quoted identifiers, comments, dollar quotes) that no library offers
// separately from a full SQL parser.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tgp-go/tgp/internal/telemetry"
)

// Dialect is the SQL flavour.
type Dialect int

// Dialects.
const (
	SQLite Dialect = iota
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// DB is a database for exec_sql.
type DB struct {
	db       *sql.DB
	dialect  Dialect
	maxRows  int
	maxBytes int
	owned    bool
}

// Option configures a DB.
type Option func(*DB)

// WithMaxRows caps rows returned per statement (default 1000).
func WithMaxRows(n int) Option { return func(d *DB) { d.maxRows = n } }

// WithMaxBytes caps the approximate size of a result (default 1 MiB).
func WithMaxBytes(n int) Option { return func(d *DB) { d.maxBytes = n } }

// Open opens a database: driver "sqlite" (dsn: a file path or a
// file: URI) or "postgres" (dsn: a URL or key=value string).
func Open(ctx context.Context, driver, dsn string, opts ...Option) (*DB, error) {
	var d *DB
	switch driver {
	case "sqlite":
		db, err := sql.Open("sqlite", sqliteDSN(dsn))
		if err != nil {
			return nil, fmt.Errorf("sqldb: open sqlite: %w", err)
		}
		d = &DB{db: db, dialect: SQLite}
	case "postgres", "postgresql", "pgx":
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("sqldb: open postgres: %w", err)
		}
		d = &DB{db: db, dialect: Postgres}
	default:
		return nil, fmt.Errorf("sqldb: unknown driver %q (use sqlite or postgres)", driver)
	}
	d.owned = true
	d.init(opts)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.db.PingContext(pctx); err != nil {
		d.db.Close()
		return nil, fmt.Errorf("sqldb: connect %s: %w", driver, err)
	}
	return d, nil
}

// sqliteDSN turns on WAL and a busy timeout, so concurrent tool runs wait
// for each other's write transactions instead of failing.
func sqliteDSN(dsn string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	if !strings.HasPrefix(dsn, "file:") {
		dsn = "file:" + dsn
	}
	return dsn + sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
}

// Wrap uses a host's *sql.DB; Close does not close it.
func Wrap(db *sql.DB, dialect Dialect, opts ...Option) *DB {
	d := &DB{db: db, dialect: dialect}
	d.init(opts)
	return d
}

func (d *DB) init(opts []Option) {
	d.maxRows, d.maxBytes = 1000, 1<<20
	for _, o := range opts {
		o(d)
	}
}

// Dialect returns the database's flavour.
func (d *DB) Dialect() Dialect { return d.dialect }

// SQL returns the underlying handle.
func (d *DB) SQL() *sql.DB { return d.db }

// Close closes a database Open opened.
func (d *DB) Close() error {
	if d.owned {
		return d.db.Close()
	}
	return nil
}

// Error is a database error with the driver's message and, where the
// driver has one, the SQLSTATE (PostgreSQL) or result code name (SQLite).
type Error struct {
	Message  string `json:"message"`
	SQLState string `json:"sqlstate,omitempty"`
	Code     string `json:"code,omitempty"`
	Err      error  `json:"-"`
}

func (e *Error) Error() string {
	switch {
	case e.SQLState != "":
		return fmt.Sprintf("%s (SQLSTATE %s)", e.Message, e.SQLState)
	case e.Code != "":
		return fmt.Sprintf("%s (%s)", e.Message, e.Code)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrReadOnly is returned for a write in a read-only session.
var ErrReadOnly = errors.New("the session is read-only: writes are refused")

func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return &Error{Message: pg.Message, SQLState: pg.Code, Err: err}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		// Extended codes (2067 = SQLITE_CONSTRAINT_UNIQUE) have no name in
		// the driver's table; the primary code (low byte) does.
		name := sqlite.ErrorCodeString[se.Code()]
		if name == "" {
			name = sqlite.ErrorCodeString[se.Code()&0xff]
		}
		e := &Error{Message: se.Error(), Code: fmt.Sprintf("sqlite %d: %s", se.Code(), name), Err: err}
		if strings.Contains(se.Error(), "too many attached databases") {
			// SQLITE_LIMIT_ATTACHED is 0 (Session.begin): say why.
			e.Message = "ATTACH and VACUUM INTO are refused: exec_sql reaches only the configured database (" + se.Error() + ")"
			e.Err = errors.Join(ErrRefused, err)
		}
		return e
	}
	return &Error{Message: err.Error(), Err: err}
}

// StatementResult is what a non-query statement returns.
type StatementResult struct {
	RowsAffected int64  `json:"rows_affected"`
	LastInsertID *int64 `json:"last_insert_id,omitempty"`
}

// Session is one tool run's transaction. It is begun lazily by the first
// statement; the caller ends it with Commit or Rollback.
type Session struct {
	db        *DB
	readOnly  bool
	mu        sync.Mutex
	conn      *sql.Conn
	tx        *sql.Tx
	done      bool
	truncated bool
	// span is the transaction's span, from the first statement to Commit
	// or Rollback; statements counts what ran in it.
	span       trace.Span
	statements int
}

// Session starts a session (no transaction is begun yet).
func (d *DB) Session(readOnly bool) *Session { return &Session{db: d, readOnly: readOnly} }

// ReadOnly reports whether the session refuses writes (the database
// does: query_only on SQLite, a READ ONLY transaction on PostgreSQL).
// The sandbox runs a tool limited to permissions.sql "read" only on such
// a session.
func (s *Session) ReadOnly() bool { return s.readOnly }

// Truncated reports whether any result in the session was capped.
func (s *Session) Truncated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated
}

func (s *Session) begin(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	if s.done {
		return errors.New("sqldb: the session is finished")
	}
	// The transaction outlives the statement's context: database/sql rolls
	// a transaction back when its BeginTx context ends, but the run's
	// deadline must only stop statements; Commit/Rollback end the session.
	ctx = context.WithoutCancel(ctx)
	conn, err := s.db.db.Conn(ctx)
	if err != nil {
		return wrapErr(err)
	}
	if s.db.dialect == SQLite {
		// The jail: ATTACH (and VACUUM INTO, which attaches its target)
		// would let a statement create or read any file the process can
		// reach. Per connection, so set on each one a session takes.
		if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
			conn.Close()
			return wrapErr(err)
		}
	}
	if s.readOnly && s.db.dialect == SQLite {
		// SQLite has no read-only transactions: the connection itself is
		// made read-only for this session (and reset on release).
		if _, err := conn.ExecContext(ctx, "PRAGMA query_only = ON"); err != nil {
			conn.Close()
			return wrapErr(err)
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.readOnly && s.db.dialect == Postgres})
	if err != nil {
		s.release(conn)
		return wrapErr(err)
	}
	s.conn, s.tx = conn, tx
	system := "sqlite"
	if s.db.dialect == Postgres {
		system = "postgresql"
	}
	// The DSN and the statements' text are never recorded: either may
	// hold a secret.
	_, s.span = telemetry.Start(ctx, "tgp.sql.transaction", attribute.String("db.system.name", system),
		attribute.Bool("tgp.sql.read_only", s.readOnly))
	return nil
}

// endSpan ends the transaction's span with its outcome.
func (s *Session) endSpan(outcome string, err error) {
	if s.span == nil {
		return
	}
	s.span.SetAttributes(attribute.Int("tgp.sql.statements", s.statements), attribute.String("tgp.outcome", outcome))
	if err != nil {
		s.span.SetAttributes(telemetry.ErrorType(outcome + "_failed"))
	}
	telemetry.End(s.span, err)
	s.span = nil
}

func (s *Session) release(conn *sql.Conn) {
	if conn == nil {
		return
	}
	if s.readOnly && s.db.dialect == SQLite {
		_, _ = conn.ExecContext(context.Background(), "PRAGMA query_only = OFF")
	}
	conn.Close()
}

// Commit commits the session's transaction (a no-op if nothing ran).
func (s *Session) Commit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.tx == nil {
		return nil
	}
	err := s.tx.Commit()
	s.release(s.conn)
	s.tx, s.conn = nil, nil
	s.endSpan("commit", err)
	return wrapErr(err)
}

// Rollback rolls the session back (a no-op if nothing ran).
func (s *Session) Rollback() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.tx == nil {
		return nil
	}
	err := s.tx.Rollback()
	s.release(s.conn)
	s.tx, s.conn = nil, nil
	if errors.Is(err, sql.ErrTxDone) {
		err = nil
	}
	s.endSpan("rollback", err)
	if err == nil {
		return nil
	}
	return wrapErr(err)
}

// Exec runs one parameterised statement in the session's transaction.
// Queries return []map[string]any (column name → value); other statements
// return *StatementResult.
func (s *Session) Exec(ctx context.Context, query string, params []any) (any, error) {
	q, err := s.db.prepare(query)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.statements++
	if isQuery(query) {
		rows, truncated, err := s.db.query(ctx, s.tx, q, params)
		if truncated {
			s.truncated = true
		}
		if err != nil && s.readOnly && isReadOnlyErr(err) {
			return nil, &Error{Message: ErrReadOnly.Error(), SQLState: sqlStateOf(err), Err: ErrReadOnly}
		}
		return rows, err
	}
	res, err := s.tx.ExecContext(ctx, q, params...)
	if err != nil {
		if s.readOnly && isReadOnlyErr(err) {
			return nil, &Error{Message: ErrReadOnly.Error() + ": " + err.Error(), SQLState: sqlStateOf(err), Err: ErrReadOnly}
		}
		return nil, wrapErr(err)
	}
	return s.db.resultOf(res), nil
}

// resultOf reads a statement's counts. The SQLite driver hands back no
// result for a statement that compiled to nothing, which database/sql
// wraps and then dereferences: such a statement affected no rows.
func (d *DB) resultOf(res sql.Result) (out *StatementResult) {
	out = &StatementResult{}
	if res == nil {
		return out
	}
	defer func() {
		if recover() != nil {
			out = &StatementResult{}
		}
	}()
	out.RowsAffected, _ = res.RowsAffected()
	if d.dialect == SQLite {
		if id, err := res.LastInsertId(); err == nil {
			out.LastInsertID = &id
		}
	}
	return out
}

func isReadOnlyErr(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "25006" // read_only_sql_transaction
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "readonly") || strings.Contains(msg, "read-only") || strings.Contains(msg, "query_only")
}

func sqlStateOf(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code
	}
	return ""
}

// prepare refuses empty and multi-statement input and translates
// placeholders for the dialect.
func (d *DB) prepare(query string) (string, error) {
	if strings.IndexByte(query, 0) >= 0 {
		return "", &Error{Message: "SQL statement contains a NUL byte"}
	}
	if toks := sqliteTokens(query, 2); len(toks) == 0 || len(toks) == 1 && toks[0] == ";" {
		// White space and comments only: no driver returns a result.
		return "", &Error{Message: "empty SQL statement"}
	}
	out, n, err := translate(query, d.dialect == Postgres)
	if err != nil {
		return "", &Error{Message: err.Error()}
	}
	if d.dialect == SQLite {
		if err := checkSQLite(out); err != nil {
			return "", err
		}
	}
	_ = n
	return out, nil
}

// isQuery decides whether a statement returns rows: SELECT, WITH, VALUES,
// PRAGMA, SHOW, EXPLAIN, TABLE, or anything with RETURNING.
func isQuery(q string) bool {
	first := strings.ToUpper(firstWord(q))
	switch first {
	case "SELECT", "WITH", "VALUES", "PRAGMA", "SHOW", "EXPLAIN", "TABLE":
		return true
	}
	return containsWordOutsideLiterals(q, "RETURNING")
}

func firstWord(q string) string {
	s := strings.TrimSpace(stripLeadingComments(q))
	s = strings.TrimLeft(s, "(")
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return s[:i]
		}
	}
	return s
}

func stripLeadingComments(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "--"):
			if i := strings.IndexByte(q, '\n'); i >= 0 {
				q = q[i+1:]
			} else {
				return ""
			}
		case strings.HasPrefix(q, "/*"):
			if i := strings.Index(q, "*/"); i >= 0 {
				q = q[i+2:]
			} else {
				return ""
			}
		default:
			return q
		}
	}
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// query reads rows as column-name maps, capped by rows and bytes.
func (d *DB) query(ctx context.Context, q queryer, query string, params []any) ([]map[string]any, bool, error) {
	rows, err := q.QueryContext(ctx, query, params...)
	if err != nil {
		return nil, false, wrapErr(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, false, wrapErr(err)
	}
	out := []map[string]any{}
	size := 0
	for rows.Next() {
		if len(out) >= d.maxRows || size > d.maxBytes {
			return out, true, nil
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, false, wrapErr(err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			v := jsonValue(vals[i])
			row[c] = v
			size += len(c) + approxSize(v)
		}
		out = append(out, row)
	}
	return out, false, wrapErr(rows.Err())
}

// jsonValue converts driver values to what JSON (and JS) can hold.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return x // base64 in JSON
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

func approxSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 8
}
