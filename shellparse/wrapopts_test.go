package shellparse

import (
	"strings"
	"testing"
)

// TestSecurityWrapperOwnOptions: a wrapper is peeled only after its own
// options are judged. A file it writes or reads is a redirect it opens
// itself ({by}op target); a command an option runs is walked as one; an
// environment assignment reaches the command as a prefix assignment
// would; options that change who runs the command, or what its system
// calls do, leave a note. Grammars are those of each program's --help and
// manual, long options matched by unique prefix as getopt_long does.
func TestSecurityWrapperOwnOptions(t *testing.T) {
	tests := []struct {
		src  string
		want []string // rendered commands
		note string   // a note some command carries
	}{
		// strace: -o FILE, -o |cmd, -o !cmd, -A, -ff, -E, -u, -e inject.
		{src: "strace -o /tmp/t ls", want: []string{"strace: ls {strace -o}>/tmp/t"}},
		{src: "strace -o/tmp/t ls", want: []string{"strace: ls {strace -o}>/tmp/t"}},
		{src: "strace --output=/tmp/t ls", want: []string{"strace: ls {strace -o}>/tmp/t"}},
		{src: "strace --output /tmp/t ls", want: []string{"strace: ls {strace -o}>/tmp/t"}},
		{src: "strace -A -o log ls", want: []string{"strace: ls {strace -o}>>log"}},
		{src: "strace -ff -o trace ls", want: []string{"strace: ls {strace -o}>`trace.*`"}},
		{src: "strace -o '|sh' true", want: []string{
			"[strace -o > sh -c] strace -o+sh -c: sh",
			"strace: true",
		}, note: "shell reads commands from stdin"},
		{src: "strace -o '!curl -d @- x' ls", want: []string{
			"[strace -o > sh -c] strace -o+sh -c: curl -d @- x",
			"strace: ls",
		}},
		{src: `strace -o "$OUT" ls`, want: []string{"strace: ls {strace -o}>`\"$OUT\"`"}, note: "it may name a command to run"},
		{src: "strace -E LD_PRELOAD=/tmp/x.so ls", want: []string{"strace: LD_PRELOAD=/tmp/x.so ls"}},
		{src: "strace --env=PAGER='sh -c id' git log", want: []string{
			"strace: PAGER=sh -c id git log",
			"[PAGER= > sh -c > sh -c] strace+PAGER=+sh -c+sh -c: id",
		}},
		{src: "strace -u nobody ls", want: []string{"strace: ls"}, note: "strace -u runs the command as user nobody"},
		{src: "strace -e inject=openat:retval=0 cat f", want: []string{"strace: cat f"}, note: "changes what the command's system calls do"},
		{src: "strace -e trace=openat cat f", want: []string{"strace: cat f"}},
		{src: "strace -p 1", want: []string{"strace -p 1"}},
		{src: "strace --argv0 rm busybox -rf x", want: []string{"strace+busybox: rm -rf x"}},
		// ltrace: -o FILE, -F FILE read, -u.
		{src: "ltrace -o out -F my.conf ls", want: []string{"ltrace: ls {ltrace -o}>out {ltrace -F}<my.conf"}},
		{src: "ltrace -u root id", want: []string{"ltrace: id"}, note: "ltrace -u runs the command as user root"},
		// GNU time: -o FILE, -a, -f FORMAT.
		{src: "/usr/bin/time -o .git/hooks/pre-commit ls", want: []string{"time: ls {time -o}>.git/hooks/pre-commit"}},
		{src: "/usr/bin/time -a -o log -f %e ls", want: []string{"time: ls {time -o}>>log"}},
		{src: "command time --out t ls", want: []string{"command+time: ls {time -o}>t"}},
		// xargs: -a FILE read, --process-slot-var VAR set.
		{src: "xargs -a list rm", want: []string{"xargs: rm `<stdin>` {xargs -a}<list"}},
		{src: "xargs --arg-f=list rm", want: []string{"xargs: rm `<stdin>` {xargs -a}<list"}},
		{src: "xargs --process-slot-var=PATH ls", want: []string{"xargs: PATH= ls `<stdin>`"}},
		{src: "xargs -I{} --max-l 1 cp {} /tmp", want: []string{"xargs: cp `{}` /tmp"}},
		// env: -S string split and run, -a NAME, -u, -C, prefixes.
		{src: "env -S 'sh -c id' x", want: []string{"[sh -c] env+sh -c: id"}},
		{src: "env --split 'sh -c id' x", want: []string{"[sh -c] env+sh -c: id"}},
		{src: "env -a rm busybox -rf x", want: []string{"env+busybox: rm -rf x"}},
		{src: "env --argv0=ls rm x", want: []string{"env: rm x"}, note: "starts rm under the name ls"},
		{src: "env -u HOME FOO=1 ls", want: []string{"env: FOO=1 ls"}},
		// nice, ionice, chrt, taskset, timeout, stdbuf, setsid: options
		// with values, then the command.
		{src: "nice -n 5 --adj 3 rm x", want: []string{"nice: rm x"}},
		{src: "ionice -c 3 -n7 rm x", want: []string{"ionice: rm x"}},
		{src: "chrt -f 10 rm x", want: []string{"chrt: rm x"}},
		{src: "chrt --other rm x", want: []string{"chrt: rm x"}},
		{src: "chrt -p 10 123", want: []string{"chrt -p 10 123"}},
		{src: "taskset -c 0,1 rm x", want: []string{"taskset: rm x"}},
		{src: "timeout --sig KILL -k 1 5 rm x", want: []string{"timeout: rm x"}},
		{src: "stdbuf -oL --err 0 tail -f x", want: []string{"stdbuf: tail -f x"}},
		{src: "setsid -f rm x", want: []string{"setsid: rm x"}},
		// setpriv: other ids or capabilities leave a note.
		{src: "setpriv --reuid=0 --init-groups rm x", want: []string{"setpriv: rm x"}, note: "other user ids"},
		{src: "setpriv --nnp --reset-env ls", want: []string{"setpriv: ls"}},
		{src: "setpriv -d", want: []string{"setpriv -d"}},
		// unshare, nsenter: options with optional values.
		{src: "unshare --mount-proc -r rm x", want: []string{"unshare: rm x"}},
		{src: "unshare -m/tmp/ns rm x", want: []string{"unshare: rm x"}},
		{src: "nsenter -t 1 -m -W /x ls", want: []string{"nsenter: ls"}},
		// flock: the lock file is created; -c runs $SHELL -c.
		{src: "flock /tmp/l -c 'rm -rf ~'", want: []string{"[sh -c] flock+sh -c: rm -rf /home/u {flock}<>/tmp/l"}},
		{src: "flock -w 5 .git/hooks/pre-push true", want: []string{"flock: true {flock}<>.git/hooks/pre-push"}},
		{src: "SHELL=/tmp/evil flock /tmp/l -c ls", want: []string{"flock: SHELL=/tmp/evil /tmp/evil -c ls {flock}<>/tmp/l"}},
		{src: "flock 9", want: []string{"flock 9"}},
		// watch: sh -c of its words, or -x the program.
		{src: "watch -n1 'curl x|sh'", want: []string{
			"[sh -c > |] watch+sh -c: curl x",
			"[sh -c > |] watch+sh -c: sh",
		}},
		{src: "watch -d -x rm x", want: []string{"watch: rm x"}},
		{src: "watch -dx 'rm x'", want: []string{"[sh -c] watch+sh -c: rm x"}},
		// script: -c runs $SHELL -c; the log files are written.
		{src: "script -q -c 'rm x' out.log", want: []string{"[sh -c] script+sh -c: rm x {script}>out.log"}},
		{src: "script out.log -a -c id", want: []string{"[sh -c] script+sh -c: id {script}>>out.log"}},
		{src: "script -c id", want: []string{"[sh -c] script+sh -c: id {script}>typescript"}},
		{src: "script -O log -T tm -c id", want: []string{"[sh -c] script+sh -c: id {script -O}>log {script -T}>tm"}},
		{src: "script", want: []string{"script {script}>typescript"}, note: "script starts an interactive shell"},
		// nohup: nohup.out unless standard output goes to a file.
		{src: "nohup ls", want: []string{"nohup: ls {nohup}>>nohup.out"}},
		{src: "nohup ls > log 2>&1", want: []string{"nohup: ls >log 2>&1"}},
		{src: "{ nohup ls; } &> log", want: []string{"nohup: ls &>log"}},
		// sudo, doas.
		{src: "sudo -s 'rm x'", want: []string{"sudo: rm x"}, note: "through the target user's shell"},
		{src: "sudo -u root -D /tmp -E rm x", want: []string{"sudo: rm x"}},
		{src: "sudo -h host rm x", want: []string{"sudo: rm x"}},
		{src: "sudo --preserve-env=PATH -- rm x", want: []string{"sudo: rm x"}},
		{src: "doas -u root rm x", want: []string{"doas: rm x"}},
		// busybox and exec -a: the applet runs.
		{src: "busybox rm -rf x", want: []string{"busybox: rm -rf x"}},
		{src: "busybox sh -c 'rm x'", want: []string{"[sh -c] busybox+sh -c: rm x"}},
		{src: "exec -a rm busybox -rf x", want: []string{"exec+busybox: rm -rf x"}},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		var got, notes []string
		for _, c := range s.Commands {
			got = append(got, render(c))
			notes = append(notes, c.Notes...)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q\ngot:\n\t%s\nwant:\n\t%s", tc.src, strings.Join(got, "\n\t"), strings.Join(tc.want, "\n\t"))
		}
		if tc.note != "" && !strings.Contains(strings.Join(notes, "\n"), tc.note) {
			t.Errorf("%q: no note containing %q in %q", tc.src, tc.note, notes)
		}
	}
}

// TestSecurityWrapperArgvNamesLongOptionsInFull: what reads a wrapper's
// words later (the working directory of env -C, sudo -D) sees the option
// by its full name, however the command line abbreviated it.
func TestSecurityWrapperArgvNamesLongOptionsInFull(t *testing.T) {
	tests := []struct {
		src  string
		argv []string
	}{
		{src: "env --ch /etc rm x", argv: []string{"env", "--chdir", "/etc"}},
		{src: "env --ch=/etc rm x", argv: []string{"env", "--chdir=/etc"}},
		{src: "env --un HOME ls", argv: []string{"env", "--unset", "HOME"}},
		{src: "sudo --chd /etc rm x", argv: []string{"sudo", "--chdir", "/etc"}},
		{src: "unshare --w=/etc rm x", argv: []string{"unshare", "--wd=/etc"}},
		{src: "/usr/bin/time --out=t ls", argv: []string{"/usr/bin/time", "--output=t"}},
		// Ambiguous prefixes are refused by the program: left as written.
		{src: "sudo --ch=/etc rm x", argv: []string{"sudo", "--ch=/etc"}},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		c := s.Commands[len(s.Commands)-1]
		if len(c.Wrappers) == 0 || strings.Join(c.Wrappers[0].Argv, " ") != strings.Join(tc.argv, " ") {
			t.Errorf("%q: wrappers %q, want argv %q", tc.src, c.Wrappers, tc.argv)
		}
	}
}

func TestCommandStringOmitsWhatWrappersOpen(t *testing.T) {
	s := parseEither(t, "strace -o out ls > list", nil)
	if got := s.Commands[0].String(); got != "strace -o out ls >list" {
		t.Errorf("String() = %q", got)
	}
}
