// Command vendorjs bundles the npm packages the sandbox ships inside the
// binary (zod, date-fns) into one CommonJS file each, with their licenses
// and a manifest of pinned versions and SHA-256 sums, for go:embed in
// package sandbox. `make vendor-js` installs the pinned versions with npm
// and runs it; the sandbox's tests check the embedded files against the
// manifest, so a hand edit or a partial regeneration fails CI.
//
// Usage: vendorjs -node-modules DIR -out DIR name@version...
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

type entry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	License string `json:"license"`
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
}

func main() {
	nodeModules := flag.String("node-modules", "", "node_modules directory holding the pinned packages")
	out := flag.String("out", "", "output directory (sandbox/vendorjs)")
	flag.Parse()
	if *nodeModules == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: vendorjs -node-modules DIR -out DIR name@version...")
		os.Exit(2)
	}
	if err := run(*nodeModules, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "vendorjs:", err)
		os.Exit(1)
	}
}

func run(nodeModules, out string, specs []string) error {
	abs, err := filepath.Abs(nodeModules)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var manifest []entry
	for _, spec := range specs {
		at := strings.LastIndex(spec, "@")
		if at <= 0 {
			return fmt.Errorf("%q: want name@version", spec)
		}
		name, version := spec[:at], spec[at+1:]
		var pj struct {
			Version string `json:"version"`
			License string `json:"license"`
		}
		b, err := os.ReadFile(filepath.Join(abs, name, "package.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &pj); err != nil {
			return fmt.Errorf("%s/package.json: %w", name, err)
		}
		if pj.Version != version {
			return fmt.Errorf("%s: node_modules has %s, the pin is %s", name, pj.Version, version)
		}
		src := fmt.Sprintf("module.exports = require(%q);\n", name)
		res := api.Build(api.BuildOptions{
			Stdin: &api.StdinOptions{Contents: src, ResolveDir: filepath.Dir(abs), Loader: api.LoaderJS},
			// Module keys are paths relative to this (node_modules/zod/...),
			// the same wherever npm installed them: reproducible bundles.
			AbsWorkingDir:    filepath.Dir(abs),
			Bundle:           true,
			Write:            false,
			Format:           api.FormatCommonJS,
			Platform:         api.PlatformNeutral,
			MainFields:       []string{"main", "module"},
			Target:           api.ES2022,
			Supported:        map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
			LogLevel:         api.LogLevelSilent,
			NodePaths:        []string{abs},
			LegalComments:    api.LegalCommentsEndOfFile,
			MinifySyntax:     true,
			MinifyWhitespace: true,
		})
		if len(res.Errors) > 0 {
			return fmt.Errorf("bundle %s: %s", name, res.Errors[0].Text)
		}
		js := res.OutputFiles[0].Contents
		file := strings.ReplaceAll(name, "/", "__") + ".js"
		if err := os.WriteFile(filepath.Join(out, file), js, 0o644); err != nil {
			return err
		}
		lic, err := os.ReadFile(filepath.Join(abs, name, "LICENSE"))
		if err != nil {
			lic, err = os.ReadFile(filepath.Join(abs, name, "LICENSE.md"))
		}
		if err != nil {
			return fmt.Errorf("%s: no LICENSE: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, strings.ReplaceAll(name, "/", "__")+".LICENSE"), lic, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(js)
		manifest = append(manifest, entry{Name: name, Version: version, License: pj.License, File: file, SHA256: hex.EncodeToString(sum[:])})
	}
	sort.Slice(manifest, func(i, j int) bool { return manifest[i].Name < manifest[j].Name })
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "manifest.json"), append(b, '\n'), 0o644)
}
