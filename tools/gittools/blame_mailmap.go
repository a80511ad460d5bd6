package gittools

import (
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revparse"
)

// blame prints authors through the mailmap as git does (mailmap.c):
// .mailmap at the top of the working tree (not followed when a link),
// then mailmap.blob, then mailmap.file; keys compare without case.

type mailmapInfo struct {
	name, email *string
}

type mailmapEntry struct {
	simple  mailmapInfo
	byName  map[string]mailmapInfo // lower-cased old name
	hasName bool
}

type mailmap map[string]*mailmapEntry // lower-cased old email

func readMailmap(r *git.Repository) mailmap {
	m := mailmap{}
	if w, err := worktreeOf(r); err == nil {
		if info, err := w.Filesystem.Lstat(".mailmap"); err == nil && info.Mode()&fs.ModeSymlink == 0 {
			if f, err := w.Filesystem.Open(".mailmap"); err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				m.parse(string(b))
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
						m.parse(string(data))
					}
				}
			}
		} else if h, err := revparse.Commit(r, blob); err == nil {
			if b, err := object.GetBlob(r.Storer, *h); err == nil {
				if rd, err := b.Reader(); err == nil {
					data, _ := io.ReadAll(rd)
					rd.Close()
					m.parse(string(data))
				}
			}
		}
	}
	return m
}

// parse is read_mailmap_line for each line.
func (m mailmap) parse(text string) {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name1, email1, rest, ok := parseNameEmail(line, false)
		if !ok {
			continue
		}
		var name2, email2 *string
		if rest != "" {
			if n, e, _, ok := parseNameEmail(rest, true); ok {
				name2, email2 = n, e
			}
		}
		m.add(name1, email1, name2, email2)
	}
}

func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseNameEmail is mailmap.c's parse_name_and_email: "Name <email>",
// returning what follows.
func parseNameEmail(s string, allowEmpty bool) (name, email *string, rest string, ok bool) {
	l := strings.IndexByte(s, '<')
	if l < 0 {
		return nil, nil, "", false
	}
	rr := strings.IndexByte(s[l+1:], '>')
	if rr < 0 {
		return nil, nil, "", false
	}
	r := l + 1 + rr
	if !allowEmpty && r == l+1 {
		return nil, nil, "", false
	}
	ns := 0
	for ns < l && isGitSpace(s[ns]) {
		ns++
	}
	ne := l - 1
	for ne > ns && isGitSpace(s[ne]) {
		ne--
	}
	if ns <= ne {
		n := s[ns : ne+1]
		name = &n
	}
	e := s[l+1 : r]
	return name, &e, s[r+1:], true
}

// add is mailmap.c's add_mapping.
func (m mailmap) add(newName, newEmail, oldName, oldEmail *string) {
	if oldEmail == nil {
		oldEmail, newEmail = newEmail, nil
	}
	key := asciiLower(*oldEmail)
	me := m[key]
	if me == nil {
		me = &mailmapEntry{byName: map[string]mailmapInfo{}}
		m[key] = me
	}
	if oldName == nil {
		if newName != nil {
			me.simple.name = newName
		}
		if newEmail != nil {
			me.simple.email = newEmail
		}
		return
	}
	me.byName[asciiLower(*oldName)] = mailmapInfo{name: newName, email: newEmail}
	me.hasName = true
}

// mapUser is map_user: the name and email shown for an author.
func (m mailmap) mapUser(name, email string) (string, string) {
	if len(m) == 0 {
		return name, email
	}
	me := m[asciiLower(email)]
	if me == nil {
		return name, email
	}
	info := me.simple
	if me.hasName {
		if sub, ok := me.byName[asciiLower(name)]; ok {
			info = sub
		}
	}
	if info.name != nil {
		name = *info.name
	}
	if info.email != nil {
		email = *info.email
	}
	return name, email
}

// asciiLower folds ASCII only, as strcasecmp does (and pathspec icase
// magic: ":(icase)Ü.TXT" does not match "ü.txt").
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
