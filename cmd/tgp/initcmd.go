package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/kernel"
)

func newInitCmd(a *app) *cobra.Command {
	var remote, branch string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Bootstrap a TGP project in the current directory",
		Long: "Create tgp.config.yaml (commented, every key with its default), the root directory (.tgp/)\n" +
			"with tools/ and meta.json, and a .gitignore entry for the root. Idempotent: a second run\n" +
			"changes nothing and says so. With --remote, boots once to check the remote. Re-run with\n" +
			"another --remote or --branch to change them: the file is updated in place (comments kept)\n" +
			"and the change reported.",
		Example: "  tgp init\n  tgp init --remote https://github.com/acme/toolbox.git --branch main",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			a.initing = true
			if err := a.refusePassword(remote); err != nil {
				return err
			}
			var changed []string
			cfgPath := a.config
			if cfgPath == "" {
				cfgPath = "tgp.config.yaml"
			}
			// All or nothing: a failed init (a wrong remote, a branch the
			// remote lacks) leaves the directory as it found it, so the
			// next try starts clean instead of from a half project.
			undo, err := a.initUndo(cmd, cfgPath)
			if err != nil {
				return err
			}
			defer func() {
				if err != nil {
					undo()
				}
			}()
			if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
				body := kernel.ConfigTemplate
				if remote != "" {
					body = strings.Replace(body, "  remote: \"\"\n", fmt.Sprintf("  remote: %q\n", remote), 1)
				}
				if branch != "" {
					body = strings.Replace(body, "  branch: \"\"\n", fmt.Sprintf("  branch: %q\n", branch), 1)
				}
				if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
					return &exitError{code: 1, err: err}
				}
				changed = append(changed, "created "+cfgPath)
			} else if err != nil {
				return &exitError{code: 1, err: err}
			} else if remote != "" || branch != "" {
				// A re-run with other flags updates the configuration
				// (fixing a mistyped URL is the common case) and says so.
				remoteChanged := false
				for _, kv := range [][2]string{{"remote", remote}, {"branch", branch}} {
					if kv[1] == "" {
						continue
					}
					old, ok, err := setConfigValue(cfgPath, "git", kv[0], kv[1])
					if err != nil {
						return &exitError{code: 1, err: fmt.Errorf("%w\nhint: set git.%s in %s by hand", err, kv[0], cfgPath)}
					}
					if ok {
						changed = append(changed, fmt.Sprintf("%s: git.%s updated: %q -> %q", cfgPath, kv[0], gitbackend.RedactURL(old), gitbackend.RedactURL(kv[1])))
						remoteChanged = remoteChanged || kv[0] == "remote" && old != ""
					}
				}
				if remoteChanged {
					if err := a.refuseStaleClone(cmd, remote); err != nil {
						return err
					}
				}
			}
			k, err := a.openKernel(cmd.Context(), false)
			if err != nil {
				return err
			}
			if k.Config().Git.Remote != "" {
				fmt.Fprintf(a.stdout, "checking remote %s ...\n", gitbackend.RedactURL(k.Config().Git.Remote))
				if err := k.Boot(cmd.Context()); err != nil {
					_ = k.Shutdown(cmd.Context())
					// kernel.Boot's error says "boot:" already.
					return &exitError{code: 1, err: fmt.Errorf("%w\nhint: check git.remote, git.branch and the token in $%s", err, k.Config().Git.TokenEnv)}
				}
			}
			created, err := k.Scaffold()
			if err != nil {
				_ = k.Shutdown(cmd.Context())
				return &exitError{code: 1, err: err}
			}
			a.identityNotice(k)
			for _, c := range created {
				changed = append(changed, "created "+strings.TrimSuffix(filepath.ToSlash(k.Config().RootDir), "/")+"/"+c)
			}
			if err := k.Shutdown(cmd.Context()); err != nil {
				return &exitError{code: 1, err: err}
			}
			if ok, err := ensureIgnored(".gitignore", k.Config().RootDir); err != nil {
				return &exitError{code: 1, err: err}
			} else if ok {
				changed = append(changed, "added /"+strings.Trim(filepath.ToSlash(k.Config().RootDir), "/")+"/ to .gitignore")
			}
			if len(changed) == 0 {
				fmt.Fprintln(a.stdout, "already initialised; nothing changed")
				return nil
			}
			for _, c := range changed {
				fmt.Fprintln(a.stdout, c)
			}
			fmt.Fprintln(a.stdout, "next: tgp tools, tgp call write_file '{\"path\":\"tools/hello.ts\",\"content\":\"...\"}', tgp check")
			return nil
		},
	}
	cmd.Flags().StringVar(&remote, "remote", "", "git remote holding the shared toolbox")
	cmd.Flags().StringVar(&branch, "branch", "", "branch of the remote (default: the branch the remote's HEAD names, as git clone does; for a new empty repository, the one it was created with, often master)")
	return cmd
}

// refuseStaleClone stops a re-run whose remote changed when the root
// already holds a clone: it may be another repository's, and may hold work
// not pushed yet. Nothing is changed (the configuration is restored);
// moving the clone aside is left to the user, with the command to run.
func (a *app) refuseStaleClone(cmd *cobra.Command, remote string) error {
	k, err := a.openKernel(cmd.Context(), false)
	if err != nil {
		return err
	}
	root := k.Config().RootDir
	_ = k.Shutdown(cmd.Context())
	if r, err := git.PlainOpen(root); err != nil {
		return nil // no clone yet (the earlier boot failed): boot with the new remote
	} else if _, err := r.Head(); err != nil {
		return nil // an empty repository: nothing of the old remote's
	}
	return &exitError{code: 1, err: fmt.Errorf("%s holds a clone of the previous remote (and any work not pushed yet); nothing was changed. "+
		"To start over from the new remote, move it aside and run init again:\n  mv %s %s.old && tgp init --remote %s", root, root, root, gitbackend.RedactURL(remote))}
}

// refusePassword stops init before it writes anything when --remote
// carries a password: init writes the remote into tgp.config.yaml (and
// git into .git/config) and prints it, and secrets are never written or
// printed. The token goes in the environment variable git.token_env
// names, which every HTTPS push and fetch sends as the password.
func (a *app) refusePassword(remote string) error {
	if !gitbackend.HasPassword(remote) {
		return nil
	}
	env := "TGP_GIT_TOKEN"
	if cfg, err := kernel.ConfigFor(a.kernelOptions()...); err == nil && cfg.Git.TokenEnv != "" {
		env = cfg.Git.TokenEnv
	}
	return usageError("--remote %s carries a password: tgp never writes credentials to disk or prints them.\n"+
		"Give the URL without it and put the password or token in the environment variable git.token_env names:\n"+
		"  export %s=<token>\n  tgp init --remote %s", gitbackend.RedactURL(remote), env, withoutUserinfo(remote))
}

// withoutUserinfo is remote with no user or password, for the hint.
func withoutUserinfo(remote string) string {
	return strings.Replace(gitbackend.RedactURL(remote), "***@", "", 1)
}

// initUndo records what init may change (the configuration file and the
// root directory, with any parents it creates) and returns the function
// that puts them back as they were.
func (a *app) initUndo(cmd *cobra.Command, cfgPath string) (func(), error) {
	oldCfg, cfgErr := os.ReadFile(cfgPath)
	if cfgErr != nil && !errors.Is(cfgErr, fs.ErrNotExist) {
		return nil, &exitError{code: 1, err: cfgErr}
	}
	// The root as the configuration names it now; a new remote does not
	// move it (--root and root_dir do, and they are read here already).
	// What is removed on failure: the root with the parents init makes
	// for it, or, in a root that exists, the entries init adds to it (a
	// .git from a failed boot).
	var created []string
	if root, err := kernel.ResolveRoot(a.kernelOptions()...); err == nil {
		if ents, err := os.ReadDir(root); err == nil {
			had := map[string]bool{}
			for _, e := range ents {
				had[e.Name()] = true
			}
			return func() {
				restoreConfig(cfgPath, oldCfg, cfgErr)
				ents, _ := os.ReadDir(root)
				for _, e := range ents {
					if !had[e.Name()] {
						_ = os.RemoveAll(filepath.Join(root, e.Name()))
					}
				}
			}, nil
		}
		for p := root; ; p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
				break
			}
			created = []string{p}
			if filepath.Dir(p) == p {
				break
			}
		}
	}
	return func() {
		restoreConfig(cfgPath, oldCfg, cfgErr)
		for _, p := range created {
			_ = os.RemoveAll(p)
		}
	}, nil
}

// restoreConfig puts the configuration file back: its old bytes, or no
// file when there was none.
func restoreConfig(path string, old []byte, readErr error) {
	if readErr == nil {
		_ = os.WriteFile(path, old, 0o644)
	} else {
		_ = os.Remove(path)
	}
}

// ensureIgnored adds the root to .gitignore unless an entry covers it.
func ensureIgnored(path, root string) (bool, error) {
	if filepath.IsAbs(root) {
		return false, nil
	}
	entry := "/" + strings.Trim(filepath.ToSlash(root), "/") + "/"
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	bare := strings.Trim(entry, "/")
	for _, line := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(line)
		if strings.Trim(l, "/") == bare {
			return false, nil
		}
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("# TGP working copy\n" + entry + "\n")
	return true, os.WriteFile(path, b.Bytes(), 0o644)
}
