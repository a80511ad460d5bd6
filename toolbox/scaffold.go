package toolbox

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	env, err := b.EnvTypes()
	if err != nil {
		return nil, err
	}
	tsconfig, err := scaffoldFiles.ReadFile("scaffold/tsconfig.json")
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		dst  string
		data []byte
	}{{envTypesPath, env}, {"tsconfig.json", tsconfig}} {
		have, err := b.fs.ReadFile(f.dst)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		case f.dst == envTypesPath && !bytes.Equal(have, f.data) && bytes.HasPrefix(have, envTypesHeader(f.data)):
			// Ours, from before the host's functions changed: written
			// again. A file someone wrote by hand is left alone.
		default:
			continue
		}
		if err := b.fs.WriteFile(f.dst, f.data, 0o644); err != nil {
			return nil, err
		}
		created = append(created, f.dst)
	}
	sort.Strings(created)
	b.excludeLocally("/tsconfig.json", "/tools/tgp-env.d.ts")
	return created, nil
}

const envTypesPath = "tools/tgp-env.d.ts"

// EnvTypes is tools/tgp-env.d.ts: the sandbox's globals and @tgp/std,
// with the host's functions (Config.SandboxDecls) among tgp's members.
func (b *Box) EnvTypes() ([]byte, error) {
	data, err := scaffoldFiles.ReadFile("scaffold/tgp-env.d.ts")
	if err != nil {
		return nil, err
	}
	if b.cfg.SandboxDecls == "" {
		return data, nil
	}
	const open = "declare const tgp: {"
	i := bytes.Index(data, []byte(open))
	j := bytes.Index(data[i:], []byte("\n};"))
	if i < 0 || j < 0 {
		return nil, errors.New("toolbox: scaffold/tgp-env.d.ts has no tgp declaration")
	}
	at := i + j + 1
	return slices.Concat(data[:at], []byte(b.cfg.SandboxDecls), data[at:]), nil
}

// envTypesHeader is the generated file's first line.
func envTypesHeader(data []byte) []byte {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i+1]
	}
	return data
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
