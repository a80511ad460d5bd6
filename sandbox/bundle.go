package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// moduleReader is where a package's files are read from.
type moduleReader interface {
	ReadFile(path string) ([]byte, error)
}

// hostModules reads node_modules/<pkg>/... from the host's
// sandbox.modules_dir (<dir>/<pkg>/...), never above it.
type hostModules struct{ dir string }

func (h hostModules) ReadFile(p string) ([]byte, error) {
	rest, ok := strings.CutPrefix(path.Clean(p), "node_modules/")
	if !ok || rest == ".." || strings.HasPrefix(rest, "../") || path.IsAbs(rest) {
		return nil, fmt.Errorf("%s: outside sandbox.modules_dir", p)
	}
	return os.ReadFile(filepath.Join(h.dir, filepath.FromSlash(rest)))
}

// bundleNodeModule bundles an allowed package from node_modules/ in the
// tool's FS with esbuild into one CommonJS program. esbuild's resolver
// reads the real disk, and the root may be in memory, so a plugin resolves
// and loads every file through the FS (the jail): package.json "main" /
// "module", extension and index probing. Bundles are cached by the
// package.json content.
func (ex *execution) bundleNodeModule(name string) (*Compiled, error) {
	var fsys moduleReader = ex.req.FS
	pkgDir := "node_modules/" + name
	var pkgJSON []byte
	err := errors.New("no filesystem")
	if fsys != nil {
		pkgJSON, err = fsys.ReadFile(pkgDir + "/package.json")
	}
	if err != nil && ex.r.modulesDir != "" {
		fsys = hostModules{dir: ex.r.modulesDir}
		pkgJSON, err = fsys.ReadFile(pkgDir + "/package.json")
	}
	if err != nil {
		return nil, fmt.Errorf("allowed, but not installed: commit node_modules/%s to the toolbox, or install it in the host's sandbox.modules_dir (built in: %s)", name, strings.Join(embeddedNames(), ", "))
	}
	source := "root"
	if _, host := fsys.(hostModules); host {
		source = "host"
	}
	sum := sha256.Sum256(append([]byte(source+"\x00"+name+"\x00"), pkgJSON...))
	key := "bundle:" + hex.EncodeToString(sum[:])
	if c, ok := ex.r.bundles.Load(key); ok {
		return c.(*Compiled), nil
	}
	resolveFile := func(p string) (string, bool) {
		for _, c := range []string{p, p + ".js", p + ".cjs", p + ".mjs", p + ".json", p + "/index.js", p + "/index.cjs", p + "/index.mjs"} {
			if _, err := fsys.ReadFile(c); err == nil {
				return c, true
			}
		}
		return "", false
	}
	entryOf := func(dir string) (string, bool) {
		main := "index.js"
		if b, err := fsys.ReadFile(dir + "/package.json"); err == nil {
			var pj struct {
				Main   string `json:"main"`
				Module string `json:"module"`
			}
			if json.Unmarshal(b, &pj) == nil {
				if pj.Main != "" {
					main = pj.Main
				} else if pj.Module != "" {
					main = pj.Module
				}
			}
		}
		return resolveFile(path.Clean(dir + "/" + strings.TrimPrefix(main, "./")))
	}
	plugin := api.Plugin{Name: "tgp-vfs", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			var p string
			var ok bool
			switch {
			case a.Kind == api.ResolveEntryPoint:
				p, ok = entryOf(pkgDir)
			case strings.HasPrefix(a.Path, "./") || strings.HasPrefix(a.Path, "../"):
				p, ok = resolveFile(path.Clean(path.Join(path.Dir(a.Importer), a.Path)))
			default: // a dependency of the package: node_modules/<dep>
				p, ok = entryOf("node_modules/" + a.Path)
			}
			if !ok || strings.HasPrefix(p, "../") {
				return api.OnResolveResult{}, fmt.Errorf("cannot resolve %q from %s", a.Path, a.Importer)
			}
			return api.OnResolveResult{Path: p, Namespace: "tgp-vfs"}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: "tgp-vfs"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			src, err := fsys.ReadFile(a.Path)
			if err != nil {
				return api.OnLoadResult{}, err
			}
			if cerr := CheckUTF8(a.Path, src); cerr != nil {
				return api.OnLoadResult{}, cerr
			}
			s := string(src)
			loader := api.LoaderJS
			if strings.HasSuffix(a.Path, ".json") {
				loader = api.LoaderJSON
			}
			return api.OnLoadResult{Contents: &s, Loader: loader}, nil
		})
	}}
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{name}, Bundle: true, Write: false, Format: api.FormatCommonJS,
		Platform: api.PlatformNeutral, Target: api.ES2022, Plugins: []api.Plugin{plugin}, LogLevel: api.LogLevelSilent,
		Supported: map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
	})
	if len(res.Errors) > 0 {
		return nil, fmt.Errorf("bundle %s: %s", name, res.Errors[0].Text)
	}
	if len(res.OutputFiles) == 0 {
		return nil, fmt.Errorf("bundle %s: no output", name)
	}
	js := string(res.OutputFiles[0].Contents)
	prog, err := compileJS(pkgDir, wrapperPrefix+js+"\n})")
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	c := &Compiled{Path: pkgDir, JS: js, prog: prog}
	ex.r.bundles.Store(key, c)
	return c, nil
}
