package kernel

// ConfigTemplate is the commented tgp.config.yaml `tgp init` writes: every
// key with its default. A test keeps it in step with Defaults.
const ConfigTemplate = `# TGP configuration. Precedence: built-in defaults < this file < TGP_* environment
# variables (TGP_ + the key upper-cased, dots as underscores: TGP_GIT_REMOTE) < Go options.
# Secrets (tokens, DSNs) are never written here: name the environment variable instead.

# Where the kernel keeps its working copy (worktree and .git), relative to this file.
root_dir: .tgp

git:
  # The shared toolbox: a local path, file://, https:// or git:// URL. Empty: work on root_dir as it is.
  remote: ""
  # The remote branch to mirror. Empty: the remote's default branch (its HEAD), like git clone.
  branch: ""
  # auto | github | gitlab | bitbucket | gitea | forgejo | local | generic (local and generic have no
  # pull-request API). auto: from the remote's host (github.com, gitlab.com, bitbucket.org, gitea.com,
  # codeberg.org), else from api_url's shape; with write_strategy pr an unknown host is an error.
  provider: auto
  # owner/name (group/sub/project on GitLab) for write_strategy: pr; derived from the remote when empty.
  repo: ""
  # Shallow clone depth; 0 clones the full history.
  depth: 0
  # direct: commit and push every change; pr: push to a branch and open a pull request.
  write_strategy: direct
  # Commit identity; empty: resolved as git does (GIT_AUTHOR_*/GIT_COMMITTER_*, then git config: repository,
  # ~/.gitconfig, system), and with nothing configured anywhere the bot tgp-bot[bot].
  author:
    name: ""
    email: ""
  # Environment variable holding the token for HTTPS remotes and the host's API (GitHub, GitLab,
  # Bitbucket access token, Gitea/Forgejo).
  token_env: TGP_GIT_TOKEN
  # Environment variable holding the fleet's secret (the same on every machine) that proves a carry
  # (retry.carry): a push lands another's commits from refs/tgp/carry/ only when the ref's HMAC made
  # with it matches, and deletes only proven stale ones. Unset or empty: no carries over the network.
  carry_key_env: TGP_CARRY_KEY
  # An unencrypted OpenSSH private key (path; relative: from this file's directory) that signs every
  # commit the kernel makes with git's SSH signature (git verify-commit checks it against
  # gpg.ssh.allowedSignersFile). Empty: git's commit.gpgsign=true + gpg.format=ssh + user.signingkey,
  # else commits are unsigned.
  signing_key: ""
  retry:
    # How long a write may keep trying to push when other agents push first (each attempt replays the
    # change on the remote's new tip); after it the write says which commits are pending, and the next
    # persist, refresh or boot pushes them.
    deadline: 2m
    # First backoff delay; doubles with full jitter up to 500ms after a lost race, 5s when the remote
    # does not answer.
    base_delay: 20ms
    # Pull-request branches only: push attempts before a write fails.
    max_attempts: 8
    # A push that loses the race leaves its commits on the remote (refs/tgp/carry/...) and the push
    # that wins, from any machine, lands them with its own and deletes the ref (atomically). Needs the
    # key named by carry_key_env; a ref there without its proof is never landed (tgp status lists it).
    carry: true
  # Where processes of this machine that push to the same remote take turns and push each other's
  # commits in one push (one contender per machine). Empty: $XDG_CACHE_HOME/tgp/locks (else
  # ~/.cache/tgp/locks); off: every process pushes on its own.
  lock_dir: ""
  # Local remotes (a path or file://): when a write had to be recreated on other agents' new commits,
  # the root's .git takes that commit at the next call that reads the root (every tool call but
  # write_file does), or the next write folds it into its own commit: a burst of writes makes one pack
  # each, not two. false: at once, for a root other programs read while the kernel runs.
  defer_replays: true
  # The machine's push budget with the remote: no push starts that would make more than this many in
  # any minute (every process of the machine counts, through lock_dir). Writes wait in the batch
  # meanwhile: one push carries every write waiting on the machine, and each call still returns when
  # its write is on the remote. auto: 6 (GitHub's documented limit per repository) when the remote is
  # on github.com, none elsewhere; off; or a count. Env: TGP_GIT_PUSHES_PER_MINUTE.
  pushes_per_minute: auto
  # Fetches and tip checks per second. auto: 12 (under GitHub's documented 15) whenever there is a push
  # budget, none otherwise; off; or a count.
  reads_per_second: auto
  # The PostgreSQL journal the machines pushing to this remote share: each write is recorded there,
  # one elected pusher at a time pushes every waiting write in one push, and pushes_per_minute holds
  # for the whole fleet, counted in the database. Unreachable: writes push directly and say so. A DSN
  # holds a password: set it only in the environment, TGP_GIT_JOURNAL=postgres://user:pw@host/db
  # (a value here is refused).
  journal: ""
  # When a write through the journal returns. landed: once it is on the remote. journal: as soon as
  # its entry is durable in the journal, with landed: false and the entry's journal_id in the result;
  # the entry lands with the fleet's next push (a writer that waits, a boot, tgp serve draining). Needs
  # journal. Env: TGP_GIT_JOURNAL_ACK.
  journal_ack: landed
  pr:
    # session: one branch and PR per kernel session; tool: one per changed tool.
    per: session
  # A self-hosted host's API root: https://ghe.example.com/api/v3 (GitHub Enterprise),
  # https://gitlab.example.com/api/v4 (GitLab), https://gitea.example.com/api/v1 (Gitea, Forgejo).
  # Empty: the hosted service's, or https://<the remote's host>/api/... when provider is set.
  api_url: ""
  # How stale a long-lived kernel (tgp serve, an embedding backend) may see the remote: before a call
  # that reads the toolbox, a check older than this asks the remote for its tip and pulls what others
  # pushed. 0: before every such call; off: at boot only.
  refresh_interval: 5s

fs:
  # Directories sandboxed tools may write to with tgp.write_file.
  allowed_dirs: [tools, data]
  # Refuse any ".." in agent paths, even one that stays inside the root.
  block_upward_traversal: true

sandbox:
  # Wall-clock limit for one exec_tool run.
  timeout: 5s
  # Heap growth limit for one run, in MiB.
  memory_mb: 128
  # Bare module names tools may require. zod and date-fns are built into tgp (pinned versions, no
  # npm needed); other packages come from node_modules/ in the toolbox or sandbox.modules_dir.
  allowed_imports: ["@tgp/std", "zod", "date-fns"]
  # URL prefixes tgp.fetch may reach; empty disables network access.
  allowed_fetch_urls: []
  check:
    # Rule id -> off | warning | error, e.g. no-magic-numbers: warning
    rules: {}
  # process (default): a pool of warm worker processes, each under an OS
  # memory limit (RLIMIT_AS) that holds whatever the tool does, killed and
  # replaced on timeout or limit; files, SQL and fetch stay in the kernel.
  # inproc: tools run in the kernel's process (about 1.5x faster warm), the
  # memory limit charged before large allocations (strings included) and
  # watched otherwise: it trusts the tool's memory behaviour (objects built
  # in a loop can overshoot it before the watchdog stops the run).
  isolation: process
  # Worker processes that may run at once (isolation: process).
  workers: 4
  # Command that starts a worker; empty: this tgp binary ("tgp __worker").
  worker_command: []
  # A host directory laid out like node_modules (one package per subdirectory) that allowed packages
  # missing from the toolbox's node_modules/ are bundled from. Empty: none.
  modules_dir: ""
  # An allowed_signers file (git's gpg.ssh.allowedSignersFile format: "principals [options] key").
  # When set, exec_tool and check_tool refuse a tool whose last change (or that of a module it
  # imports) is not a commit signed by a key listed for its committer's email (untrusted_tool).
  # Empty: every tool runs. Relative to this file.
  trusted_signers: ""
  # Refuse to run a tool that does not export permissions (export const permissions = { fetch,
  # secrets, sql, write }: what it may reach, within this configuration). Off: such a tool runs
  # under this configuration alone. See docs/tool-permissions.md.
  require_permissions: false
  # Secrets the kernel brokers for tools, by name. A tool that lists NAME in its permissions.secrets
  # gets a placeholder from tgp.secret("NAME"); the kernel puts the value of the environment variable
  # env in its place in a tgp.fetch to one of urls, and refuses the fetch anywhere else. The value
  # never enters the tool, its result, its logs or a commit. For example:
  #   API: {env: API_TOKEN, urls: ["https://api.example.com/v1/"]}
  secrets: {}

sql:
  # sqlite | postgres; empty disables exec_sql.
  driver: ""
  # Environment variable holding the DSN (for sqlite: a file path; default under root_dir).
  dsn_env: TGP_SQL_DSN
  # Run every tool's transaction read-only.
  read_only: false

tools:
  git:
    enabled: true
    timeout_ms: 30000
    max_bytes: 1048576

approval:
  # never | on_risk (ask for high-risk calls) | always (ask for every call that writes)
  policy: never

serve:
  # tgp serve --http: every request must carry "Authorization: Bearer <token>" where the
  # token is read from this environment variable (empty: none; a non-loopback address then
  # needs --allow-unauthenticated).
  token_env: ""
  # Origins allowed besides loopback ones (scheme://host[:port]); any other Origin is 403.
  allowed_origins: []
  # Largest request body in bytes (413 above it).
  max_body_bytes: 4194304
  # Sessions with no request for this long are closed (0: never).
  session_idle_timeout: 30m

shell:
  # The shell tools (shell, exec_command, write_stdin). Every command a command line runs (each pipeline
  # stage, $(...), xargs/env/find -exec/sh -c inner commands) is checked after expansion: deny first,
  # then the categories; a command in none of them is not allowed (interpreters such as python, node,
  # awk are not allowed unless you list them). A name with a slash (./scripts/test.sh) must be listed
  # as that exact path. Shell builtins (echo, printf, cd, test, read...) run in the interpreter and are
  # not looked up here (the lists name their programs, run through xargs, env or find -exec); what a
  # builtin writes goes through a redirection, which is checked.
  categories:
    # Need paths.read (or paths.write) in the working directory and for the files they name.
    read_only: [ls, cat, head, tail, wc, grep, egrep, fgrep, find, sort, uniq, diff, cmp, comm, file, stat, du, tree, basename, dirname, realpath, readlink, cut, tr, nl, tac, rev, fold, paste, join, column, expand, unexpand, od, md5sum, sha1sum, sha256sum, base64, strings, seq, date, "true", "false", pwd, printenv, env, xargs, nice, timeout, test, expr, which, sleep, uname]
    # Need paths.write.
    safe_write: [mkdir, touch, cp, mv, echo, printf, tee, chmod]
    # Need paths.write and the host's approval (kernel.WithApprover); refused without an approver.
    dangerous: [rm, rmdir, shred]
  # Refused before anything else, with a security warning.
  deny: [curl, wget, ssh, scp, sftp, rsync, nc, ncat, netcat, telnet, ftp, sudo, su, doas, chown, chgrp, mount, umount, nohup, setsid, kill, pkill, killall, crontab, at, systemctl, docker, podman, dd, mkfs]
  paths:
    # Globs relative to the root ("**" any depth); a pattern covers what is beneath it. Deny wins, write
    # implies read, .git is always denied. Where the kernel supports Landlock, child processes are held
    # to these scopes by the kernel too (system directories readable; no TCP).
    read: ["**"]
    write: ["**"]
    deny: ["**/.env", "**/*.pem", "**/*.key"]
`
