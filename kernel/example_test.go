package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tgp-go/tgp/kernel"
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
