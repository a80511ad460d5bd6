package gittools

// The tools' side of commit formatting (internal/pretty): the settings
// and mailmap a format is read with, and what git dies of as a tool error.

import (
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/pretty"
	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/tools"
)

// newPrettyContext reads what formatting needs: the mailmap (unless
// log.mailmap=false) and the settings.
func newPrettyContext(r *git.Repository, cfg *settings, now time.Time) *pretty.Context {
	cfg = cfg.orDefault()
	var mm pretty.Mailmap
	if cfg.mailmap {
		mm = readMailmap(r)
	}
	return pretty.NewContext(r, pretty.Config{Date: cfg.date, Decorate: cfg.decorate, Pretty: cfg.pretty, AbbrevCommit: cfg.abbrevCommit}, mm, now)
}

// commitFormat is pc.Format, a format git refuses failing the command.
func commitFormat(pc *pretty.Context, format string, oneline bool) (pretty.Format, error) {
	cf, err := pc.Format(format, oneline)
	return cf, prettyError(err)
}

// prettyError is what git dies of while formatting as the tool's error.
func prettyError(err error) error {
	if pe := (*pretty.Error)(nil); errors.As(err, &pe) {
		return &tools.Error{Kind: tools.KindExecutionFailed, Message: pe.Message}
	}
	return err
}

// newLogPrinter prints commits of r in format cf, abbreviating as git
// log does.
func newLogPrinter(r *git.Repository, pc *pretty.Context, cf pretty.Format) *pretty.LogPrinter {
	return pretty.NewLogPrinter(pc, cf, func() pretty.Abbreviator { return newAbbrever(r) })
}

// readMailmap reads the mailmap as git does (mailmap.c's read_mailmap):
// .mailmap at the top of the working tree (not followed when a link),
// then mailmap.blob.
func readMailmap(r *git.Repository) pretty.Mailmap {
	m := pretty.Mailmap{}
	if w, err := worktreeOf(r); err == nil {
		if info, err := w.Filesystem.Lstat(".mailmap"); err == nil && info.Mode()&fs.ModeSymlink == 0 {
			if f, err := w.Filesystem.Open(".mailmap"); err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				m.Parse(string(b))
			}
		}
	}
	cfg, err := r.Config()
	if err != nil || cfg.Raw == nil {
		return m
	}
	if blob := cfg.Raw.Section("mailmap").Option("blob"); blob != "" {
		if rev, p, ok := strings.Cut(blob, ":"); ok {
			if h, err := revparse.Commit(r, rev); err == nil {
				if c, err := r.CommitObject(*h); err == nil {
					if data, _, ok := fileAtCommit(r.Storer, c, p); ok {
						m.Parse(string(data))
					}
				}
			}
		} else if h, err := revparse.Commit(r, blob); err == nil {
			if b, err := object.GetBlob(r.Storer, *h); err == nil {
				if rd, err := b.Reader(); err == nil {
					data, _ := io.ReadAll(rd)
					rd.Close()
					m.Parse(string(data))
				}
			}
		}
	}
	return m
}
