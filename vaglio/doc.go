// Package vaglio is the mandatory checkpoint between a proposed command and
// its execution. The word is Italian for sifting, scrutiny: what passes
// through the vaglio has been sieved.
//
// It works in two phases, kept apart on purpose. Phase 1, the [Guard], is
// binary: a short list of things no request may do — touch secrets and
// system internals (forbidden paths), destroy what cannot be restored
// (irrecoverable commands), or change mnemos itself (self-tampering). A hit
// is a denial; no rule, grant, level, approval or score overrides it, and
// the Guard has no field that could loosen it. Phase 2, the [Judge], is
// graded: a score in [0,1] for how well the command fits the agent's
// stated intent, compared with a threshold. Keeping the two apart means a
// judge that is convinced the user "really wanted" a cleanup never gets to
// argue with the guard about deleting /etc.
//
// # The guard
//
// The guard reads parsed commands ([shellparse.Command]), not command-line
// text. It looks at the program's base name (/bin/rm, /usr/bin/rm and ./rm
// are all rm), its options, every argument, every redirect target,
// assignment values and the argv of the wrappers the parser peeled (sudo,
// env, ...); the rules apply to the peeled command whatever wrapped it.
// Before a word is matched, a leading "~", "~/", "$HOME" or "${HOME}" is
// expanded with [Guard.Home], the word is made absolute against the working
// directory and cleaned, so /etc/../etc/shadow and //etc///shadow are
// /etc/shadow. Paths written inside a word count too ("--key-file=/root/k",
// "if=/dev/sda", "open('/home/u/.ssh/id_rsa')", curl's "-d @/etc/shadow").
// Symbolic links are not followed: the sandbox is the layer that sees the
// real file system; but a path that goes through a directory before a ".."
// touches that directory too (/proc/self/cwd/../x is under /proc/self). A
// command run in another directory by its wrapper (env -C, sudo --chdir,
// nsenter/unshare --wd) is judged there as well; a directory computed at
// run time is taken as "/".
//
// Only words a program may use as files count. echo's and printf's words, a
// git commit message (-m, or -F - with a here-document), git log's -S, -G
// and --grep, a grep or git grep pattern, find's -name and -path patterns,
// gh's titles and bodies, and the command mnemos policy check/explain is
// asked about are data, so mentioning /etc/shadow in them is not a hit; ls,
// stat, df and lsblk look at names and metadata only, so listing ~/.ssh is
// not a hit either. An unknown program gets no such benefit: every one of
// its words may be a file.
//
// Interpreters given code inline (python -c, node -e, perl -e, ruby -e,
// php -r, lua -e, deno eval, osascript -e, ...) or on a here-document have
// their string literals read: a literal that is a shell command, a list of
// literals that is an argv, and a literal handed to a recursive delete
// (rmtree, rm_rf, rmSync, ...) are judged as the commands they are, so
// os.system("rm -rf /") is irrecoverable. The guard does not tell a literal
// that is run from one that is printed.
//
// Name patterns that choose the files a program reads count as the names
// they may match: grep --include=.env*, rg -g .env, and find's -name and
// -path when find runs a command on what it finds (find only listing
// names reads nothing).
//
// Name patterns that leave files out name none: tar's and rsync's
// --exclude (and rsync's "- PATTERN" filter rules), zip's -x list, 7z's
// -x!, grep's --exclude and --exclude-dir, rg's negated globs (-g '!.env'),
// and git pathspecs with exclude magic (":(exclude).env", ":!.env",
// ":^.env"); git check-ignore only matches names against the ignore
// rules. Only the excluded word is spared: "tar czf h.tgz --exclude=.env ~"
// still reads the home directory's other secrets. A file of patterns
// (--exclude-from) is read, and a word computed at run time stays a
// possible path.
//
// A word computed at run time ($X, $(cmd)) is not known, and never makes a
// hit by itself; but what its static prefix already fixes does
// ("~/.ssh/$X" is inside ~/.ssh), so does what its static tail fixes
// wherever the computed part points ("$D/.env" is a .env file,
// "$(pwd)/../.ssh/id_rsa" a key in a .ssh directory), and a glob hits when it could match a
// forbidden path ("/et?/shad*", "~/.ssh/*"), following the shell's rule
// that a glob reaches a dot file only when it starts with a dot. A loop's
// variable over a glob ("for f in ~/.ssh/*; do cat "$f"; done") reaches
// the guard as that glob, from the parser.
//
// Decisions worth knowing:
//   - Any directory named .ssh, .gnupg, and the credential files (.aws/credentials,
//     .config/*/credentials*, .netrc, .docker/config.json, .kube/config,
//     .git-credentials, .pgpass, .env, its backup .env~, and .env.* but not .env.example,
//     .env.sample, .env.template) are forbidden wherever they are, not only
//     in the user's home. So are the token and key stores of common CLIs:
//     .npmrc, .pypirc, .config/gh/hosts.yml, .config/hub, gcloud's
//     credential files, .azure's token caches, .local/share/keyrings,
//     .password-store, .vault-token, .terraform.d, .cargo and .gem
//     credentials, .m2/settings-security.xml, .my.cnf, .boto, .s3cfg,
//     rclone.conf, .config/op, age keys, .oci and Hugging Face tokens; the
//     credentials of coding agents' CLIs (.claude/.credentials.json,
//     .codex/auth.json, .gemini/oauth_creds.json, Copilot's), AWS SSO and
//     CLI caches, kubeconfig copies (.kube/config-*), browser profiles
//     (Chrome, Chromium, Brave, Firefox), wallets, and shell, interpreter
//     and database client histories, where typed secrets stay. Anchored:
//     TLS private keys under /etc (ssl/private, pki, letsencrypt), the
//     Kerberos keytab, saved network passwords and container secrets
//     (/run/secrets, /var/run/secrets).
//     Listing them, and the directories that hold them, is not a hit. Programs that only read may read *.pub and
//     known_hosts under .ssh; any other use (write, copy, chmod) is a hit.
//   - /root and below is forbidden unless the user's home is /root (or
//     inside it): then the home rules apply to it instead.
//   - /proc itself, every /proc/<pid>, /proc/self and /proc/thread-self are
//     forbidden (environ, mem, and root/ which reaches the whole file
//     system); system-wide files such as /proc/cpuinfo are not.
//   - A fork bomb is a command that calls the function it sits in from a
//     pipeline, the background, a subshell or a substitution inside that
//     function's body. A plain recursive call is not a guard matter.
//   - A recursive delete, move or permission change of the root, the
//     home directory, a top-level system directory, one that holds the
//     installed system as a whole (/usr/bin, /usr/lib, /usr/share,
//     /usr/local, /var/lib, ...) or any user's home (/home/*) is
//     irrecoverable; deeper directories (/usr/local/go,
//     /var/lib/apt/lists) are left to the policy.
//   - A recursive delete (rm -r, find -delete or -exec rm, rsync --delete)
//     of the workspace ([Guard.Workspace]) or of a directory that holds it
//     is irrecoverable, however it is named: "rm -rf ..", "cd .. && rm -rf
//     .", rm -rf "$PWD" ($PWD is the directory the command runs in).
//     Deleting inside the workspace is not ("rm -rf build", "rm -rf *"),
//     nor is a find from the workspace that picks what it deletes ("find
//     . -name '*.o' -delete"); a find that deletes all it meets from there
//     ("find . -delete") takes .git with it, and is; so is a recursive
//     delete of the workspace's .git, or of its objects or refs ("rm -rf
//     .git", "rm -rf .*"), which takes every commit not pushed.
//   - rsync with a delete option (--delete, --delete-after, --del, ...)
//     removes from its destination what the source lacks: a local
//     destination counts as a recursive delete ("rsync -a --delete
//     empty/ ~/" is "rm -rf ~"). With --remove-source-files its local
//     sources count as moved away. A destination on another host
//     (host:path) is not the guard's to judge.
//   - mkfs and its relatives are irrecoverable on any operand; asked only
//     for --help or a version they are not.
//   - .env.example, .env.sample, .env.template and names ending the same
//     way (.env.local.example) are templates, not secrets.
//   - An empty Home is an unknown home: "~" still names a home directory,
//     so "rm -rf ~" is still a hit. An empty or relative working directory
//     is taken as "/".
//   - A recursive read (cp -r, tar, zip, rsync, grep -r, rg, ag) of a
//     protected path, of a directory inside one, or of a directory that
//     holds one is self-tampering: mnemos's state directory keeps the
//     audit key, and whoever reads it can rewrite the audit log. rg and
//     ag, which skip hidden names unless told not to, reach a protected
//     path only through names without a leading dot ("rg x ~" passes
//     ~/.local/state/mnemos by, not a MNEMOS_HOME of ~/mnemos).
//   - "mnemos" is always a self name; read-only subcommands (policy check,
//     explain, registry, table, outcome, lint, test; approvals list, show;
//     grants list; extensions list; audit tail, verify; sandbox status;
//     version; help) pass, every other subcommand, known or not, is
//     self-tampering.
//
// A caller that checks many commands (every command of a request, from
// every directory it may run in) makes the guard ready once with
// [Guard.Prepare]: the [Prepared] guard judges exactly as the Guard, with
// its paths cleaned once instead of at every check.
//
// # The judge
//
// The rule-based judge ("rule-based-v1", seed 003 ch. 4) starts at 0.70,
// adds 0.10 when the intent mentions a token of three or more letters of
// the program name, subtracts 0.20 when an argument holds ".." and "/"
// (possible path traversal; redirect targets count as arguments), subtracts 0.10 for a shape anomaly (an
// assignment name that is not an identifier, a control character in a
// word), adds 0.05 for a non-critical command, and clamps to [0,1]. Below
// the threshold (default 0.30) the verdict is a denial blocked by the judge.
// Its reasons name the adjustments and never quote arguments.
//
// # The log
//
// [AppendLog] writes one JSON line per verdict to a monthly file. A record
// keeps option names, never values or paths; the intent is kept redacted
// (every word of the command replaced, credentials and opaque tokens
// removed) and cut to 200 characters, because an agent may repeat a secret
// in its explanation. The gate writes it for every decision that is not a
// dry run, under mnemos's state directory (vaglio/YYYY-MM.jsonl), and a
// write that fails changes no decision; [ReadLog] reads it back for
// `mnemos audit vaglio`.
//
// What vaglio never does: run commands, open the network or a database,
// read the file system to decide (only the log is written and read), consult the
// policy, or let any input loosen the guard.
package vaglio
