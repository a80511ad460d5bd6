package kernel

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"github.com/tgp-go/tgp/sqldb"
	"github.com/tgp-go/tgp/tools/forgetools"
)

// WithDB gives the kernel the host's database for exec_sql (dialect
// "sqlite" or "postgres"); it overrides sql.driver. The host keeps
// ownership: Shutdown does not close it.
func WithDB(db *sql.DB, dialect string) Option {
	return func(o *options) { o.db, o.dbDialect = db, dialect }
}

type sqlProvider struct{ db *sqldb.DB }

func (p sqlProvider) Session(readOnly bool) forgetools.SQLSession { return p.db.Session(readOnly) }

// openSQL opens the configured database, if any.
func (k *Kernel) openSQL(ctx context.Context) error {
	if k.opts.db != nil {
		d := sqldb.SQLite
		if k.opts.dbDialect == "postgres" {
			d = sqldb.Postgres
		}
		k.sql = sqlProvider{sqldb.Wrap(k.opts.db, d)}
		return nil
	}
	driver := k.cfg.SQL.Driver
	if driver == "" {
		return nil
	}
	dsn := Secret(k.environ(), k.cfg.SQL.DSNEnv)
	if dsn == "" {
		if driver != "sqlite" {
			return &ConfigError{Key: "sql.dsn_env", Problem: fmt.Sprintf("environment variable %s is empty; it must hold the %s DSN", k.cfg.SQL.DSNEnv, driver)}
		}
		if k.fs.InMemory() {
			dsn = "file:tgp?mode=memory&cache=shared"
		} else {
			// Next to the root, not in it: the database is state, not a tool.
			dsn = filepath.Clean(k.fs.Root()) + ".sqlite"
		}
	}
	db, err := sqldb.Open(ctx, driver, dsn)
	if err != nil {
		return err
	}
	k.sql = sqlProvider{db}
	k.closers = append(k.closers, func(context.Context) error { return db.Close() })
	return nil
}
