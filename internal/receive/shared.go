package receive

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Shared repositories (core.sharedRepository) are written by several
// users, typically on a network filesystem: what a push creates must stay
// writable for the group (or everybody), as git's adjust_shared_perm
// makes it, or the next user's push fails.

// Values of core.sharedRepository as git_config_perm returns them: 0 is the
// umask; positive are bits added (group 0660, everybody 0664); negative is
// an exact mode.
const (
	permUmask     = 0
	permGroup     = 0o660
	permEverybody = 0o664
)

func parseSharedRepository(v string) int {
	switch strings.ToLower(v) {
	case "umask":
		return permUmask
	case "", "group":
		return permGroup
	case "all", "world", "everybody":
		return permEverybody
	}
	n, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		if gitBool(v, false) {
			return permGroup
		}
		return permUmask
	}
	switch n {
	case 0:
		return permUmask
	case 1:
		return permGroup
	case 2:
		return permEverybody
	}
	if n&0o600 != 0o600 {
		return permUmask // git dies on this value; the umask is the safe reading
	}
	return -int(n & 0o666)
}

// adjustSharedPerm is git's adjust_shared_perm (path.c).
func adjustSharedPerm(path string, shared int) error {
	if shared == permUmask {
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	old := uint32(fi.Mode().Perm())
	tweak := uint32(shared)
	if shared < 0 {
		tweak = uint32(-shared)
	}
	if old&0o200 == 0 {
		tweak &^= 0o222
	}
	if old&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	mode := old | tweak
	if shared < 0 {
		mode = tweak
	}
	want := os.FileMode(mode)
	if fi.IsDir() {
		want = os.FileMode(mode|(mode&0o444)>>2) | os.ModeSetgid
	}
	if fi.Mode()&(os.ModePerm|os.ModeSetgid) == want {
		return nil
	}
	return os.Chmod(path, want)
}

// mkdirShared creates dir and its missing parents below root, adjusting
// each one it created.
func mkdirShared(dir, root string, shared int) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil // the common case: one stat
	}
	var created []string
	for d := dir; d != root && len(d) > len(root); d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := adjustSharedPerm(created[i], shared); err != nil {
			return err
		}
	}
	return nil
}
