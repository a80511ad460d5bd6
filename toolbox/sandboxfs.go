package toolbox

import (
	"io/fs"
	"sort"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// SandboxFS is the sandbox bridge's view of the root (tgp.read_file,
// tgp.write_file, tgp.list_files, served in process or over a worker's
// pipe): every path goes through the file tools' jail policy
// (tools.AgentPath), so tools reach files only inside the root and never
// .git. A write lands in the root; exec_tool records what a run wrote and
// hands it to Persist when the run ends. It is a sandbox.FS; the toolbox
// names no sandbox type, so that it links no JavaScript engine.
func (b *Box) SandboxFS() SandboxFS {
	return SandboxFS{fs: b.fs, blockUpward: b.cfg.BlockUpwardTraversal}
}

// SandboxFS is the root as the sandbox bridge reaches it (Box.SandboxFS).
type SandboxFS struct {
	fs          *vfs.FS
	blockUpward bool
}

// path applies the file tools' own policy (tools.AgentPath): one jail
// for every way an agent names a path.
func (s SandboxFS) path(p string) (string, error) {
	return tools.AgentPath(s.fs, s.blockUpward, "path", p)
}

func (s SandboxFS) ReadFile(p string) ([]byte, error) {
	rel, err := s.path(p)
	if err != nil {
		return nil, err
	}
	return s.fs.ReadFile(rel)
}

func (s SandboxFS) WriteFile(p string, data []byte) error {
	rel, err := s.path(p)
	if err != nil {
		return err
	}
	return s.fs.WriteFile(rel, data, 0o644)
}

func (s SandboxFS) ListFiles(dir string) ([]string, error) {
	if dir != "" && dir != "." {
		rel, err := s.path(dir)
		if err != nil {
			return nil, err
		}
		dir = rel
	}
	var out []string
	err := s.fs.Walk(dir, func(rel string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "node_modules") {
			return fs.SkipDir
		}
		if !info.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}
