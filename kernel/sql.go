package kernel

import "database/sql"

// WithDB gives the kernel the host's database for exec_sql (the sandbox toolset; dialect
// "sqlite" or "postgres"); it overrides sql.driver. The host keeps
// ownership: Shutdown does not close it.
func WithDB(db *sql.DB, dialect string) Option {
	return func(o *options) { o.db, o.dbDialect = db, dialect }
}
