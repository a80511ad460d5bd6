package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tgp-go/tgp/kernel"
	"github.com/tgp-go/tgp/kernel/toolsets/files"
	"github.com/tgp-go/tgp/kernel/toolsets/git"
	"github.com/tgp-go/tgp/tools"
)

// A host embeds the kernel: New loads the configuration (here: a root in
// memory and no remote, so nothing is pushed), Boot hydrates the root,
// Call runs any tool by name, Shutdown flushes what is pending.
func Example_embed() {
	ctx := context.Background()
	k, err := kernel.New(ctx, kernel.WithMemoryFS(), kernel.WithEnviron([]string{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Shutdown(ctx)
	if err := k.Boot(ctx); err != nil {
		fmt.Println(err)
		return
	}
	res, err := k.Call(ctx, "write_file", json.RawMessage(`{"path":"tools/hello.ts","content":"/** Says hello. */\nexport default () => 'hello';\n"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := res.Value.(tools.WriteResult)
	fmt.Println(w.Path, w.Created)
	// Output: tools/hello.ts true
}

// Call validates the arguments against the tool's schema before it runs:
// a mistake is a tools.Error whose kind and field tell the model what to
// fix.
func ExampleKernel_Call() {
	ctx := context.Background()
	k, err := kernel.New(ctx, kernel.WithMemoryFS(), kernel.WithEnviron([]string{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Shutdown(ctx)
	if err := k.Boot(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_, err = k.Call(ctx, "read_file", json.RawMessage(`{"path": 7}`))
	fmt.Println(tools.KindOf(err))
	res, err := k.Call(ctx, "list_files", json.RawMessage(`{}`))
	fmt.Println(res.Value, err)
	// Output:
	// bad_args
	// {. []} <nil>
}

// A host passes the toolsets it uses, and links only those: here the
// file tools and the git tools, without the sandbox, the shell or a SQL
// driver (kernel/toolsets/sandbox and shell are not imported). The
// kernel's own find_tools and request_scope_expansion come with any.
// Without WithToolsets, New builds the registered ones: every toolset in
// a program that imports kernel/all, as cmd/tgp does.
func ExampleNew_toolsets() {
	ctx := context.Background()
	k, err := kernel.New(ctx, kernel.WithToolsets(files.Toolset(), git.Toolset()),
		kernel.WithMemoryFS(), kernel.WithEnviron([]string{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Shutdown(ctx)
	byToolset := map[string][]string{}
	for _, t := range k.Tools() {
		byToolset[t.Toolset] = append(byToolset[t.Toolset], t.Name)
	}
	fmt.Println("core:", byToolset["core"])
	fmt.Println("files:", byToolset["files"])
	fmt.Println("git:", len(byToolset["git"]), "tools")
	_, err = k.Call(ctx, "exec_tool", json.RawMessage(`{"path":"tools/x.ts"}`))
	fmt.Println(tools.KindOf(err))
	// Output:
	// core: [find_tools request_scope_expansion]
	// files: [apply_patch delete_file grep_files list_dir list_files patch_file read_file write_file]
	// git: 11 tools
	// not_found
}
