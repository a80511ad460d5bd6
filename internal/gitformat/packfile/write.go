package packfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFiles puts a pack into gitdir's objects/pack, the way git's
// index-pack finishes one: each file written under a temporary name,
// read-only, and renamed into place, the .idx before the .pack (a reader
// that lists either finds the other). perm adjusts each file and is
// optional. A pack already there is left as it is.
func WriteFiles(gitdir string, p *Packed, perm func(string) error) error {
	dir := filepath.Join(gitdir, "objects", "pack")
	base := filepath.Join(dir, "pack-"+p.Sum.String())
	if _, err := os.Stat(base + ".pack"); err == nil {
		return nil // the same objects, already there
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pack in %s: %w", dir, err)
	}
	put := func(ext string, data []byte) error {
		f, err := os.CreateTemp(dir, "tmp_pack_")
		if err != nil {
			return err
		}
		tmp := f.Name()
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp, 0o444)
		}
		if err == nil && perm != nil {
			err = perm(tmp)
		}
		if err == nil {
			err = os.Rename(tmp, base+ext)
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", base+ext, err)
		}
		return nil
	}
	if err := put(".idx", p.Idx); err != nil {
		return err
	}
	return put(".pack", p.Pack)
}
