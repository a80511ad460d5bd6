package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/tgp-go/tgp/tools"
)

// approver is `tgp call`'s answer to approval requests: the decision
// --approve names, else a question on the terminal; with neither (stdin
// is a pipe, the arguments came from it, or nobody is there) the call is
// refused as it is without an approver.
func (a *app) approver(flag string, stdinTaken bool) tools.Approver {
	return func(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
		if flag != "" {
			d := tools.Decision(flag)
			if !req.Offers(d) {
				return tools.DecisionDeny, fmt.Errorf("--approve %s is not one of this request's choices (%s)", flag, choiceList(req.Choices))
			}
			return d, nil
		}
		in, ok := a.stdin.(*os.File)
		if stdinTaken || !ok || !isatty.IsTerminal(in.Fd()) {
			return tools.DecisionDeny, fmt.Errorf("%w: no terminal to ask on; pass --approve %s", tools.ErrNoApprover, choiceList(req.Choices))
		}
		return ask(a.stderr, in, req)
	}
}

func choiceList(cs []tools.Decision) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, "|")
}

// ask puts req on the terminal and reads the choice: its number or name.
// End of input is deny.
func ask(out io.Writer, in io.Reader, req tools.ApprovalRequest) (tools.Decision, error) {
	if sc := req.Scope; sc != nil {
		what := sc.Command
		if what == "" {
			what = sc.Scope + " access to " + sc.Pattern
		}
		fmt.Fprintf(out, "\nThe agent asks for %s (%s).\n  Reason: %s\n", what, sc.Key, sc.Reason)
		if sc.ConfigFile != "" {
			fmt.Fprintf(out, "  add_to_scope writes it into %s\n", sc.ConfigFile)
		}
		if sc.Note != "" {
			fmt.Fprintf(out, "  Note: %s\n", sc.Note)
		}
	} else {
		fmt.Fprintf(out, "\n%s needs approval (risk %s): %s\n", req.Tool, req.Risk, req.Summary)
	}
	r := bufio.NewReader(in)
	for {
		for i, c := range req.Choices {
			fmt.Fprintf(out, "  %d) %s\n", i+1, c)
		}
		fmt.Fprint(out, "Choice: ")
		line, err := r.ReadString('\n')
		answer := strings.TrimSpace(line)
		if n, convErr := strconv.Atoi(answer); convErr == nil && n >= 1 && n <= len(req.Choices) {
			return req.Choices[n-1], nil
		}
		if req.Offers(tools.Decision(answer)) {
			return tools.Decision(answer), nil
		}
		if err != nil {
			fmt.Fprintln(out)
			return tools.DecisionDeny, nil
		}
		fmt.Fprintf(out, "%q is not a choice.\n", answer)
	}
}
