package toolbox

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tgp-go/tgp/registry"
)

//go:embed scaffold/tgp-env.d.ts scaffold/tsconfig.json
var scaffoldFiles embed.FS

// Scaffold creates tools/ and meta.json in the root if they are missing
// (`tgp init`), with the editor files (the sandbox's globals and @tgp/std
// typed, and a tsconfig that checks tools/ with them), and returns what it
// created, relative to the root.
func (b *Box) Scaffold() ([]string, error) {
	var created []string
	if _, err := b.fs.Stat(registry.ToolsDir); errors.Is(err, fs.ErrNotExist) {
		if err := b.fs.MkdirAll(registry.ToolsDir, 0o755); err != nil {
			return nil, err
		}
		created = append(created, registry.ToolsDir+"/")
	} else if err != nil {
		return nil, err
	}
	if _, err := b.fs.Stat(registry.FileName); errors.Is(err, fs.ErrNotExist) {
		if err := b.fs.WriteFile(registry.FileName, b.cat.marshal(), 0o644); err != nil {
			return nil, err
		}
		created = append(created, registry.FileName)
	} else if err != nil {
		return nil, err
	}
	// Editor support (.d.ts files are not tools).
	for dst, src := range map[string]string{"tools/tgp-env.d.ts": "scaffold/tgp-env.d.ts", "tsconfig.json": "scaffold/tsconfig.json"} {
		if _, err := b.fs.Stat(dst); errors.Is(err, fs.ErrNotExist) {
			data, err := scaffoldFiles.ReadFile(src)
			if err != nil {
				return nil, err
			}
			if err := b.fs.WriteFile(dst, data, 0o644); err != nil {
				return nil, err
			}
			created = append(created, dst)
		} else if err != nil {
			return nil, err
		}
	}
	sort.Strings(created)
	b.excludeLocally("/tsconfig.json", "/tools/tgp-env.d.ts")
	return created, nil
}

// excludeLocally lists editor files in .git/info/exclude: they serve this
// checkout and stay out of git_status and of the shared toolbox unless
// someone adds them on purpose.
func (b *Box) excludeLocally(patterns ...string) {
	if b.fs.InMemory() || b.fs.Root() == "" {
		return
	}
	gitDir := filepath.Join(b.fs.Root(), ".git")
	if info, err := os.Stat(gitDir); err != nil || !info.IsDir() {
		return
	}
	p := filepath.Join(gitDir, "info", "exclude")
	data, _ := os.ReadFile(p)
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	for _, pat := range patterns {
		if !have[pat] {
			add.WriteString(pat + "\n")
		}
	}
	if add.Len() == 0 {
		return
	}
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		data = append(data, '\n')
	}
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, append(data, add.String()...), 0o644)
}
