// Package fsck is git's fsck.c as receive-pack runs it when
// receive.fsckObjects (or transfer.fsckObjects) is set: `index-pack
// --strict` / `unpack-objects --strict` over every object a push brings:
// commits, tags and trees checked on their raw bytes, .gitmodules and
// .gitattributes blobs read with git's own grammar. The rules, message
// ids, messages and default severities are git's; a remote's
// receive.fsck.<msg-id> settings and receive.fsck.skipList adjust them as
// they do for git.
package fsck

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/internal/gitconfig"
)

// This file is git's fsck.c as receive-pack runs it when receive.Objects
// (or transfer.Objects) is set: `index-pack --strict` /
// `unpack-objects --strict` over every object a push brings. The rules,
// message ids, messages and default severities are git's; a remote's
// receive.fsck.<msg-id> settings and receive.fsck.skipList adjust them as
// they do for git.

type Severity int

const (
	Ignore Severity = iota
	Info
	Warn
	Error
)

// defaults are git's default severities (fsck.h), keyed by the
// lower-cased message id (config keys are case-insensitive).
var defaults = map[string]Severity{
	"nulinheader": Error, "unterminatedheader": Error, "baddate": Error,
	"baddateoverflow": Error, "bademail": Error, "badname": Error,
	"badobjectsha1": Error, "badparentsha1": Error, "badtimezone": Error,
	"badtree": Error, "badtreesha1": Error, "badtype": Error,
	"duplicateentries": Error, "missingauthor": Error, "missingcommitter": Error,
	"missingemail": Error, "missingnamebeforeemail": Error, "missingobject": Error,
	"missingspacebeforedate": Error, "missingspacebeforeemail": Error,
	"missingtag": Error, "missingtagentry": Error, "missingtree": Error,
	"missingtype": Error, "missingtypeentry": Error, "multipleauthors": Error,
	"treenotsorted": Error, "unknowntype": Error, "zeropaddeddate": Error,
	"gitmodulesblob": Error, "gitmoduleslarge": Error, "gitmodulesname": Error,
	"gitmodulessymlink": Error, "gitmodulesurl": Error, "gitmodulespath": Error,
	"gitmodulesupdate": Error, "gitmodulesmissing": Error,
	"gitattributesmissing": Error, "gitattributesblob": Error, "gitattributeslarge": Error,
	"gitattributeslinelength": Error,
	"emptyname":               Warn, "fullpathname": Warn, "hasdot": Warn, "hasdotdot": Warn,
	"hasdotgit": Warn, "nullsha1": Warn, "nulincommit": Warn,
	"zeropaddedfilemode": Warn,
	"badfilemode":        Info, "gitmodulesparse": Info, "gitattributessymlink": Info,
	"badtagname": Info, "missingtaggerentry": Info,
	"extraheaderentry": Ignore,
}

// Options are the strict options receive-pack passes to index-pack.
type Options struct {
	Severity map[string]Severity    // receive.fsck.<id> overrides (lower-cased ids)
	Skip     map[plumbing.Hash]bool // receive.fsck.skipList
}

// run collects git's report lines for one push.
type run struct {
	opts          *Options
	lines         []string
	failed        bool
	gitmodules    map[plumbing.Hash]bool // .gitmodules blobs seen in trees
	gitattributes map[plumbing.Hash]bool // .gitattributes blobs seen in trees
}

func sortedHashes(m map[plumbing.Hash]bool) []plumbing.Hash {
	out := make([]plumbing.Hash, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// report is git's report(): the message at its severity (strict: a
// warning is an error; an info is shown as a warning and never refuses).
func (r *run) report(oid plumbing.Hash, id, msg string) {
	sev, ok := r.opts.Severity[strings.ToLower(id)]
	if !ok {
		sev = defaults[strings.ToLower(id)]
		if sev == Warn {
			sev = Error
		}
	}
	if sev == Ignore || r.opts.Skip[oid] {
		return
	}
	line := fmt.Sprintf("warning: object %s: %s: %s", oid, id, msg)
	if sev == Error {
		r.failed = true
		line = fmt.Sprintf("error: object %s: %s: %s", oid, id, msg)
	}
	// A message quoting a value with a newline is several lines, as git
	// prints it.
	r.lines = append(r.lines, strings.Split(line, "\n")...)
}

// Objects checks the objects a push brings. It stops at the first
// object with an error, as unpack-objects --strict dies there; the report
// lines are what git prints.
func Objects(src storer.EncodedObjectStorer, hashes []plumbing.Hash, opts *Options) ([]string, bool, error) {
	r := &run{opts: opts, gitmodules: map[plumbing.Hash]bool{}, gitattributes: map[plumbing.Hash]bool{}}
	for _, h := range hashes {
		o, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, false, fmt.Errorf("fsck: read object %s: %w", h, err)
		}
		if o.Type() == plumbing.BlobObject {
			continue // only .gitmodules blobs are read, below
		}
		rd, err := o.Reader()
		if err != nil {
			return nil, false, fmt.Errorf("fsck: read object %s: %w", h, err)
		}
		buf, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, false, fmt.Errorf("fsck: read object %s: %w", h, err)
		}
		switch o.Type() {
		case plumbing.TreeObject:
			r.tree(h, buf)
		case plumbing.CommitObject:
			r.commit(h, buf)
		case plumbing.TagObject:
			r.tag(h, buf)
		}
		if r.failed {
			return r.lines, true, nil
		}
	}
	// fsck_finish: the .gitmodules and .gitattributes blobs the trees
	// named, whether this push brings them or not.
	for _, set := range []struct {
		found              map[plumbing.Hash]bool
		kind, missing, typ string
		check              func(plumbing.Hash, []byte)
	}{
		{r.gitmodules, ".gitmodules", "gitmodulesMissing", "gitmodulesBlob", r.gitmodulesBlob},
		{r.gitattributes, ".gitattributes", "gitattributesMissing", "gitattributesBlob", r.gitattributesBlob},
	} {
		for _, h := range sortedHashes(set.found) {
			o, err := src.EncodedObject(plumbing.AnyObject, h)
			if err != nil {
				r.report(h, set.missing, "unable to read "+set.kind+" blob")
				continue
			}
			if o.Type() != plumbing.BlobObject {
				r.report(h, set.typ, "non-blob found at "+set.kind)
				continue
			}
			if o.Size() > bigFileThreshold || (set.kind == ".gitattributes" && o.Size() > attrMaxFileSize) {
				r.report(h, strings.TrimSuffix(set.missing, "Missing")+"Large", set.kind+" too large to parse")
				continue
			}
			rd, err := o.Reader()
			if err != nil {
				return nil, false, fmt.Errorf("fsck: read object %s: %w", h, err)
			}
			buf, err := io.ReadAll(rd)
			rd.Close()
			if err != nil {
				return nil, false, fmt.Errorf("fsck: read object %s: %w", h, err)
			}
			set.check(h, buf)
		}
	}
	return r.lines, r.failed, nil
}

// bigFileThreshold is core.bigFileThreshold's default: a .gitmodules
// larger than it is refused unread, as git does. The attribute limits are
// git's ATTR_MAX_FILE_SIZE and ATTR_MAX_LINE_LENGTH (CVE-2022-23521).
const (
	bigFileThreshold  = 512 << 20
	attrMaxFileSize   = 100 << 20
	attrMaxLineLength = 2048
)

const (
	modeDir     = 0o040000
	modeLink    = 0o120000
	modeGitlink = 0o160000
	modeFmt     = 0o170000
)

// tree is fsck_tree, on the raw object (go-git's decoder normalizes the
// modes that zeroPaddedFilemode and badFilemode are about).
func (r *run) tree(oid plumbing.Hash, buf []byte) {
	var hasNull, hasFull, hasEmpty, hasDot, hasDotdot, hasDotgit, hasZeroPad, hasBadModes, hasDups, unsorted bool
	var oName string
	var oMode uint32
	first := true
	var candidates []string
	for len(buf) > 0 {
		sp := bytes.IndexByte(buf, ' ')
		if sp <= 0 {
			r.report(oid, "badTree", "cannot be parsed as a tree")
			return
		}
		modeStr := buf[:sp]
		var mode uint32
		for _, c := range modeStr {
			if c < '0' || c > '7' {
				r.report(oid, "badTree", "cannot be parsed as a tree")
				return
			}
			mode = mode<<3 | uint32(c-'0')
		}
		rest := buf[sp+1:]
		nul := bytes.IndexByte(rest, 0)
		if nul < 0 || len(rest) < nul+1+20 {
			r.report(oid, "badTree", "cannot be parsed as a tree")
			return
		}
		name := string(rest[:nul])
		var entry plumbing.Hash
		copy(entry[:], rest[nul+1:nul+21])
		buf = rest[nul+21:]

		hasNull = hasNull || entry.IsZero()
		hasFull = hasFull || strings.Contains(name, "/")
		hasEmpty = hasEmpty || name == ""
		hasDot = hasDot || name == "."
		hasDotdot = hasDotdot || name == ".."
		hasDotgit = hasDotgit || gitpath.IsHFSDotGit(name) || gitpath.IsNTFSDotGit(name)
		hasZeroPad = hasZeroPad || modeStr[0] == '0'
		isLink := mode&modeFmt == modeLink

		if gitpath.IsHFSDotGitmodules(name) || gitpath.IsNTFSDotGitmodules(name) {
			if !isLink {
				r.gitmodules[entry] = true
			} else {
				r.report(oid, "gitmodulesSymlink", ".gitmodules is a symbolic link")
			}
		}
		if gitpath.IsHFSDotGitattributes(name) || gitpath.IsNTFSDotGitattributes(name) {
			if !isLink {
				r.gitattributes[entry] = true
			} else {
				r.report(oid, "gitattributesSymlink", ".gitattributes is a symlink")
			}
		}
		for i := strings.IndexByte(name, '\\'); i >= 0; {
			after := name[i+1:]
			hasDotgit = hasDotgit || gitpath.IsNTFSDotGit(after)
			if gitpath.IsNTFSDotGitmodules(after) {
				if !isLink {
					r.gitmodules[entry] = true
				} else {
					r.report(oid, "gitmodulesSymlink", ".gitmodules is a symbolic link")
				}
			}
			j := strings.IndexByte(after, '\\')
			if j < 0 {
				break
			}
			i += 1 + j
		}

		switch mode {
		case 0o100755, 0o100644, modeLink, modeDir, modeGitlink:
		default:
			hasBadModes = true // 100664 too: receive-pack's fsck is strict
		}
		if !first {
			switch verifyOrdered(oMode, oName, mode, name, &candidates) {
			case treeUnordered:
				unsorted = true
			case treeHasDups:
				hasDups = true
			}
		}
		first = false
		oMode, oName = mode, name
	}
	if hasNull {
		r.report(oid, "nullSha1", "contains entries pointing to null sha1")
	}
	if hasFull {
		r.report(oid, "fullPathname", "contains full pathnames")
	}
	if hasEmpty {
		r.report(oid, "emptyName", "contains empty pathname")
	}
	if hasDot {
		r.report(oid, "hasDot", "contains '.'")
	}
	if hasDotdot {
		r.report(oid, "hasDotdot", "contains '..'")
	}
	if hasDotgit {
		r.report(oid, "hasDotgit", "contains '.git'")
	}
	if hasZeroPad {
		r.report(oid, "zeroPaddedFilemode", "contains zero-padded file modes")
	}
	if hasBadModes {
		r.report(oid, "badFilemode", "contains bad file modes")
	}
	if hasDups {
		r.report(oid, "duplicateEntries", "contains duplicate file entries")
	}
	if unsorted {
		r.report(oid, "treeNotSorted", "not properly sorted")
	}
}

const (
	treeOrdered = iota
	treeUnordered
	treeHasDups
)

func isLessThanSlash(c byte) bool { return c != 0 && c < '/' }

// verifyOrdered is fsck.c's verify_ordered: entries sort by name with a
// directory's name taken as ending in '/', and a file and a directory of
// the same name are duplicates even when other names sort between them
// ("foo", "foo.bar", "foo/"): those files wait on a stack.
func verifyOrdered(mode1 uint32, name1 string, mode2 uint32, name2 string, candidates *[]string) int {
	n := min(len(name1), len(name2))
	if c := strings.Compare(name1[:n], name2[:n]); c < 0 {
		return treeOrdered
	} else if c > 0 {
		return treeUnordered
	}
	c1, c2 := at(name1, n), at(name2, n)
	if c1 == 0 && c2 == 0 {
		return treeHasDups
	}
	if c1 == 0 && mode1&modeFmt == modeDir {
		c1 = '/'
	}
	if c2 == 0 && mode2&modeFmt == modeDir {
		c2 = '/'
	}
	if c1 == 0 && isLessThanSlash(c2) {
		*candidates = append(*candidates, name1)
	} else if c2 == '/' && isLessThanSlash(c1) {
		for len(*candidates) > 0 {
			f := (*candidates)[len(*candidates)-1]
			*candidates = (*candidates)[:len(*candidates)-1]
			p, ok := strings.CutPrefix(name2, f)
			if !ok {
				continue
			}
			if p == "" {
				return treeHasDups
			}
			if isLessThanSlash(p[0]) {
				*candidates = append(*candidates, f)
				break
			}
		}
	}
	if c1 < c2 {
		return treeOrdered
	}
	return treeUnordered
}

// at is s[i], or 0 past the end (git reads NUL-terminated names).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// verifyHeaders is fsck.c's verify_headers.
func (r *run) verifyHeaders(oid plumbing.Hash, buf []byte) bool {
	for i, c := range buf {
		if c == 0 {
			r.report(oid, "nulInHeader", fmt.Sprintf("unterminated header: NUL at offset %d", i))
			return false
		}
		if c == '\n' && i+1 < len(buf) && buf[i+1] == '\n' {
			return true
		}
	}
	if len(buf) > 0 && buf[len(buf)-1] == '\n' {
		return true
	}
	r.report(oid, "unterminatedHeader", "unterminated header")
	return false
}

// ident is fsck_ident on one "Name <email> <unix> <tz>" line; it returns
// the rest of the buffer after the line.
func (r *run) ident(oid plumbing.Hash, buf []byte) ([]byte, bool) {
	line := buf
	rest := []byte(nil)
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		line, rest = buf[:i+1], buf[i+1:]
	}
	p := string(line) // ends in '\n' when the line is terminated
	fail := func(id, what string) ([]byte, bool) {
		r.report(oid, id, "invalid author/committer line - "+what)
		return rest, !r.failed
	}
	if strings.HasPrefix(p, "<") {
		return fail("missingNameBeforeEmail", "missing space before email")
	}
	i := strings.IndexAny(p, "<>\n")
	if i < 0 || p[i] == '\n' {
		return fail("missingEmail", "missing email")
	}
	if p[i] == '>' {
		return fail("badName", "bad name")
	}
	if i == 0 || p[i-1] != ' ' {
		return fail("missingSpaceBeforeEmail", "missing space before email")
	}
	p = p[i+1:]
	i = strings.IndexAny(p, "<>\n")
	if i < 0 || p[i] != '>' {
		return fail("badEmail", "bad email")
	}
	p = p[i+1:]
	if at(p, 0) != ' ' {
		return fail("missingSpaceBeforeDate", "missing space before date")
	}
	p = strings.TrimLeft(p[1:], " \t")
	if c := at(p, 0); c < '0' || c > '9' {
		return fail("badDate", "bad date")
	}
	if p[0] == '0' && at(p, 1) != ' ' {
		return fail("zeroPaddedDate", "zero-padded date")
	}
	end := 0
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	if _, err := strconv.ParseUint(p[:end], 10, 64); err != nil {
		return fail("badDateOverflow", "date causes integer overflow")
	}
	if at(p, end) != ' ' {
		return fail("badDate", "bad date")
	}
	p = p[end+1:]
	tzOK := len(p) >= 6 && (p[0] == '+' || p[0] == '-') && p[5] == '\n'
	for k := 1; tzOK && k <= 4; k++ {
		tzOK = p[k] >= '0' && p[k] <= '9'
	}
	if !tzOK {
		return fail("badTimezone", "bad time zone")
	}
	return rest, true
}

// hashLine parses "<40 hex>\n" at the start of buf.
func hashLine(buf []byte) ([]byte, bool) {
	if len(buf) < 41 || buf[40] != '\n' || !plumbing.IsHash(string(buf[:40])) {
		return buf, false
	}
	return buf[41:], true
}

// commit is fsck_commit.
func (r *run) commit(oid plumbing.Hash, buf []byte) {
	all := buf
	if !r.verifyHeaders(oid, buf) {
		return
	}
	var ok bool
	if buf, ok = bytes.CutPrefix(buf, []byte("tree ")); !ok {
		r.report(oid, "missingTree", "invalid format - expected 'tree' line")
		return
	}
	if buf, ok = hashLine(buf); !ok {
		r.report(oid, "badTreeSha1", "invalid 'tree' line format - bad sha1")
		return
	}
	for {
		var rest []byte
		if rest, ok = bytes.CutPrefix(buf, []byte("parent ")); !ok {
			break
		}
		if buf, ok = hashLine(rest); !ok {
			r.report(oid, "badParentSha1", "invalid 'parent' line format - bad sha1")
			return
		}
	}
	authors := 0
	for {
		rest, ok := bytes.CutPrefix(buf, []byte("author "))
		if !ok {
			break
		}
		authors++
		if buf, ok = r.ident(oid, rest); !ok || r.failed {
			return
		}
	}
	if authors < 1 {
		r.report(oid, "missingAuthor", "invalid format - expected 'author' line")
	} else if authors > 1 {
		r.report(oid, "multipleAuthors", "invalid format - multiple 'author' lines")
	}
	if r.failed {
		return
	}
	rest, ok := bytes.CutPrefix(buf, []byte("committer "))
	if !ok {
		r.report(oid, "missingCommitter", "invalid format - expected 'committer' line")
		return
	}
	if _, ok := r.ident(oid, rest); !ok || r.failed {
		return
	}
	if bytes.IndexByte(all, 0) >= 0 {
		r.report(oid, "nulInCommit", "NUL byte in the commit object body")
	}
}

// tag is fsck_tag_standalone.
func (r *run) tag(oid plumbing.Hash, buf []byte) {
	if !r.verifyHeaders(oid, buf) {
		return
	}
	var ok bool
	if buf, ok = bytes.CutPrefix(buf, []byte("object ")); !ok {
		r.report(oid, "missingObject", "invalid format - expected 'object' line")
		return
	}
	if buf, ok = hashLine(buf); !ok {
		r.report(oid, "badObjectSha1", "invalid 'object' line format - bad sha1")
		return
	}
	if buf, ok = bytes.CutPrefix(buf, []byte("type ")); !ok {
		r.report(oid, "missingTypeEntry", "invalid format - expected 'type' line")
		return
	}
	eol := bytes.IndexByte(buf, '\n')
	if eol < 0 {
		r.report(oid, "missingType", "invalid format - unexpected end after 'type' line")
		return
	}
	if _, err := plumbing.ParseObjectType(string(buf[:eol])); err != nil {
		r.report(oid, "badType", "invalid 'type' value")
		if r.failed {
			return
		}
	}
	buf = buf[eol+1:]
	if buf, ok = bytes.CutPrefix(buf, []byte("tag ")); !ok {
		r.report(oid, "missingTagEntry", "invalid format - expected 'tag' line")
		return
	}
	eol = bytes.IndexByte(buf, '\n')
	if eol < 0 {
		r.report(oid, "missingTag", "invalid format - unexpected end after 'type' line")
		return
	}
	if plumbing.ReferenceName("refs/tags/"+string(buf[:eol])).Validate() != nil {
		r.report(oid, "badTagName", "invalid 'tag' name: "+string(buf[:eol]))
		if r.failed {
			return
		}
	}
	buf = buf[eol+1:]
	rest, ok := bytes.CutPrefix(buf, []byte("tagger "))
	if !ok {
		r.report(oid, "missingTaggerEntry", "invalid format - expected 'tagger' line")
		if r.failed {
			return
		}
	} else if buf, ok = r.ident(oid, rest); !ok || r.failed {
		return
	}
	if len(buf) > 0 && buf[0] != '\n' {
		r.report(oid, "extraHeaderEntry", "invalid format - extra header(s) after 'tagger'")
	}
}

// gitattributesBlob is fsck_blob's .gitattributes check: no line git's
// attribute parser would refuse for its length.
func (r *run) gitattributesBlob(oid plumbing.Hash, buf []byte) {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i] // git reads it as a C string
	}
	for len(buf) > 0 {
		eol := bytes.IndexByte(buf, '\n')
		line := buf
		if eol >= 0 {
			line, buf = buf[:eol], buf[eol+1:]
		} else {
			buf = nil
		}
		if len(line) >= attrMaxLineLength {
			r.report(oid, "gitattributesLineLength", ".gitattributes has too long lines to parse")
			return
		}
	}
}

// gitmodulesBlob is fsck_gitmodules_fn over a .gitmodules blob: the
// submodule names, URLs, paths and update commands git refuses to act on
// (CVE-2018-11235, CVE-2018-17456, CVE-2020-11008, CVE-2023-29007 and
// kin). The blob is read with git's own config grammar (gitconfig.Parse),
// not go-git's: a file one parser rejects and the other reads must not
// slip past the checks.
func (r *run) gitmodulesBlob(oid plumbing.Hash, buf []byte) {
	if rest, ok := bytes.CutPrefix(buf, []byte("\xef\xbb\xbf")); ok {
		// git's blob reader compares the BOM with signed chars, so fsck
		// fails to parse such a .gitmodules (a warning) and checks none of
		// it, while git reads the same file from a checkout with the BOM
		// skipped. We say what git says, and check it all the same.
		r.report(oid, "gitmodulesParse", "could not parse gitmodules blob")
		buf = rest
	}
	err := gitconfig.Parse(buf, func(key string, value *string) {
		rest, ok := strings.CutPrefix(key, "submodule.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			return // no subsection: not about a submodule
		}
		name, k := rest[:dot], rest[dot+1:]
		if !validSubmoduleName(name) {
			r.report(oid, "gitmodulesName", "disallowed submodule name: "+name)
		}
		if value == nil {
			return
		}
		switch k {
		case "url":
			if !validSubmoduleURL(*value) {
				r.report(oid, "gitmodulesUrl", "disallowed submodule url: "+*value)
			}
		case "path":
			if strings.HasPrefix(*value, "-") {
				r.report(oid, "gitmodulesPath", "disallowed submodule path: "+*value)
			}
		case "update":
			if strings.HasPrefix(*value, "!") {
				r.report(oid, "gitmodulesUpdate", "disallowed submodule update setting: "+*value)
			}
		}
	})
	if err != nil {
		r.report(oid, "gitmodulesParse", "could not parse gitmodules blob")
	}
}

// validSubmoduleName is check_submodule_name: not empty, no ".."
// component ('/' and '\\' both separate).
func validSubmoduleName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if c == ".." {
			return false
		}
	}
	return true
}

// validSubmoduleURL is check_submodule_url: no URL that looks like an
// option; a relative or git:// URL must not decode to a newline nor climb
// out ("../" then ':' or '/', CVE-2020-11008); an http(s)/ftp(s) URL (or
// "http::..." helper form) must have a host and no encoded newline.
func validSubmoduleURL(u string) bool {
	if strings.HasPrefix(u, "-") {
		return false
	}
	isSep := func(c byte) bool { return c == '/' || c == '\\' }
	dotSlash := func(s string) bool { return len(s) >= 2 && s[0] == '.' && isSep(s[1]) }
	dotDotSlash := func(s string) bool { return len(s) >= 3 && s[0] == '.' && s[1] == '.' && isSep(s[2]) }
	relative := strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../")
	if relative || strings.HasPrefix(u, "git://") {
		if strings.Contains(urlDecode(u), "\n") {
			return false
		}
		rest, n := u, 0
		for {
			if dotDotSlash(rest) {
				n++
				rest = rest[3:]
				continue
			}
			if dotSlash(rest) {
				rest = rest[2:]
				continue
			}
			break
		}
		return !(n > 0 && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "/")))
	}
	curl := ""
	for _, p := range []string{"http::", "https::", "ftp::", "ftps::"} {
		if r, ok := strings.CutPrefix(u, p); ok {
			curl = r
		}
	}
	for _, p := range []string{"http://", "https://", "ftp://", "ftps://"} {
		if strings.HasPrefix(u, p) {
			curl = u
		}
	}
	if curl == "" {
		return true
	}
	_, rest, ok := strings.Cut(curl, "://")
	if !ok {
		return false
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host := authority
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.HasSuffix(authority, "]") {
		host = authority[:i]
	}
	return host != "" && !strings.Contains(urlDecode(curl), "\n")
}

// urlDecode is url_decode_mem: %XX decoded, everything else kept.
func urlDecode(s string) string {
	unhex := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return int(c - '0')
		case c >= 'a' && c <= 'f':
			return int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			return int(c-'A') + 10
		}
		return -1
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if h, l := unhex(s[i+1]), unhex(s[i+2]); h >= 0 && l >= 0 {
				b.WriteByte(byte(h<<4 | l))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
