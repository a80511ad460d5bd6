package gitpath

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pathCase is one path handed to git: as a file or as a symbolic link.
type pathCase struct {
	path    string
	symlink bool
}

// oracle is a throw-away repository in which git judges paths.
type oracle struct {
	t   testing.TB
	dir string
}

func newOracle(t *testing.T) *oracle { return newOracleTB(t) }

func newOracleF(f *testing.F) *oracle { return newOracleTB(f) }

func newOracleTB(t testing.TB) *oracle {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed: it is the oracle")
	}
	dir := t.TempDir()
	o := &oracle{t: t, dir: dir}
	if out, err := o.git(nil, "init", "-q", dir); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return o
}

func (o *oracle) git(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-c", "core.protectHFS=true", "-c", "core.protectNTFS=true"}, args...)...)
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+o.dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return cmd.CombinedOutput()
}

// writeObject stores a loose object the way git does and returns its id;
// writing trees directly is what lets names git would refuse reach fsck.
func (o *oracle) writeObject(kind string, body []byte) string {
	raw := append([]byte(fmt.Sprintf("%s %d\x00", kind, len(body))), body...)
	sum := sha1.Sum(raw)
	id := hex.EncodeToString(sum[:])
	p := filepath.Join(o.dir, ".git", "objects", id[:2], id[2:])
	if _, err := os.Stat(p); err == nil {
		return id
	}
	var buf bytes.Buffer
	// Stored blocks: git reads any zlib stream, and compressing is what
	// makes this slow under -race.
	zw, _ := zlib.NewWriterLevel(&buf, zlib.NoCompression)
	zw.Write(raw)
	zw.Close()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		o.t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o444); err != nil {
		o.t.Fatal(err)
	}
	return id
}

func treeEntry(mode, name, id string) []byte {
	raw, _ := hex.DecodeString(id)
	return append([]byte(mode+" "+name+"\x00"), raw...)
}

// updateIndexRefuses runs git's verify_path on each case through
// `git update-index --add --cacheinfo`, each into its own empty index.
func (o *oracle) updateIndexRefuses(cases []pathCase) []bool {
	blob := o.writeObject("blob", []byte("x\n"))
	out := make([]bool, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			idx := filepath.Join(o.dir, fmt.Sprintf("index-%d", w))
			for i := range next {
				os.Remove(idx)
				mode := "100644"
				if cases[i].symlink {
					mode = "120000"
				}
				cmd := exec.Command("git", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true",
					"update-index", "--add", "--cacheinfo", mode+","+blob+","+cases[i].path)
				cmd.Dir = o.dir
				cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx, "GIT_CONFIG_NOSYSTEM=1", "HOME="+o.dir)
				msg, err := cmd.CombinedOutput()
				if err != nil && !strings.Contains(string(msg), "Invalid path") {
					o.t.Errorf("update-index %q: %v\n%s", cases[i].path, err, msg)
				}
				out[i] = err != nil
			}
		}(w)
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// fsckFlags builds, for each case, a chain of trees holding that one path
// (a blob unique to the case at the bottom, so no tree is shared between
// cases) and reports which chains `git fsck --strict` finds an error in.
func (o *oracle) fsckFlags(cases []pathCase) []bool {
	owner := map[string]int{}
	for i, c := range cases {
		comps := strings.Split(c.path, "/")
		mode, content := "100644", fmt.Sprintf("# case %d\n", i)
		if c.symlink {
			mode, content = "120000", fmt.Sprintf("target-%d", i)
		}
		id := o.writeObject("blob", []byte(content))
		owner[id] = i
		for k := len(comps) - 1; k >= 0; k-- {
			id = o.writeObject("tree", treeEntry(mode, comps[k], id))
			owner[id] = i
			mode = "40000"
		}
	}
	msg, _ := o.git(nil, "fsck", "--strict", "--no-dangling", "--no-progress")
	out := make([]bool, len(cases))
	sc := bufio.NewScanner(bytes.NewReader(msg))
	for sc.Scan() {
		line := sc.Text()
		var kind, id string
		if _, err := fmt.Sscanf(line, "error in %s %s", &kind, &id); err != nil {
			continue
		}
		id = strings.TrimSuffix(id, ":")
		i, ok := owner[id]
		if !ok {
			o.t.Errorf("fsck blames an object no case owns: %s", line)
			continue
		}
		out[i] = true
	}
	return out
}

var atoms = []string{
	".git", ".GIT", ".Git", "git~1", "GIT~1", "git~2", "git", ".g", "it",
	".gitmodules", ".GITMODULES", "gitmod~1", "gitmod~5", "gi7eba~1", "GI7EB~12", "~1234567", "modules",
	".gitattributes", "gitatt~1", "gi7d29~1", ".gitignore", ".mailmap",
	".", "..", "...", "a", "b", "x.txt", "\\", ":", "::$INDEX_ALLOCATION", " ", "~", "1", "9",
	"\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202e", "\u206a", "\u206f", "\ufeff", "\u200b", "\u00e9",
	"\xff", "\x80", "\xc0\xae", "\xc1\x81", "\xe0\x80\xae", "\xed\xa0\x80", "\xef\xbf\xbe", "\xf4\x90\x80\x80", "\xf0\x9f\x98\x80",
	"g", "i", "t", "G", "I", "T", "\t", "\n", "-",
}

// genCases builds n random paths from atoms that sit near git's rules.
func genCases(seed int64, n int) []pathCase {
	r := rand.New(rand.NewSource(seed))
	out := make([]pathCase, 0, n)
	for len(out) < n {
		var comps []string
		for k := 1 + r.Intn(3); k > 0; k-- {
			var b strings.Builder
			for a := r.Intn(4); a >= 0; a-- {
				b.WriteString(atoms[r.Intn(len(atoms))])
			}
			comps = append(comps, b.String())
		}
		sep := "/"
		if r.Intn(8) == 0 {
			sep = "\\"
		}
		p := strings.Join(comps, sep)
		switch r.Intn(20) {
		case 0:
			p = "/" + p
		case 1:
			p += "/"
		case 2:
			p = strings.Replace(p, "/", "//", 1)
		}
		out = append(out, pathCase{path: p, symlink: r.Intn(3) == 0})
	}
	return out
}

// TestVerifyMatchesGit: on table and generated paths, Verify refuses with
// one of git's own rules exactly when `git update-index` refuses, every
// tree `git fsck --strict` flags holds a path Verify refuses, and every
// path Verify accepts makes a tree fsck accepts.
func TestVerifyMatchesGit(t *testing.T) {
	o := newOracle(t)
	var cases []pathCase
	for _, c := range verifyCases {
		if c.path != "" && !strings.Contains(c.path, "\x00") {
			cases = append(cases, pathCase{c.path, c.symlink})
		}
	}
	n := 1000
	if raceEnabled {
		n = 150
	}
	if v, err := strconv.Atoi(os.Getenv("TGP_GITPATH_CASES")); err == nil {
		n = v // a longer run: TGP_GITPATH_CASES=20000
	}
	seed := int64(13)
	if v, err := strconv.ParseInt(os.Getenv("TGP_GITPATH_SEED"), 10, 64); err == nil {
		seed = v // other paths: any other seed
	}
	cases = append(cases, genCases(seed, n)...)
	t0 := time.Now()
	gitRefuses := o.updateIndexRefuses(cases)
	t1 := time.Now()
	fsckRefuses := o.fsckFlags(cases)
	t.Logf("update-index %v, fsck %v", t1.Sub(t0), time.Since(t1))
	var nGit, nFsck, nVerify int
	for i, c := range cases {
		own := gitReason(c.path, c.symlink)
		err := Verify(c.path, c.symlink)
		if gitRefuses[i] {
			nGit++
		}
		if fsckRefuses[i] {
			nFsck++
		}
		if err != nil {
			nVerify++
		}
		if !c.symlink && (VerifyDir(c.path) == nil) != (Verify(c.path+"/x", false) == nil) {
			t.Errorf("%q: VerifyDir says %v, Verify of a file below it says %v", c.path, VerifyDir(c.path), Verify(c.path+"/x", false))
		}
		if (VerifyCheckout(c.path, c.symlink) != nil) != gitRefuses[i] {
			t.Errorf("%q symlink=%v: VerifyCheckout says %v, git update-index refuses=%v", c.path, c.symlink, VerifyCheckout(c.path, c.symlink), gitRefuses[i])
		}
		if (own != "") != gitRefuses[i] {
			t.Errorf("%q symlink=%v: verify_path in Go says %q, git update-index refuses=%v", c.path, c.symlink, own, gitRefuses[i])
		}
		if fsckRefuses[i] && err == nil {
			t.Errorf("%q symlink=%v: git fsck --strict flags it, Verify accepts", c.path, c.symlink)
		}
		if err != nil && !gitRefuses[i] && !fsckRefuses[i] {
			t.Errorf("%q symlink=%v: Verify refuses (%v), git accepts it everywhere", c.path, c.symlink, err)
		}
	}
	t.Logf("%d paths: update-index refuses %d, fsck --strict flags %d, Verify refuses %d", len(cases), nGit, nFsck, nVerify)
	if nGit == 0 || nVerify == len(cases) {
		t.Fatalf("generator is degenerate: git refuses %d, Verify refuses %d of %d", nGit, nVerify, len(cases))
	}
}
