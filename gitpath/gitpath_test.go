package gitpath

import (
	"errors"
	"testing"
)

// Every case below is what git 2.39 does with core.protectHFS and
// core.protectNTFS on (checked by hand with `git update-index --cacheinfo`
// and `git fsck --strict`), except the rows marked beyond git.
var verifyCases = []struct {
	path    string
	symlink bool
	ok      bool
	reason  string
}{
	{"a", false, true, ""},
	{"tools/x.ts", false, true, ""},
	{"...", false, true, ""},
	{".gitignore", false, true, ""},
	{".github/workflows/ci.yml", false, true, ""},
	{".gitmodules", false, true, ""},
	{"git", false, true, ""},
	{"git~2/x", false, true, ""},
	{".gitx/y", false, true, ""},
	{"x.git/y", false, true, ""},
	{".g\xffit/x", false, true, ""},
	{"a\\b", false, true, ""},
	{"gitmod~5", true, true, ""},
	{".gitmodulesx", true, true, ""},
	{"a b/c\td\ne", false, true, ""},
	{"caf\u00e9/\u200c", false, true, ""},
	{"a\\.gitattributes/x", false, true, ""},
	{"x/.gitattributes", false, true, ""},
	{".gitattributes", true, true, ""}, // fsck only warns (gitattributesSymlink)

	{"", false, false, ReasonEmpty},
	{"a\x00b", false, false, ReasonNUL},
	{"/a", false, false, ReasonLeadingSlash},
	{"a/", false, false, ReasonTrailingSlash},
	{"a//b", false, false, ReasonEmptyComponent},
	{".", false, false, ReasonDot},
	{"./a", false, false, ReasonDot},
	{"a/.", false, false, ReasonDot},
	{"..", false, false, ReasonDotDot},
	{"a/../b", false, false, ReasonDotDot},
	{".git", false, false, ReasonDotGit},
	{".git/config", false, false, ReasonDotGit},
	{".GIT/config", false, false, ReasonDotGit},
	{"sub/.Git/hooks/pre-commit", false, false, ReasonDotGit},
	{".git\u200c/config", false, false, ReasonHFSDotGit},
	{"\u200d.g\u200ei\u200ft\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c\u206d\u206e\u206f\ufeff/config", false, false, ReasonHFSDotGit},
	{".git\xff/x", false, false, ReasonHFSDotGit},
	{"git~1/config", false, false, ReasonNTFSDotGit},
	{"GIT~1", false, false, ReasonNTFSDotGit},
	{".git./config", false, false, ReasonNTFSDotGit},
	{".git . ./config", false, false, ReasonNTFSDotGit},
	{".git::$INDEX_ALLOCATION/config", false, false, ReasonNTFSDotGit},
	{"git~1:stream", false, false, ReasonNTFSDotGit},
	{"a\\.git\\config", false, false, ReasonNTFSDotGit},
	{"x/a\\git~1", false, false, ReasonNTFSDotGit},
	{"\\.git/config", false, false, ReasonNTFSDotGit}, // beyond git's verify_path; git fsck flags it
	{".gitmodules", true, false, ReasonGitmodulesSymlnk},
	{"sub/.GitModules", true, false, ReasonGitmodulesSymlnk},
	{".gitmodules\u200c", true, false, ReasonGitmodulesSymlnk},
	{".gitmodules . ", true, false, ReasonGitmodulesSymlnk},
	{"gitmod~1", true, false, ReasonGitmodulesSymlnk},
	{"GITMOD~4", true, false, ReasonGitmodulesSymlnk},
	{"gi7eba~9", true, false, ReasonGitmodulesSymlnk},
	{"GI7EB~12", true, false, ReasonGitmodulesSymlnk},
	{"a\\.gitmodules", true, false, ReasonGitmodulesSymlnk},
	{".gitmodules/x", false, false, ReasonSpecialDir}, // fsck: gitmodulesBlob
	{"a/GITMOD~1/x", false, false, ReasonSpecialDir},
	{"~1234567/x", false, false, ReasonSpecialDir},
	{"a\\.gitmodules/x", false, false, ReasonSpecialDir},
	{".gitattributes/x", false, false, ReasonSpecialDir}, // fsck: gitattributesBlob
	{".gitattributes\u200c/x", false, false, ReasonSpecialDir},
	{"gitatt~1/x", false, false, ReasonSpecialDir},
	{"gi7d29~1:y/x", false, false, ReasonSpecialDir},
}

func TestVerifyTable(t *testing.T) {
	for _, c := range verifyCases {
		err := Verify(c.path, c.symlink)
		if c.ok {
			if err != nil {
				t.Errorf("Verify(%q, %v) = %v, want nil", c.path, c.symlink, err)
			}
			continue
		}
		var ipe *InvalidPathError
		if !errors.As(err, &ipe) {
			t.Errorf("Verify(%q, %v) = %v, want *InvalidPathError", c.path, c.symlink, err)
			continue
		}
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Verify(%q): errors.Is(err, ErrInvalidPath) is false", c.path)
		}
		if want := "invalid path '" + c.path + "'"; err.Error() != want {
			t.Errorf("Verify(%q).Error() = %q, want %q", c.path, err.Error(), want)
		}
		if ipe.Path != c.path || ipe.Reason != c.reason {
			t.Errorf("Verify(%q, %v): path %q reason %q, want reason %q", c.path, c.symlink, ipe.Path, ipe.Reason, c.reason)
		}
	}
}

func TestVerifyDir(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"tools", true}, {"a/b", true}, {".github", true}, {"x/.gitattributes.d", true},
		{".gitmodules", false}, {"a/GITMOD~1", false}, {".gitattributes", false}, {"x/.gitattributes\u200c", false},
		{".GIT", false}, {"a//b", false}, {"", false}, {"a/..", false},
	} {
		err := VerifyDir(c.path)
		if (err == nil) != c.ok {
			t.Errorf("VerifyDir(%q) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidPath) {
			t.Errorf("VerifyDir(%q) = %v: not ErrInvalidPath", c.path, err)
		}
	}
}
