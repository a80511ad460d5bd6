package sandbox

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
)

// vendorJS holds the npm packages shipped inside the binary: zod and
// date-fns, bundled to CommonJS by `make vendor-js` (scripts/vendorjs) at
// the versions pinned in manifest.json, with their licenses. A host needs
// no npm, network or node_modules for them (serverless hosts, memory
// roots); tools written for the TypeScript original import them.
//
//go:embed vendorjs/*.js vendorjs/*.LICENSE vendorjs/manifest.json
var vendorJS embed.FS

// EmbeddedPackage is one package built into the sandbox.
type EmbeddedPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	License string `json:"license"`
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
}

// EmbeddedPackages lists the packages built into the sandbox, by name.
func EmbeddedPackages() []EmbeddedPackage {
	b, err := vendorJS.ReadFile("vendorjs/manifest.json")
	if err != nil {
		return nil
	}
	var out []EmbeddedPackage
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func embeddedNames() []string {
	var out []string
	for _, p := range EmbeddedPackages() {
		out = append(out, p.Name)
	}
	return out
}

func embeddedPackage(name string) (EmbeddedPackage, bool) {
	for _, p := range EmbeddedPackages() {
		if p.Name == name {
			return p, true
		}
	}
	return EmbeddedPackage{}, false
}

// embeddedModule compiles a built-in package once per Runner; each run
// then evaluates it in its own runtime.
func (ex *execution) embeddedModule(name string) (*Compiled, bool, error) {
	p, ok := embeddedPackage(name)
	if !ok {
		return nil, false, nil
	}
	key := "embedded:" + name
	if c, ok := ex.r.bundles.Load(key); ok {
		return c.(*Compiled), true, nil
	}
	js, err := vendorJS.ReadFile("vendorjs/" + p.File)
	if err != nil {
		return nil, true, err
	}
	id := "node_modules/" + name
	prog, err := compileJS(id, wrapperPrefix+string(js)+"\n})")
	if err != nil {
		return nil, true, fmt.Errorf("built-in %s@%s: %w", name, p.Version, err)
	}
	c := &Compiled{Path: id, JS: string(js), prog: prog}
	ex.r.bundles.Store(key, c)
	return c, true, nil
}
