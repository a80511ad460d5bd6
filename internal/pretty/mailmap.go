package pretty

import (
	"strings"
)

// The mailmap (mailmap.c): the names and emails authors and committers
// are shown under. Keys compare without case.

type mailmapInfo struct {
	name, email *string
}

type mailmapEntry struct {
	simple  mailmapInfo
	byName  map[string]mailmapInfo // lower-cased old name
	hasName bool
}

// Mailmap maps lower-cased old emails to their entries; the zero value
// maps nothing, and Parse adds a mailmap file's lines.
type Mailmap map[string]*mailmapEntry

// Parse is read_mailmap_line for each line of a mailmap file.
func (m Mailmap) Parse(text string) {
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
	for ns < l && gitIsSpace(s[ns]) {
		ns++
	}
	ne := l - 1
	for ne > ns && gitIsSpace(s[ne]) {
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
func (m Mailmap) add(newName, newEmail, oldName, oldEmail *string) {
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

// MapUser is map_user: the name and email shown for an author.
func (m Mailmap) MapUser(name, email string) (string, string) {
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

// asciiLower folds ASCII only, as strcasecmp does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
