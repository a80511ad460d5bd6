// Package journal keeps the writes of a fleet of machines pushing to one
// git remote in PostgreSQL, so that the machines share one push budget
// and one pusher at a time (gitbackend.Journal; the design is in
// gitbackend/journal.go).
//
// Why PostgreSQL: it is the database agent backends already run, its
// advisory locks elect a pusher with no daemon (a pusher that dies loses
// its connection and so its turn), and its clock is one clock for every
// machine's budget. The tables are made on first use, with a schema
// version a newer release can migrate from.
package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tgp-go/tgp/gitbackend"
)

// SchemaVersion is the version of the tables this package reads and
// writes.
const SchemaVersion = 1

// ErrNewerSchema: the database holds a journal made by a newer release.
var ErrNewerSchema = errors.New("journal: the database's schema is newer than this release")

// Postgres is a journal in a PostgreSQL database.
type Postgres struct {
	pool *pgxpool.Pool
}

var _ gitbackend.Journal = (*Postgres)(nil)

// Option configures Open.
type Option func(*pgxpool.Config)

// WithConnectTimeout bounds each connection attempt (default 5s): a
// journal that does not answer makes writes push directly, soon.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.ConnectTimeout = d }
}

// Open connects to the database dsn names and makes the journal's tables
// when they are missing.
func Open(ctx context.Context, dsn string, opts ...Option) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the DSN, password and all.
		return nil, errors.New("journal: the DSN does not parse (postgres://user@host:port/db?sslmode=...)")
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	cfg.MaxConns = 8
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		// pg_stat_activity then says which process holds a pusher's
		// lock.
		cfg.ConnConfig.RuntimeParams["application_name"] = fmt.Sprintf("tgp pid %d", os.Getpid())
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("journal: connect: %w", err)
	}
	p := &Postgres{pool: pool}
	if err := p.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return p, nil
}

// Close closes the connections.
func (p *Postgres) Close() { p.pool.Close() }

// migrate makes the tables, once, under a transaction-scoped advisory
// lock: processes starting together would otherwise race on CREATE.
func (p *Postgres) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('tgp-journal-schema', 0))`); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		for _, q := range []string{
			`CREATE TABLE IF NOT EXISTS tgp_journal_schema (version integer NOT NULL)`,
			`CREATE TABLE IF NOT EXISTS tgp_journal_entries (
				id bigserial PRIMARY KEY,
				remote text NOT NULL,
				branch text NOT NULL,
				root text NOT NULL,
				base text NOT NULL,
				head text NOT NULL,
				pack bytea NOT NULL,
				planned text NOT NULL DEFAULT '',
				state text NOT NULL DEFAULT 'waiting',
				commit_hash text NOT NULL DEFAULT '',
				final text NOT NULL DEFAULT '',
				conflict text[] NOT NULL DEFAULT '{}',
				error text NOT NULL DEFAULT '',
				created timestamptz NOT NULL DEFAULT clock_timestamp(),
				settled timestamptz)`,
			`CREATE INDEX IF NOT EXISTS tgp_journal_waiting ON tgp_journal_entries (remote, branch, id) WHERE state = 'waiting'`,
			// LastLanded's: the newest landed entry of a branch.
			`CREATE INDEX IF NOT EXISTS tgp_journal_landed ON tgp_journal_entries (remote, branch, settled DESC, id DESC) WHERE state = 'landed'`,
			`CREATE TABLE IF NOT EXISTS tgp_journal_pushes (remote text NOT NULL, at timestamptz NOT NULL)`,
			`CREATE INDEX IF NOT EXISTS tgp_journal_pushes_at ON tgp_journal_pushes (remote, at)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("journal: create tables: %w", err)
			}
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM tgp_journal_schema`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			_, err = tx.Exec(ctx, `INSERT INTO tgp_journal_schema (version) VALUES ($1)`, SchemaVersion)
			return err
		case err != nil:
			return fmt.Errorf("journal: schema version: %w", err)
		case v > SchemaVersion:
			return fmt.Errorf("%w (database %d, this release %d)", ErrNewerSchema, v, SchemaVersion)
		}
		return nil
	})
}

// Record stores e and supersedes its root's older waiting entries.
func (p *Postgres) Record(ctx context.Context, e *gitbackend.JournalEntry) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE tgp_journal_entries SET state = 'superseded', settled = clock_timestamp()
			WHERE root = $1 AND remote = $2 AND branch = $3 AND state = 'waiting'`, e.Root, e.Remote, e.Branch); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO tgp_journal_entries (remote, branch, root, base, head, pack)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, e.Remote, e.Branch, e.Root, e.Base, e.Head, e.Pack).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("journal: record: %w", err)
	}
	return id, nil
}

// Outcome reads what a pusher said of entry id.
func (p *Postgres) Outcome(ctx context.Context, id int64) (*gitbackend.JournalOutcome, error) {
	var state, commit, final, msg string
	var conflict []string
	err := p.pool.QueryRow(ctx, `SELECT state, commit_hash, final, conflict, error FROM tgp_journal_entries WHERE id = $1`, id).
		Scan(&state, &commit, &final, &conflict, &msg)
	if err != nil {
		return nil, fmt.Errorf("journal: entry %d: %w", id, err)
	}
	switch state {
	case "waiting":
		return nil, nil
	case "superseded":
		return &gitbackend.JournalOutcome{Err: "superseded by a newer write of the same root, which holds its commits"}, nil
	}
	return &gitbackend.JournalOutcome{Commit: commit, Final: final, Conflict: conflict, Err: msg}, nil
}

// Lead takes the pusher's session-scoped advisory lock of remote's
// branch on a connection of its own, held until release (or until the
// process dies and the server drops the connection).
func (p *Postgres) Lead(ctx context.Context, remote, branch string) (func(), bool, error) {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("journal: %w", err)
	}
	key := "tgp-pusher|" + remote + "|" + branch
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("journal: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key); err != nil {
				// The lock dies with the connection.
				_ = conn.Conn().Close(ctx)
			}
			conn.Release()
		})
	}, true, nil
}

// Waiting lists remote's branch's entries with no outcome, oldest first.
func (p *Postgres) Waiting(ctx context.Context, remote, branch string) ([]*gitbackend.JournalEntry, error) {
	rows, err := p.pool.Query(ctx, `SELECT id, remote, branch, root, base, head, pack, planned, created
		FROM tgp_journal_entries WHERE remote = $1 AND branch = $2 AND state = 'waiting' ORDER BY id`, remote, branch)
	if err != nil {
		return nil, fmt.Errorf("journal: waiting: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*gitbackend.JournalEntry, error) {
		e := &gitbackend.JournalEntry{}
		err := row.Scan(&e.ID, &e.Remote, &e.Branch, &e.Root, &e.Base, &e.Head, &e.Pack, &e.Planned, &e.Created)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("journal: waiting: %w", err)
	}
	return out, nil
}

// Plan records the commits a push is about to land.
func (p *Postgres) Plan(ctx context.Context, planned map[int64]string) error {
	if len(planned) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for id, c := range planned {
		b.Queue(`UPDATE tgp_journal_entries SET planned = $2 WHERE id = $1 AND state = 'waiting'`, id, c)
	}
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("journal: plan: %w", err)
	}
	return nil
}

// Settle records outcomes of entries still waiting (an entry is settled
// once).
func (p *Postgres) Settle(ctx context.Context, outcomes map[int64]*gitbackend.JournalOutcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for id, o := range outcomes {
		state := "landed"
		if o.Err != "" {
			state = "failed"
		}
		conflict := o.Conflict
		if conflict == nil {
			conflict = []string{}
		}
		b.Queue(`UPDATE tgp_journal_entries SET state = $2, commit_hash = $3, final = $4, conflict = $5, error = $6,
			settled = clock_timestamp(), pack = CASE WHEN $2 = 'landed' THEN ''::bytea ELSE pack END
			WHERE id = $1 AND state = 'waiting'`, id, state, o.Commit, o.Final, conflict, o.Err)
	}
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("journal: settle: %w", err)
	}
	return nil
}

// LastLanded is the pushed tip the newest landed entry of remote's
// branch names (pushers take turns, so the newest settled is the last
// push; "" when none landed).
func (p *Postgres) LastLanded(ctx context.Context, remote, branch string) (string, error) {
	var tip string
	err := p.pool.QueryRow(ctx, `SELECT final FROM tgp_journal_entries WHERE remote = $1 AND branch = $2 AND state = 'landed'
		ORDER BY settled DESC, id DESC LIMIT 1`, remote, branch).Scan(&tip)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("journal: last landed tip: %w", err)
	}
	return tip, nil
}

// PushBudget keeps the fleet's pushes to remote within n per window, on
// the database's clock, under a transaction-scoped advisory lock per
// remote.
func (p *Postgres) PushBudget(ctx context.Context, remote string, n int, window time.Duration, take bool) (time.Duration, error) {
	var wait time.Duration
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "tgp-budget|"+remote); err != nil {
			return err
		}
		var now time.Time
		if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
			return err
		}
		since := now.Add(-window)
		if _, err := tx.Exec(ctx, `DELETE FROM tgp_journal_pushes WHERE remote = $1 AND at <= $2`, remote, since); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT at FROM tgp_journal_pushes WHERE remote = $1 ORDER BY at`, remote)
		if err != nil {
			return err
		}
		starts, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
		if err != nil {
			return err
		}
		if wait = gitbackend.BudgetWait(starts, now, n, window); wait > 0 {
			return nil
		}
		if take {
			_, err = tx.Exec(ctx, `INSERT INTO tgp_journal_pushes (remote, at) VALUES ($1, $2)`, remote, now)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("journal: push budget: %w", err)
	}
	return wait, nil
}
