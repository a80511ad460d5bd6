// Package atomicfile replaces a file all at once: a reader sees the old
// content or the new, never half of it, and a crash leaves no torn file.
// It is the one temp-then-rename writer outside gitbackend's push path
// (whose writers keep their own until that path is restructured, #45).
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data through a temporary file in its directory
// (synced, then renamed over path). perm is the new file's mode; 0 keeps
// the mode of the file it replaces (0644 for a new one).
func Write(path string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
		if info, err := os.Stat(path); err == nil {
			perm = info.Mode().Perm()
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	return nil
}
