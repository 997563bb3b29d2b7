package shellparse

import (
	"strings"
	"testing"
)

type parseCase struct {
	name string
	src  string   // a script, or
	argv []string // an exec argv
	want []string // rendered commands, see render
}

// parseCases is the specification of what the parser finds. Every simple
// command a script would run must appear: a missing one is a security bug.
var parseCases = []parseCase{
	{name: "plain command", src: "ls -la /tmp", want: []string{
		"ls -la /tmp",
	}},
	{name: "typical three", src: "cd /tmp/x && go test ./... | tee out.txt", want: []string{
		"[&&] cd /tmp/x",
		"[&& > |] go test ./...",
		"[&& > |] tee out.txt",
	}},
	{name: "or list", src: "make || echo failed", want: []string{
		"[||] make",
		"[||] echo failed",
	}},
	{name: "semicolons and newlines", src: "a; b\nc", want: []string{
		"a",
		"b",
		"c",
	}},
	{name: "background", src: "sleep 1 & wait", want: []string{
		"[&] sleep 1",
		"wait",
	}},
	{name: "negation", src: "! grep -q x f", want: []string{
		"grep -q x f",
	}},
	{name: "pipeline stderr", src: "make |& tee log", want: []string{
		"[|] make",
		"[|] tee log",
	}},
	{name: "subshell", src: "(cd /tmp && rm -rf x)", want: []string{
		"[(…) > &&] cd /tmp",
		"[(…) > &&] rm -rf x",
	}},
	{name: "brace group", src: "{ ls; pwd; }", want: []string{
		"ls",
		"pwd",
	}},
	{name: "if elif else", src: "if test -f a; then rm a; elif test -d a; then rmdir a; else touch a; fi", want: []string{
		"[if] test -f a",
		"[if] rm a",
		"[if] test -d a",
		"[if] rmdir a",
		"[if] touch a",
	}},
	{name: "for loop static", src: "for f in a b; do rm \"$f\"; done", want: []string{
		"[for] rm a",
		"[for] rm b",
	}},
	{name: "for loop glob", src: "for f in *.tmp; do rm \"$f\"; done", want: []string{
		"[for] rm `*.tmp`",
	}},
	{name: "for loop glob and words", src: "for f in ~/.{ssh,aws}/* x; do cat $f \"${f}.bak\"; done", want: []string{
		"[for] cat `/home/u/.ssh/*` `/home/u/.ssh/*.bak`",
		"[for] cat `/home/u/.aws/*` `/home/u/.aws/*.bak`",
		"[for] cat x x.bak",
	}},
	{name: "select over glob", src: "select f in /etc/sh*; do cat \"$f\"; done", want: []string{
		"[select] cat `/etc/sh*`",
	}},
	{name: "for loop glob copied", src: "for f in /etc/*; do g=\"$f\"; h=$g; cat \"$h\"; done", want: []string{
		"[for] cat `/etc/*`",
	}},
	{name: "for loop glob quoted part", src: "for f in '[x]'*; do cat \"$f\"; done", want: []string{
		"[for] cat `\\[x]*`",
	}},
	{name: "for loop glob changed", src: "for f in /etc/*; do cat \"${f%.conf}\"; done", want: []string{
		"[for] cat `\"${f%.conf}\"`",
	}},
	{name: "for loop c style", src: "for ((i=0; i<3; i++)); do echo $i; done", want: []string{
		"[for] echo `$i`",
	}},
	{name: "while loop", src: "while read -r l; do echo \"$l\"; done < in.txt", want: []string{
		"[while] read -r l <in.txt",
		"[while] echo `\"$l\"` <in.txt",
	}},
	{name: "until loop", src: "until ping -c1 h; do sleep 1; done", want: []string{
		"[until] ping -c1 h",
		"[until] sleep 1",
	}},
	{name: "case", src: "case \"$1\" in start) run;; stop) kill 1;; esac", want: []string{
		"[case] run",
		"[case] kill 1",
	}},
	{name: "select", src: "select x in a b; do echo \"$x\"; break; done", want: []string{
		"[select] echo a",
		"[select] break",
		"[select] echo b",
		"[select] break",
	}},
	{name: "function def only", src: "cleanup() { rm -rf /tmp/build; }", want: []string{
		"[function cleanup] rm -rf /tmp/build",
	}},
	{name: "function keyword", src: "function f { echo hi; }", want: []string{
		"[function f] echo hi",
	}},
	{name: "function called", src: "f() { rm -rf \"$1\"; }; f /data", want: []string{
		"[function f] rm -rf /data",
	}},
	{name: "function called twice", src: "f() { echo \"$1\"; }; f a; f b", want: []string{
		"[function f] echo a",
		"[function f] echo b",
	}},
	{name: "function recursion", src: "f() { f; }; f", want: []string{
		"[function f] f",
	}},
	{name: "fork bomb", src: ":(){ :|:& };:", want: []string{
		"[function : > & > |] :",
		"[function : > & > |] :",
	}},
	{name: "function args all", src: "run() { \"$@\"; }; run git push --force", want: []string{
		"[function run] git push --force",
	}},
	{name: "function shadows command", src: "ls() { rm -rf /; }; ls", want: []string{
		"[function ls] rm -rf /",
	}},
	{name: "command skips function", src: "ls() { rm -rf /; }; command ls", want: []string{
		"[function ls] rm -rf /",
		"command: ls",
	}},
	{name: "cmd subst", src: "echo $(whoami)", want: []string{
		"[$(…)] whoami",
		"echo `$(whoami)`",
	}},
	{name: "backticks", src: "echo `date`", want: []string{
		"[$(…)] date",
		"echo `$(date)`",
	}},
	{name: "nested cmd subst", src: "echo $(ls $(pwd))", want: []string{
		"[$(…) > $(…)] pwd",
		"[$(…)] ls `$(pwd)`",
		"echo `$(ls $(pwd))`",
	}},
	{name: "proc subst in", src: "diff <(sort a) <(sort b)", want: []string{
		"[<(…)] sort a",
		"[<(…)] sort b",
		"diff `<(sort a)` `<(sort b)`",
	}},
	{name: "proc subst out", src: "tee >(gzip > f.gz) < in", want: []string{
		"[>(…)] gzip >f.gz",
		"tee `>(gzip >f.gz)` <in",
	}},
	{name: "redirect target subst", src: "echo x > $(rm -rf /)", want: []string{
		"[redirect target > $(…)] rm -rf /",
		"echo x >`$(rm -rf /)`",
	}},
	{name: "param default subst", src: "echo ${x:-$(rm -rf /)}", want: []string{
		"[$(…)] rm -rf /",
		"echo `${x:-$(rm -rf /)}`",
	}},
	{name: "param assign default", src: "echo ${x:=$(id)}", want: []string{
		"[$(…)] id",
		"echo `${x:=$(id)}`",
	}},
	{name: "arith subst", src: "echo $(( $(wc -l < f) + 1 ))", want: []string{
		"[$(…)] wc -l <f",
		"echo `$(($(wc -l <f) + 1))`",
	}},
	{name: "array index subst", src: "echo ${a[$(id)]}", want: []string{
		"[$(…)] id",
		"! `$(id)`",
		"echo `${a[$(id)]}`",
	}},
	{name: "test clause subst", src: "[[ $(id -u) == 0 ]] && echo root", want: []string{
		"[&& > [[…]] > $(…)] id -u",
		"[&&] echo root",
	}},
	{name: "test clause arith var", src: "x='a[$(reboot)]'; [[ $x -eq 1 ]]", want: []string{
		"[[[…]] > arithmetic > $(…)] reboot",
		"[[[…]] > arithmetic] ! `$(reboot)`",
		"[[[…]] > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "arith command var", src: "x='a[$(reboot)]'; (( x ))", want: []string{
		"[((…)) > arithmetic > $(…)] reboot",
		"[((…)) > arithmetic] ! `$(reboot)`",
		"[((…)) > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer declared from a var", src: "x='a[$(reboot)]'; declare -i y=x", want: []string{
		"declare -i y=x",
		"[arithmetic > arithmetic > $(…)] reboot",
		"[arithmetic > arithmetic] ! `$(reboot)`",
		"[arithmetic > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer assigned a var", src: "x='a[$(reboot)]'; declare -i y; y=x", want: []string{
		"declare -i y",
		"[arithmetic > arithmetic > $(…)] reboot",
		"[arithmetic > arithmetic] ! `$(reboot)`",
		"[arithmetic > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer appended a var", src: "x='a[$(reboot)]'; declare -i y; y+=x", want: []string{
		"declare -i y",
		"[arithmetic > arithmetic > $(…)] reboot",
		"[arithmetic > arithmetic] ! `$(reboot)`",
		"[arithmetic > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer element", src: "declare -ai y; y[0]='a[$(reboot)]'", want: []string{
		"declare -ai y",
		"[arithmetic > $(…)] reboot",
		"[arithmetic] ! `$(reboot)`",
		"[arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer read", src: "declare -i y; read y <<< 'a[$(reboot)]'", want: []string{
		"declare -i y",
		"read y <<<a[$(reboot)]",
		"[arithmetic > $(…)] reboot",
		"[arithmetic] ! `$(reboot)`",
		"[arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer local", src: "f() { local -i n=$1; }; f 'a[$(reboot)]'", want: []string{
		"[function f] local -i n=a[$(reboot)]",
		"[function f > arithmetic > $(…)] reboot",
		"[function f > arithmetic] ! `$(reboot)`",
		"[function f > arithmetic] ! `a[$(reboot)]`",
	}},
	{name: "integer plain", src: "declare -i n=5; echo $n", want: []string{
		"declare -i n=5",
		"echo `$n`",
	}},
	{name: "declare value", src: "declare -r x=$(id)", want: []string{
		"[$(…)] id",
		"declare -r `x=$(id)`",
	}},
	{name: "export value", src: "export PATH=$(pwd)/bin:$PATH", want: []string{
		"[$(…)] pwd",
		"export `PATH=$(pwd)/bin:$PATH`",
	}},
	{name: "local value", src: "f() { local d=$(mktemp -d); rm -rf \"$d\"; }; f", want: []string{
		"[function f > $(…)] mktemp -d",
		"[function f] local `d=$(mktemp -d)`",
		"[function f] rm -rf `\"$d\"`",
	}},
	{name: "assignment only", src: "x=$(curl -s example.com)", want: []string{
		"[$(…)] curl -s example.com",
	}},
	{name: "prefix assignment", src: "LC_ALL=C sort f", want: []string{
		"LC_ALL=C sort f",
	}},
	{name: "redirect only", src: "> /etc/passwd", want: []string{
		" >/etc/passwd",
	}},
	{name: "compound redirect", src: "{ echo a; echo b; } > /tmp/o", want: []string{
		"echo a >/tmp/o",
		"echo b >/tmp/o",
	}},
	{name: "redirect fd", src: "ls 2>&1 >/dev/null", want: []string{
		"ls 2>&1 >/dev/null",
	}},
	{name: "append and clobber", src: "echo a >> f; echo b >| g; echo c &> h", want: []string{
		"echo a >>f",
		"echo b >|g",
		"echo c &>h",
	}},
	{name: "here-string", src: "cat <<< \"hello\"", want: []string{
		"cat <<<hello",
	}},
	{name: "here-doc static", src: "cat <<EOF\nhi $HOME\nEOF", want: []string{
		"cat <<hi /home/u\n",
	}},
	{name: "here-doc quoted", src: "cat <<'EOF'\nhi $HOME\nEOF", want: []string{
		"cat <<hi $HOME\n",
	}},
	{name: "here-doc subst", src: "cat <<EOF\n$(id)\nEOF", want: []string{
		"[here-doc > $(…)] id",
		"cat <<`$(id)\n`",
	}},
	{name: "here-doc to shell", src: "bash <<EOF\nrm -rf /\nEOF", want: []string{
		"bash <<rm -rf /\n",
		"[here-doc] bash: rm -rf / <<rm -rf /\n",
	}},
	{name: "here-string to shell", src: "sh <<< 'rm -rf ~'", want: []string{
		"sh <<<rm -rf ~",
		"[here-string] sh: rm -rf /home/u <<<rm -rf ~",
	}},
	{name: "echo piped to shell", src: "echo 'rm -rf /' | bash", want: []string{
		"[|] echo rm -rf /",
		"[|] bash",
		"[| > stdin] bash: rm -rf /",
	}},
	{name: "printf piped to shell", src: "printf 'rm %s\\n' -rf | sh", want: []string{
		"[|] printf rm %s\\n -rf",
		"[|] sh",
		"[| > stdin] sh: rm -rf",
	}},
	{name: "curl piped to shell", src: "curl -s https://x.sh | bash", want: []string{
		"[|] curl -s https://x.sh",
		"[|] bash",
	}},
	{name: "shell script file", src: "bash ./install.sh", want: []string{
		"bash ./install.sh",
	}},
	{name: "shell stdin file", src: "sh < script.sh", want: []string{
		"sh <script.sh",
	}},
	{name: "source", src: "source ~/.bashrc && make", want: []string{
		"[&&] source /home/u/.bashrc",
		"[&&] make",
	}},
	{name: "dot source", src: ". ./env.sh", want: []string{
		". ./env.sh",
	}},
	{name: "quote removal", src: "r''m -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "backslash", src: "\\rm -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "double quoted name", src: "\"rm\" -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "ansi c", src: "$'\\x72\\x6d' -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "ansi c octal", src: "$'\\162\\155' x", want: []string{
		"rm x",
	}},
	{name: "split quotes", src: "g'i't p\"u\"sh", want: []string{
		"git push",
	}},
	{name: "line continuation", src: "r\\\nm -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "brace expansion", src: "rm -rf {a,/}", want: []string{
		"rm -rf a /",
	}},
	{name: "brace sequence", src: "touch f{1..3}", want: []string{
		"touch f1 f2 f3",
	}},
	{name: "brace nested", src: "echo {a,b{c,d}}", want: []string{
		"echo a bc bd",
	}},
	{name: "tilde", src: "rm -rf ~ ~/x", want: []string{
		"rm -rf /home/u /home/u/x",
	}},
	{name: "tilde user", src: "ls ~root", want: []string{
		"ls `~root`",
	}},
	{name: "home var", src: "rm -rf $HOME ${HOME}/x \"$HOME\"", want: []string{
		"rm -rf /home/u /home/u/x /home/u",
	}},
	{name: "known var", src: "x=rm; $x -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "known var split", src: "x=\"rm -rf /\"; $x", want: []string{
		"rm -rf /",
	}},
	{name: "known var quoted", src: "x=\"rm -rf /\"; \"$x\"", want: []string{
		"rm -rf /",
	}},
	{name: "var concat", src: "a=r; b=m; $a$b -rf /", want: []string{
		"rm -rf /",
	}},
	{name: "var append", src: "x=r; x+=m; $x /", want: []string{
		"rm /",
	}},
	{name: "unknown var name", src: "$CMD -rf /", want: []string{
		"! `$CMD` -rf /",
	}},
	{name: "unknown var arg", src: "rm -rf \"$DIR\"/x", want: []string{
		"rm -rf `\"$DIR\"/x`",
	}},
	{name: "cmd subst name", src: "$(which rm) -rf /", want: []string{
		"[$(…)] which rm",
		"! `$(which rm)` -rf /",
	}},
	{name: "glob arg", src: "rm -rf /*", want: []string{
		"rm -rf `/*`",
	}},
	{name: "glob quoted", src: "rm \"*\" '?'", want: []string{
		"rm * ?",
	}},
	{name: "glob class", src: "ls [ab]*", want: []string{
		"ls `[ab]*`",
	}},
	{name: "extglob", src: "ls @(a|b)", want: []string{
		"ls `@(a|b)`",
	}},
	{name: "indirect", src: "x=y; y=rm; ${!x} /", want: []string{
		"rm /",
	}},
	{name: "param ops", src: "x=RM.txt; ${x,,} ${x%.txt} ${x#R} ${x/M/m} ${#x} ${x:0:1}", want: []string{
		"rm.txt RM M.txt Rm.txt 6 R",
	}},
	{name: "param case", src: "x=rm; ${x^^}", want: []string{
		"RM",
	}},
	{name: "array", src: "a=(rm -rf /); \"${a[@]}\"", want: []string{
		"rm -rf /",
	}},
	{name: "array index", src: "a=(ls rm); ${a[1]} x", want: []string{
		"rm x",
	}},
	{name: "array append", src: "a=(rm); a+=(-rf /); \"${a[@]}\"", want: []string{
		"rm -rf /",
	}},
	{name: "ifs split", src: "IFS=:; x=rm:-rf:/; $x", want: []string{
		"rm -rf /",
	}},
	{name: "arith value", src: "n=$((2*3)); echo $n", want: []string{
		"echo 6",
	}},
	{name: "read here-string", src: "read x <<< 'rm'; $x -rf /", want: []string{
		"read x <<<rm",
		"rm -rf /",
	}},
	{name: "read raw two names", src: "read -r a b <<< 'rm -rf /'; $a $b", want: []string{
		"read -r a b <<<rm -rf /",
		"rm -rf /",
	}},
	{name: "read from pipe", src: "echo rm | read x; $x /", want: []string{
		"[|] echo rm",
		"[|] read x",
		"! `$x` /",
	}},
	{name: "read unknown", src: "read x; $x", want: []string{
		"read x",
		"! `$x`",
	}},
	{name: "alias", src: "alias ll='rm -rf /'; ll", want: []string{
		"alias ll=rm -rf /",
		"[alias ll] rm -rf /",
	}},
	{name: "alias args", src: "alias g='git push'; g --force", want: []string{
		"alias g=git push",
		"[alias g] git push --force",
	}},
	{name: "alias recursive", src: "alias ls='ls -la'; ls", want: []string{
		"alias ls=ls -la",
		"[alias ls] ls -la",
	}},
	{name: "alias quoted not expanded", src: "alias ll='rm -rf /'; \\ll", want: []string{
		"alias ll=rm -rf /",
		"ll",
	}},
	{name: "if branches unknown", src: "if c; then x=rm; else x=ls; fi; $x /", want: []string{
		"[if] c",
		"! `$x` /",
	}},
	{name: "if same value", src: "if c; then x=ls; else x=ls; fi; $x", want: []string{
		"[if] c",
		"ls",
	}},
	{name: "and branch unknown", src: "x=ls; c && x=rm; $x", want: []string{
		"[&&] c",
		"! `$x`",
	}},
	{name: "loop carried", src: "x=ls; while c; do $x; x=rm; done", want: []string{
		"[while] c",
		"[while] ! `$x`",
	}},
	{name: "loop over names", src: "for c in ls rm; do $c -rf /; done", want: []string{
		"[for] ls -rf /",
		"[for] rm -rf /",
	}},
	{name: "subshell scope", src: "x=ls; (x=rm); $x", want: []string{
		"ls",
	}},
	{name: "cmd subst scope", src: "x=ls; y=$(x=rm); $x", want: []string{
		"ls",
	}},
	{name: "eval static", src: "eval 'rm -rf /'", want: []string{
		"[eval] eval: rm -rf /",
	}},
	{name: "eval joined", src: "eval rm -rf /", want: []string{
		"[eval] eval: rm -rf /",
	}},
	{name: "eval dynamic", src: "eval \"$CODE\"", want: []string{
		"! eval `\"$CODE\"`",
		"[eval] eval: ! `$CODE`",
	}},
	{name: "eval partly dynamic", src: "eval \"rm -rf $DIR\"", want: []string{
		"! eval `\"rm -rf $DIR\"`",
		"[eval] eval: rm -rf `$DIR`",
	}},
	{name: "eval var", src: "c='rm -rf /'; eval \"$c\"", want: []string{
		"[eval] eval: rm -rf /",
	}},
	{name: "bash -c", src: "bash -c 'rm -rf / && ls'", want: []string{
		"[bash -c > &&] bash -c: rm -rf /",
		"[bash -c > &&] bash -c: ls",
	}},
	{name: "sh -c positional", src: "sh -c '$0 -rf \"$1\"' rm /", want: []string{
		"[sh -c] sh -c: rm -rf /",
	}},
	{name: "sh -c args", src: "sh -c '\"$@\"' _ rm -rf /", want: []string{
		"[sh -c] sh -c: rm -rf /",
	}},
	{name: "bash -c dollar1", src: "bash -c '$1 -rf /' _ rm", want: []string{
		"[bash -c] bash -c: rm -rf /",
	}},
	{name: "nested shells", src: "bash -c \"sh -c 'eval \\\"rm -rf /\\\"'\"", want: []string{
		"[bash -c > sh -c > eval] bash -c+sh -c+eval: rm -rf /",
	}},
	{name: "zsh -c", src: "zsh -c 'rm -rf /'", want: []string{
		"[zsh -c] zsh -c: rm -rf /",
	}},
	{name: "dash -ec", src: "dash -ec 'ls'", want: []string{
		"[dash -c] dash -c: ls",
	}},
	{name: "bash -lc", src: "bash -l -c 'make test'", want: []string{
		"[bash -c] bash -c: make test",
	}},
	{name: "shell dynamic script", src: "bash -c \"$SCRIPT\"", want: []string{
		"! bash -c `\"$SCRIPT\"`",
		"[bash -c] bash -c: ! `$SCRIPT`",
	}},
	{name: "shell partly dynamic", src: "bash -c \"rm -rf $DIR/x\"", want: []string{
		"! bash -c `\"rm -rf $DIR/x\"`",
		"[bash -c] bash -c: rm -rf `$DIR/x`",
	}},
	{name: "shell -c no string", src: "bash -c", want: []string{
		"bash -c",
	}},
	{name: "dynamic shell -c", src: "$SHELL -c 'rm -rf /'", want: []string{
		"! `$SHELL` -c rm -rf /",
		"[$SHELL -c] $SHELL -c: rm -rf /",
	}},
	{name: "shell var not exported", src: "x=rm; bash -c '$x /'", want: []string{
		"[bash -c] bash -c: ! `$x` /",
	}},
	{name: "shell var exported", src: "export x=rm; bash -c '$x /'", want: []string{
		"export x=rm",
		"[bash -c] bash -c: x=rm rm /",
	}},
	{name: "shell prefix assign", src: "x=rm bash -c '$x /'", want: []string{
		"[bash -c] bash -c: x=rm rm /",
	}},
	{name: "sudo", src: "sudo -u root -E rm -rf /", want: []string{
		"sudo: rm -rf /",
	}},
	{name: "sudo env assign", src: "sudo FOO=1 make install", want: []string{
		"sudo: FOO=1 make install",
	}},
	{name: "sudo shell", src: "sudo -i", want: []string{
		"sudo -i",
	}},
	{name: "sudo list", src: "sudo -l", want: []string{
		"sudo -l",
	}},
	{name: "sudo bash -c", src: "sudo bash -c 'rm -rf /; id'", want: []string{
		"[bash -c] sudo+bash -c: rm -rf /",
		"[bash -c] sudo+bash -c: id",
	}},
	{name: "doas", src: "doas -u bob ls", want: []string{
		"doas: ls",
	}},
	{name: "doas shell", src: "doas -s", want: []string{
		"doas -s",
	}},
	{name: "pkexec", src: "pkexec rm /x", want: []string{
		"pkexec: rm /x",
	}},
	{name: "env wrapper", src: "env -i -u HOME FOO=bar rm x", want: []string{
		"env: FOO=bar rm x",
	}},
	{name: "env chdir", src: "env -C /tmp ls", want: []string{
		"env: ls",
	}},
	{name: "env split", src: "env -S 'rm -rf /' x", want: []string{
		"env: rm -rf / x",
	}},
	{name: "env only", src: "env", want: []string{
		"env",
	}},
	{name: "nice", src: "nice -n 10 make", want: []string{
		"nice: make",
	}},
	{name: "nice short", src: "nice -5 make", want: []string{
		"nice: make",
	}},
	{name: "ionice", src: "ionice -c 2 -n 7 cp a b", want: []string{
		"ionice: cp a b",
	}},
	{name: "ionice pid", src: "ionice -p 42", want: []string{
		"ionice -p 42",
	}},
	{name: "timeout", src: "timeout -s KILL 10s rm x", want: []string{
		"timeout: rm x",
	}},
	{name: "timeout kill after", src: "timeout --kill-after=5 1m make", want: []string{
		"timeout: make",
	}},
	{name: "nohup", src: "nohup ./server &", want: []string{
		"[&] nohup: ./server {nohup}>>nohup.out",
	}},
	{name: "time keyword", src: "time rm x", want: []string{
		"time: rm x",
	}},
	{name: "time -p keyword", src: "time -p make", want: []string{
		"time: make",
	}},
	{name: "time program", src: "/usr/bin/time -v make", want: []string{
		"time: make",
	}},
	{name: "command", src: "command rm x", want: []string{
		"command: rm x",
	}},
	{name: "command -v", src: "command -v rm", want: []string{
		"command -v rm",
	}},
	{name: "builtin", src: "builtin echo hi", want: []string{
		"builtin: echo hi",
	}},
	{name: "exec", src: "exec rm x", want: []string{
		"exec: rm x",
	}},
	{name: "exec -a", src: "exec -a fake rm x", want: []string{
		"exec: rm x",
	}},
	{name: "exec redirect only", src: "exec > /tmp/log", want: []string{
		"exec >/tmp/log",
	}},
	{name: "stdbuf", src: "stdbuf -oL -e0 grep x f", want: []string{
		"stdbuf: grep x f",
	}},
	{name: "setsid", src: "setsid -f rm x", want: []string{
		"setsid: rm x",
	}},
	{name: "xargs", src: "find . -name '*.o' | xargs rm -f", want: []string{
		"[|] find . -name *.o",
		"[|] xargs: rm -f `<stdin>`",
	}},
	{name: "xargs options", src: "xargs -0 -r -n 1 -P 4 -d , rm", want: []string{
		"xargs: rm `<stdin>`",
	}},
	{name: "xargs replace", src: "xargs -I{} mv {} /tmp/{}.bak", want: []string{
		"xargs: mv `{}` `/tmp/{}.bak`",
	}},
	{name: "xargs no command", src: "xargs", want: []string{
		"xargs: echo `<stdin>`",
	}},
	{name: "xargs shell", src: "xargs sh -c 'rm \"$@\"' _", want: []string{
		"[sh -c] xargs+sh -c: rm `<stdin>`",
	}},
	{name: "find exec", src: "find . -name '*.tmp' -exec rm {} \\;", want: []string{
		"find . -name *.tmp -exec rm {} ;",
		"[find -exec] find -exec: rm `{}`",
	}},
	{name: "find exec plus", src: "find / -type f -exec chmod 777 {} +", want: []string{
		"find / -type f -exec chmod 777 {} +",
		"[find -exec] find -exec: chmod 777 `{}`",
	}},
	{name: "find execdir shell", src: "find . -execdir sh -c 'mv \"$1\" x' _ {} \\;", want: []string{
		"find . -execdir sh -c mv \"$1\" x _ {} ;",
		"[find -execdir > sh -c] find -execdir+sh -c: mv `{}` x",
	}},
	{name: "find ok", src: "find . -ok rm {} ;", want: []string{
		"find . -ok rm {}",
		"[find -ok] find -ok: rm `{}`",
	}},
	{name: "find two actions", src: "find . -exec echo {} \\; -exec rm {} \\;", want: []string{
		"find . -exec echo {} ; -exec rm {} ;",
		"[find -exec] find -exec: echo `{}`",
		"[find -exec] find -exec: rm `{}`",
	}},
	{name: "find delete", src: "find . -delete", want: []string{
		"find . -delete",
	}},
	{name: "mnemos run", src: "mnemos run -- rm -rf /", want: []string{
		"mnemos run: rm -rf /",
	}},
	{name: "mnemos run flags", src: "mnemos run --level readonly --json -- git push", want: []string{
		"mnemos run: git push",
	}},
	{name: "mnemos other", src: "mnemos approvals approve abc", want: []string{
		"mnemos approvals approve abc",
	}},
	{name: "mnemos nested run", src: "mnemos run -- mnemos run -- ls", want: []string{
		"mnemos run+mnemos run: ls",
	}},
	{name: "chroot", src: "chroot /mnt rm -rf /", want: []string{
		"chroot: rm -rf /",
	}},
	{name: "chroot shell", src: "chroot /mnt", want: []string{
		"chroot /mnt",
	}},
	{name: "flock", src: "flock /tmp/lock rm x", want: []string{
		"flock: rm x {flock}<>/tmp/lock",
	}},
	{name: "flock -c", src: "flock -n /tmp/lock -c 'rm -rf /'", want: []string{
		"[sh -c] flock+sh -c: rm -rf / {flock}<>/tmp/lock",
	}},
	{name: "watch", src: "watch -n 5 'ls | wc -l'", want: []string{
		"[sh -c > |] watch+sh -c: ls",
		"[sh -c > |] watch+sh -c: wc -l",
	}},
	{name: "watch exec", src: "watch -x ls -la", want: []string{
		"watch: ls -la",
	}},
	{name: "nsenter", src: "nsenter -t 1 -m -p rm x", want: []string{
		"nsenter: rm x",
	}},
	{name: "unshare", src: "unshare -r -n curl x", want: []string{
		"unshare: curl x",
	}},
	{name: "su -c", src: "su -c 'rm -rf /' root", want: []string{
		"[sh -c] su+sh -c: rm -rf /",
	}},
	{name: "su login", src: "su - root", want: []string{
		"su - root",
	}},
	{name: "runuser -u", src: "runuser -u bob -- rm x", want: []string{
		"runuser: rm x",
	}},
	{name: "runuser -c", src: "runuser -l bob -c 'make'", want: []string{
		"[sh -c] runuser+sh -c: make",
	}},
	{name: "sg", src: "sg docker -c 'docker ps'", want: []string{
		"[sh -c] sg+sh -c: docker ps",
	}},
	{name: "busybox", src: "busybox rm -rf /", want: []string{
		"busybox: rm -rf /",
	}},
	{name: "busybox sh", src: "busybox sh -c 'rm x'", want: []string{
		"[sh -c] busybox+sh -c: rm x",
	}},
	{name: "strace", src: "strace -f -o /tmp/t make", want: []string{
		"strace: make {strace -o}>/tmp/t",
	}},
	{name: "taskset", src: "taskset -c 0 make", want: []string{
		"taskset: make",
	}},
	{name: "script -c", src: "script -q -c 'rm x' /dev/null", want: []string{
		"[sh -c] script+sh -c: rm x {script}>/dev/null",
	}},
	{name: "wrapper chain", src: "sudo nice -n 5 timeout 10 env A=1 rm x", want: []string{
		"sudo+nice+timeout+env: A=1 rm x",
	}},
	{name: "trap", src: "trap 'rm -rf /tmp/x' EXIT", want: []string{
		"trap rm -rf /tmp/x EXIT",
		"[trap] trap: rm -rf /tmp/x",
	}},
	{name: "trap reset", src: "trap - INT", want: []string{
		"trap - INT",
	}},
	{name: "set positional", src: "set -- rm -rf /; \"$@\"", want: []string{
		"set -- rm -rf /",
		"rm -rf /",
	}},
	{name: "shift", src: "set -- x rm /; shift; \"$@\"", want: []string{
		"set -- x rm /",
		"shift",
		"rm /",
	}},
	{name: "unset", src: "x=rm; unset x; $x ls", want: []string{
		"unset x",
		"ls",
	}},
	{name: "printf -v", src: "printf -v x %s rm; $x", want: []string{
		"printf -v x %s rm",
		"! `$x`",
	}},
	{name: "mapfile", src: "mapfile -t a < f; ${a[0]}", want: []string{
		"mapfile -t a <f",
		"! `${a[0]}`",
	}},
	{name: "declare integer", src: "declare -i x; x=1+1; echo $x", want: []string{
		"declare -i x",
		"echo `$x`",
	}},
	{name: "declare lowercase", src: "declare -l c; c=RM; $c", want: []string{
		"declare -l c",
		"! `$c`",
	}},
	{name: "nameref", src: "declare -n r=x; x=ls; r=rm; $x", want: []string{
		"declare -n r=x",
		"! `$x`",
	}},
	{name: "let", src: "let x=1+2; echo $x", want: []string{
		"echo `$x`",
	}},
	{name: "coproc", src: "coproc worker { ls; }", want: []string{
		"[coproc] ls",
	}},
	{name: "arith assign then use", src: "x=ls; (( x = 1 )); $x", want: []string{
		"! `$x`",
	}},
	{name: "dynamic command makes vars unknown", src: "x=ls; $cmd; $x", want: []string{
		"! `$cmd`",
		"! `$x`",
	}},
	{name: "empty var vanishes", src: "e=; $e rm x", want: []string{
		"rm x",
	}},
	{name: "quoted empty var stays", src: "e=; \"$e\" rm x", want: []string{
		" rm x",
	}},
	{name: "zero positional", src: "set --; rm \"$@\" x", want: []string{
		"set --",
		"rm x",
	}},
	{name: "argv plain", argv: []string{"ls", "-la"}, want: []string{
		"ls -la",
	}},
	{name: "argv words literal", argv: []string{"rm", "$HOME", "*", "~"}, want: []string{
		"rm $HOME * ~",
	}},
	{name: "argv bash -c", argv: []string{"bash", "-c", "rm -rf / && ls"}, want: []string{
		"[bash -c > &&] bash -c: rm -rf /",
		"[bash -c > &&] bash -c: ls",
	}},
	{name: "argv sh -c positional", argv: []string{"sh", "-c", "$0 -rf \"$1\"", "rm", "/"}, want: []string{
		"[sh -c] sh -c: rm -rf /",
	}},
	{name: "argv sudo sh -c", argv: []string{"sudo", "-n", "sh", "-c", "eval \"$1\"", "_", "rm -rf /"}, want: []string{
		"[sh -c > eval] sudo+sh -c+eval: rm -rf /",
	}},
	{name: "argv env assign", argv: []string{"env", "FOO=$(x)", "rm", "*"}, want: []string{
		"env: FOO=$(x) rm *",
	}},
	{name: "argv find exec shell", argv: []string{"find", ".", "-exec", "bash", "-c", "rm \"$1\"", "_", "{}", ";"}, want: []string{
		"find . -exec bash -c rm \"$1\" _ {} ;",
		"[find -exec > bash -c] find -exec+bash -c: rm `{}`",
	}},
	{name: "argv xargs shell", argv: []string{"xargs", "-0", "sh", "-c", "rm \"$@\"", "_"}, want: []string{
		"[sh -c] xargs+sh -c: rm `<stdin>`",
	}},
	{name: "argv mnemos run", argv: []string{"mnemos", "run", "--", "sudo", "rm", "x"}, want: []string{
		"mnemos run+sudo: rm x",
	}},
	{name: "argv mnemos run no dashes", argv: []string{"mnemos", "run", "--level", "full", "rm", "x"}, want: []string{
		"mnemos run: rm x",
	}},
	{name: "argv nested shells", argv: []string{"bash", "-c", "sh -c 'eval \"rm -rf /\"'"}, want: []string{
		"[bash -c > sh -c > eval] bash -c+sh -c+eval: rm -rf /",
	}},
	{name: "argv eval", argv: []string{"eval", "rm -rf /"}, want: []string{
		"[eval] eval: rm -rf /",
	}},
	{name: "argv shell stdin", argv: []string{"bash"}, want: []string{
		"bash",
	}},
	{name: "argv shell -s", argv: []string{"bash", "-s", "arg"}, want: []string{
		"bash -s arg",
	}},
	{name: "argv fish", argv: []string{"fish", "-c", "rm x"}, want: []string{
		"[fish -c] fish -c: rm x",
	}},
	{name: "argv empty name", argv: []string{""}, want: []string{
		"",
	}},
	{name: "argv glob program", argv: []string{"/bin/r?"}, want: []string{
		"/bin/r?",
	}},
	{name: "argv su", argv: []string{"su", "-", "root", "-c", "rm -rf /"}, want: []string{
		"[sh -c] su+sh -c: rm -rf /",
	}},
	{name: "argv watch", argv: []string{"watch", "rm", "-rf", "/tmp/x"}, want: []string{
		"[sh -c] watch+sh -c: rm -rf /tmp/x",
	}},
	{name: "argv timeout", argv: []string{"timeout", "5", "sh", "-c", "rm x"}, want: []string{
		"[sh -c] timeout+sh -c: rm x",
	}},
	{name: "split across quoting", src: "\"r\"'m' -r\"f\" '/'", want: []string{
		"rm -rf /",
	}},
	{name: "escape in double quotes", src: "\"\\r\\m\" x", want: []string{
		"\\r\\m x",
	}},
	{name: "dollar single in double", src: "echo \"$'x'\"", want: []string{
		"echo $'x'",
	}},
	{name: "function then alias", src: "f() { rm \"$@\"; }; alias x=f; x -rf /", want: []string{
		"alias x=f",
		"[alias x > function f] rm -rf /",
	}},
	{name: "function in branch", src: "if c; then f() { rm x; }; fi; f", want: []string{
		"[if] c",
		"f",
		"[function f] rm x",
	}},
	{name: "alias in branch", src: "if c; then alias k='rm -rf /'; fi; k", want: []string{
		"[if] c",
		"[if] alias k=rm -rf /",
		"[alias k] rm -rf /",
		"k",
	}},
	{name: "var in case arm", src: "case $1 in a) x=rm;; *) x=ls;; esac; $x", want: []string{
		"! `$x`",
	}},
	{name: "case fallthrough", src: "case a in a) x=rm;& b) $x /;; esac", want: []string{
		"[case] ! `$x` /",
	}},
	{name: "deep function chain", src: "a() { b; }; b() { c; }; c() { rm -rf /; }; a", want: []string{
		"[function a > function b > function c] rm -rf /",
	}},
	{name: "exported function", src: "f() { rm x; }; export -f f; bash -c f", want: []string{
		"[function f] rm x",
		"export -f f",
		"[bash -c] bash -c: f",
	}},
	{name: "heredoc dash", src: "cat <<-EOF\n\ttab\n\tEOF", want: []string{
		"cat <<-tab\n",
	}},
	{name: "pipe into compound", src: "echo 'rm x' | { bash; }", want: []string{
		"[|] echo rm x",
		"[|] bash",
		"[| > stdin] bash: rm x",
	}},
	{name: "eval in function", src: "f() { eval \"$1\"; }; f 'rm -rf /'", want: []string{
		"[function f > eval] eval: rm -rf /",
	}},
	{name: "bash -c in loop", src: "for s in 'rm a' 'rm b'; do bash -c \"$s\"; done", want: []string{
		"[for > bash -c] bash -c: rm a",
		"[for > bash -c] bash -c: rm b",
	}},
	{name: "cmd subst in assignment name position", src: "x=$(echo rm); $x", want: []string{
		"[$(…)] echo rm",
		"rm",
	}},
	{name: "echo output is static", src: "$(echo rm -rf) /", want: []string{
		"[$(…)] echo rm -rf",
		"rm -rf /",
	}},
	{name: "echo options are not followed", src: "$(echo -e 'r\\x6d') /", want: []string{
		"[$(…)] echo -e r\\x6d",
		"! `$(echo -e 'r\\x6d')` /",
	}},
	{name: "cat here-document output is static", src: "sh -c \"$(cat <<'EOF'\nrm -rf /\nEOF\n)\"", want: []string{
		"[$(…)] cat <<rm -rf /\n",
		"[sh -c] sh -c: rm -rf /",
	}},
	{name: "shell reads /dev/stdin", src: "bash /dev/stdin <<< 'rm -rf /'", want: []string{
		"bash /dev/stdin <<<rm -rf /",
		"[here-string] bash: rm -rf / <<<rm -rf /",
	}},
	{name: "source of /dev/stdin", src: ". /dev/stdin <<EOF\nx=rm\nEOF\n$x -rf /", want: []string{
		". /dev/stdin <<x=rm\n",
		"rm -rf /",
	}},
	{name: "echo redefined", src: "echo(){ printf x; }; $(echo rm) /", want: []string{
		"[$(…) > function echo] printf x",
		"! `$(echo rm)` /",
	}},

	{name: "dynamic then known", src: "$a; x=rm; $x", want: []string{
		"! `$a`",
		"! `$x`",
	}},
	{name: "export then child", src: "export CMD=rm; sh -c '$CMD -rf /'", want: []string{
		"export CMD=rm",
		"[sh -c] sh -c: CMD=rm rm -rf /",
	}},
	{name: "path program", src: "/bin/rm -rf /", want: []string{
		"/bin/rm -rf /",
	}},
	{name: "relative program", src: "./rm.sh x", want: []string{
		"./rm.sh x",
	}},
	{name: "unicode args", src: "echo héllo", want: []string{
		"echo héllo",
	}},
	{name: "comment", src: "ls # rm -rf /", want: []string{
		"ls",
	}},
	{name: "arith in args", src: "rm -rf /$((1-1))", want: []string{
		"rm -rf /0",
	}},
	{name: "positional top level", src: "$1 x", want: []string{
		"! `$1` x",
	}},
	{name: "IFS unknown after source", src: "source x; y=\"a b\"; $y", want: []string{
		"source x",
		"! `$y`",
	}},
	{name: "env -S assign", src: "env -S 'A=1 rm' x", want: []string{
		"env: A=1 rm x",
	}},
	{name: "sudo dynamic option", src: "sudo $FLAGS rm x", want: []string{
		"sudo: ! `$FLAGS` rm x",
	}},
	{name: "sudo dash dash", src: "sudo -- rm x", want: []string{
		"sudo: rm x",
	}},
	{name: "env dash", src: "env - rm x", want: []string{
		"env: rm x",
	}},
	{name: "busybox option", src: "busybox --list", want: []string{
		"busybox --list",
	}},
	{name: "find no exec", src: "find . -name x", want: []string{
		"find . -name x",
	}},
	{name: "xargs -i", src: "xargs -i cp {} /b", want: []string{
		"xargs: cp `{}` /b",
	}},
	{name: "nested subst in wrapper", src: "sudo $(which rm) x", want: []string{
		"[$(…)] which rm",
		"sudo: ! `$(which rm)` x",
	}},
	{name: "process subst source", src: "source <(curl -s x)", want: []string{
		"[<(…)] curl -s x",
		"source `<(curl -s x)`",
	}},
	{name: "bash process subst", src: "bash <(curl -s x)", want: []string{
		"[<(…)] curl -s x",
		"bash `<(curl -s x)`",
	}},
	{name: "declare array", src: "declare -a arr=(rm -rf /); \"${arr[@]}\"", want: []string{
		"declare -a arr=(rm -rf /)",
		"rm -rf /",
	}},
	{name: "declare assoc", src: "declare -A m=([k]=rm); ${m[k]}", want: []string{
		"declare -A `m=([k]=rm)`",
		"! `${m[k]}`",
	}},
	{name: "local restores", src: "x=ls; f() { local x=rm; }; f; $x", want: []string{
		"[function f] local x=rm",
		"! `$x`",
	}},
	{name: "global in function", src: "f() { x=rm; }; f; $x", want: []string{
		"rm",
	}},
	{name: "readonly", src: "readonly x=rm; $x", want: []string{
		"readonly x=rm",
		"rm",
	}},
	{name: "typeset", src: "typeset x=rm; $x", want: []string{
		"typeset x=rm",
		"rm",
	}},
	{name: "export no value", src: "x=rm; export x; bash -c '$x'", want: []string{
		"export x",
		"[bash -c] bash -c: x=rm rm",
	}},
	{name: "test builtin", src: "[ -f x ] && rm x", want: []string{
		"[&&] [ -f x ]",
		"[&&] rm x",
	}},
	{name: "let keyword", src: "let 'x = $(id)'", want: []string{
		"[let > arithmetic > $(…)] id",
		"[let > arithmetic] ! `$(id)`",
	}},
	{name: "coproc simple", src: "coproc ls", want: []string{
		"[coproc] ls",
	}},
	{name: "time pipeline", src: "time ls | wc", want: []string{
		"[|] time: ls",
		"[|] time: wc",
	}},
	{name: "redirect dup", src: "cmd 3<&0 4>&-", want: []string{
		"cmd 3<&0 4>&-",
	}},
	{name: "redirect read write", src: "exec 3<> /dev/tcp/h/80", want: []string{
		"exec 3<>/dev/tcp/h/80",
	}},
	{name: "heredoc pipe to shell dynamic", src: "cat <<EOF | sh\n$(curl x)\nEOF", want: []string{
		"[| > here-doc > $(…)] curl x",
		"[|] cat <<`$(curl x)\n`",
		"[|] ! sh",
		"[| > stdin] sh: ! `$(curl x)`",
	}},
	{name: "echo -e piped", src: "echo -e 'rm\\x20x' | sh", want: []string{
		"[|] echo -e rm\\x20x",
		"[|] sh",
		"[| > stdin] sh: rm x",
	}},
	{name: "sh -c with stdin script", src: "bash -s <<< 'rm x'", want: []string{
		"bash -s <<<rm x",
		"[here-string] bash: rm x <<<rm x",
	}},
	{name: "xargs sh -c dollar0", src: "xargs -n1 sh -c 'rm $0'", want: []string{
		"[sh -c] xargs+sh -c: rm `$0`",
	}},
	{name: "brief positional payload", src: "bash -c '$1' _ 'rm -rf /'", want: []string{
		"[bash -c] bash -c: rm -rf /",
	}},
	{name: "read array", src: "read -a arr <<< \"rm -rf /\"; \"${arr[@]}\"", want: []string{
		"read -a arr <<<rm -rf /",
		"rm -rf /",
	}},
	{name: "read with empty IFS", src: "IFS= read -r line <<< \"  rm x\"; $line", want: []string{
		"IFS= read -r line <<<  rm x",
		"rm x",
	}},
	{name: "array command", src: "cmd=(git push); \"${cmd[@]}\" --force", want: []string{
		"git push --force",
	}},
	{name: "alias ending in separator", src: "alias a=\"echo 1;\"; a rm", want: []string{
		"alias a=echo 1;",
		"[alias a] echo 1",
		"[alias a] rm",
	}},
	{name: "eval of substitution", src: "eval \"$(ssh-agent -s)\"", want: []string{
		"[$(…)] ssh-agent -s",
		"! eval `\"$(ssh-agent -s)\"`",
		"[eval] eval: ! `$(ssh-agent -s)`",
	}},
	{name: "function inside bash -c", src: "bash -c 'f() { rm -rf /; }; f'", want: []string{
		"[bash -c > function f] bash -c: rm -rf /",
	}},
	{name: "path from variable", src: "p=/usr/bin; $p/rm x", want: []string{
		"/usr/bin/rm x",
	}},
	{name: "default of set positional", src: "set -- a; echo ${1:-rm} ${2:-ls}", want: []string{
		"set -- a",
		"echo a ls",
	}},
	{name: "glob program", src: "/bin/r? x", want: []string{
		"! `/bin/r?` x",
	}},
	{name: "env dynamic args", src: "env \"$@\"", want: []string{
		"env: ! `\"$@\"`",
	}},
	{name: "sudo dynamic user", src: "sudo -u \"$U\" rm x", want: []string{
		"sudo: rm x",
	}},
	{name: "alias ending in background", src: "alias a='true &'; a rm -rf /", want: []string{
		"alias a=true &",
		"[alias a > &] true",
		"[alias a] rm -rf /",
	}},
	{name: "alias piping into rest", src: "alias a='echo |'; a rm", want: []string{
		"alias a=echo |",
		"[alias a > |] echo",
		"[alias a > |] rm",
	}},
	{name: "alias keeps redirects", src: "alias ll='ls -l'; ll \"a b\" $(id) > out", want: []string{
		"alias ll=ls -l",
		"[alias ll > $(…)] id",
		"[alias ll] ls -l a b `$(id)` >out",
	}},
	{name: "unset subscript injection", src: "unset 'a[$(id)]'", want: []string{
		"[arithmetic > $(…)] id",
		"[arithmetic] ! `$(id)`",
		"unset a[$(id)]",
	}},
	{name: "read subscript injection", src: "read 'a[$(id)]' <<< x", want: []string{
		"[arithmetic > $(…)] id",
		"[arithmetic] ! `$(id)`",
		"read a[$(id)] <<<x",
	}},
	{name: "declare subscript injection", src: "declare 'a[$(id)]=1'", want: []string{
		"[arithmetic > $(…)] id",
		"[arithmetic] ! `$(id)`",
		"declare a[$(id)]=1",
	}},
	{name: "indirect subscript injection", src: "x='a[$(id)]'; echo ${!x}", want: []string{
		"[arithmetic > $(…)] id",
		"[arithmetic] ! `$(id)`",
		"echo `${!x}`",
	}},
	{name: "test -v subscript injection", src: "[[ -v 'a[$(id)]' ]]", want: []string{
		"[[[…]] > arithmetic > $(…)] id",
		"[[[…]] > arithmetic] ! `$(id)`",
	}},
	{name: "sudo host option", src: "sudo -h host rm -rf /", want: []string{
		"sudo: rm -rf /",
	}},
	{name: "brace expansion command", src: "{rm,-rf,/}", want: []string{
		"rm -rf /",
	}},
	{name: "wrapper function shadow", src: "sudo() { rm -rf /; }; sudo ls", want: []string{
		"[function sudo] rm -rf /",
	}},
	{name: "heredoc read", src: "read x <<EOF\nrm\nEOF\n$x -rf /", want: []string{
		"read x <<rm\n",
		"rm -rf /",
	}},
	{name: "ifs is set at start", src: "rm${IFS}-rf${IFS}/", want: []string{
		"rm -rf /",
	}},
	{name: "exported env reaches programs", src: "export PAGER='rm -rf /'; git log", want: []string{
		"export PAGER=rm -rf /",
		"PAGER=rm -rf / git log",
		"[PAGER= > sh -c] PAGER=+sh -c: PAGER=rm -rf / rm -rf /",
	}},
	{name: "shell prefix env reaches its commands", src: "BASH_ENV=/tmp/x bash -c 'ls; pwd'", want: []string{
		"[bash -c] bash -c: BASH_ENV=/tmp/x ls",
		"[bash -c] bash -c: BASH_ENV=/tmp/x pwd",
	}},
	{name: "set -a exports", src: "set -a; PAGER=less; set +a; X=1; git log", want: []string{
		"set -a",
		"PAGER=less set +a",
		"PAGER=less git log",
		"[PAGER= > sh -c] PAGER=+sh -c: PAGER=less less",
	}},
	{name: "a pager in a prefix assignment is run", src: "GIT_PAGER='rm -rf ~' git log", want: []string{
		"GIT_PAGER=rm -rf ~ git log",
		"[GIT_PAGER= > sh -c] GIT_PAGER=+sh -c: rm -rf /home/u",
	}},
	{name: "less runs LESSOPEN's command", src: "LESSOPEN='|cat /etc/shadow %s' less x", want: []string{
		"LESSOPEN=|cat /etc/shadow %s less x",
		"[LESSOPEN= > sh -c] LESSOPEN=+sh -c: cat /etc/shadow %s",
	}},
	{name: "ssh ProxyCommand is a local command", src: "ssh -o ProxyCommand='rm -rf /' host", want: []string{
		"ssh -o ProxyCommand=rm -rf / host",
		"[ssh -o proxycommand > sh -c] ssh -o proxycommand+sh -c: rm -rf /",
	}},
	{name: "ssh option written in one word with a space", src: "ssh '-oLocalCommand touch x' host", want: []string{
		"ssh -oLocalCommand touch x host",
		"[ssh -o localcommand > sh -c] ssh -o localcommand+sh -c: touch x",
	}},
	{name: "rsync remote shell", src: "rsync -ave 'sh -c id' a host:b", want: []string{
		"rsync -ave sh -c id a host:b",
		"[rsync -e > sh -c > sh -c] rsync -e+sh -c+sh -c: id",
	}},
	{name: "scp transport program", src: "scp -S ./evil a host:b", want: []string{
		"scp -S ./evil a host:b",
		"[scp -S] scp -S: ./evil",
	}},
	{name: "tmux session command", src: "tmux new -d -s x 'make test'", want: []string{
		"tmux new -d -s x make test",
		"[tmux new > sh -c] tmux new+sh -c: make test",
	}},
	{name: "screen program", src: "screen -dmS x rm -rf /", want: []string{
		"screen -dmS x rm -rf /",
		"[screen] screen: rm -rf /",
	}},
	{name: "unexported assignment stays", src: "x=1; ls", want: []string{
		"ls",
	}},
	{name: "sed e command", src: "sed -n '1e rm -rf /' f", want: []string{
		"sed -n 1e rm -rf / f",
		"[sed e > sh -c] sed e+sh -c: rm -rf /",
	}},
	{name: "sed e among scripts", src: "sed -e 's/a/b/;/x/d' -e '$!N' --expression='e cat /etc/shadow' f", want: []string{
		"sed -e s/a/b/;/x/d -e $!N --expression=e cat /etc/shadow f",
		"[sed e > sh -c] sed e+sh -c: cat /etc/shadow",
	}},
	{name: "sed sandbox", src: "sed --sandbox 'e rm -rf /' f", want: []string{
		"sed --sandbox e rm -rf / f",
	}},
	{name: "tar checkpoint action", src: "tar -cf x.tar . --checkpoint=1 --checkpoint-action=exec='rm -rf /'", want: []string{
		"tar -cf x.tar . --checkpoint=1 --checkpoint-action=exec=rm -rf /",
		"[tar --checkpoint-action > sh -c] tar --checkpoint-action+sh -c: rm -rf /",
	}},
	{name: "tar to-command", src: "tar xf a.tar --to-command 'cat /etc/shadow'", want: []string{
		"tar xf a.tar --to-command cat /etc/shadow",
		"[tar --to-command > sh -c] tar --to-command+sh -c: cat /etc/shadow",
	}},
	{name: "tar compress program", src: "tar -I 'rm -rf ~' -xf a.tar", want: []string{
		"tar -I rm -rf ~ -xf a.tar",
		"[tar --use-compress-program > sh -c] tar --use-compress-program+sh -c: rm -rf /home/u",
	}},
	{name: "man pager", src: "man -P 'rm -rf /' ls", want: []string{
		"man -P rm -rf / ls",
		"[man --pager > sh -c] man --pager+sh -c: rm -rf /",
	}},
	{name: "less shell command", src: "less '+!rm -rf /' f", want: []string{
		"less +!rm -rf / f",
		"[less +! > sh -c] less +!+sh -c: rm -rf /",
	}},
	{name: "bat pager", src: "bat --pager='rm -rf /' f", want: []string{
		"bat --pager=rm -rf / f",
		"[bat --pager > sh -c] bat --pager+sh -c: rm -rf /",
	}},
	{name: "rg preprocessor", src: "rg --pre rm x .", want: []string{
		"rg --pre rm x .",
		"[rg --pre] rg --pre: rm `<file>`",
	}},
	{name: "git -c pager", src: "git -c core.pager='rm -rf /' log", want: []string{
		"git -c core.pager=rm -rf / log",
		"[git -c core.pager > sh -c] git -c core.pager+sh -c: rm -rf /",
	}},
	{name: "git alias with bang", src: "git -c alias.x='!rm -rf ~' x", want: []string{
		"git -c alias.x=!rm -rf ~ x",
		"[git -c alias.x > sh -c] git -c alias.x+sh -c: rm -rf /home/u",
	}},
	{name: "git rebase exec", src: "git rebase -x 'rm -rf /' HEAD~1", want: []string{
		"git rebase -x rm -rf / HEAD~1",
		"[git rebase --exec > sh -c] git rebase --exec+sh -c: rm -rf /",
	}},
	{name: "git bisect run", src: "git bisect run rm -rf /", want: []string{
		"git bisect run rm -rf /",
		"[git bisect run] git bisect run: rm -rf /",
	}},
	{name: "git plain config", src: "git -c user.name=x log", want: []string{
		"git -c user.name=x log",
	}},
	{name: "awk system", src: `awk 'BEGIN { system("rm -rf /") }'`, want: []string{
		`awk BEGIN { system("rm -rf /") }`,
		"[awk system > sh -c] awk system+sh -c: rm -rf /",
	}},
	{name: "awk print to shell", src: `awk 'BEGIN { print "rm -rf /" | "sh" }'`, want: []string{
		`awk BEGIN { print "rm -rf /" | "sh" }`,
		"[awk system > sh -c] awk system+sh -c: sh",
		"[awk system > sh -c] awk system+sh -c: rm -rf /",
	}},
	{name: "at here-string", src: "at now <<< 'rm -rf /'", want: []string{
		"at now <<<rm -rf /",
		"[here-string] at: rm -rf / <<<rm -rf /",
	}},
	{name: "parallel arguments", src: "parallel rm -rf ::: / ~", want: []string{
		"parallel rm -rf ::: / /home/u",
		"[parallel > sh -c] parallel+sh -c: rm -rf /",
		"[parallel > sh -c] parallel+sh -c: rm -rf /home/u",
	}},
	{name: "fd exec", src: "fd . -x sh -c 'rm -rf /'", want: []string{
		"fd . -x sh -c rm -rf /",
		"[fd -x > sh -c] fd -x+sh -c: rm -rf /",
	}},
	{name: "toybox applet", src: "toybox rm -rf /", want: []string{
		"toybox: rm -rf /",
	}},
	{name: "script flag cluster", src: "script -qc 'rm -rf /' /dev/null", want: []string{
		"[sh -c] script+sh -c: rm -rf / {script}>/dev/null",
	}},
	{name: "hash -p", src: "hash -p /bin/rm ls; ls -rf /", want: []string{
		"hash -p /bin/rm ls",
		"[alias ls] /bin/rm -rf /",
	}},
	{name: "hash -p computed", src: "hash -p \"$P\" ls; ls /", want: []string{
		"hash -p `\"$P\"` ls",
		"[alias ls > $(…)] command -v ls",
		"[alias ls] ! `$(command -v 'ls')` /",
	}},
	{name: "prompt expansion", src: "x='$(rm -rf /)'; echo \"${x@P}\"", want: []string{
		"[${…@P} > $(…)] rm -rf /",
		"echo `\"${x@P}\"`",
	}},
	{name: "nameref subscript", src: "declare -n r='a[$(rm -rf /)]'", want: []string{
		"declare -n r=a[$(rm -rf /)]",
		"[arithmetic > $(…)] rm -rf /",
		"[arithmetic] ! `$(rm -rf /)`",
	}},
	{name: "cdpath makes cd dynamic", src: "CDPATH=/; cd etc && cat shadow", want: []string{
		"[&&] cd `$CDPATH/etc`",
		"[&&] cat shadow",
	}},
	{name: "env dynamic assignment", src: "env PATH=$PATH rm -rf /", want: []string{
		"env: PATH=$PATH rm -rf /",
	}},
	{name: "env assignment reaches a shell", src: "env BASH_ENV=x bash -c ls", want: []string{
		"[bash -c] env+bash -c: BASH_ENV=x ls",
	}},
	{name: "deep arithmetic", src: "echo $(( ((((((((((((((((((((( $(rm -rf /) ))))))))))))))))))))) ))", want: []string{
		"[$(…)] rm -rf /",
		"! `$(rm -rf /)`",
		"echo `$((((((((((((((((((((((($(rm -rf /))))))))))))))))))))))))`",
	}},
}

func TestSecurityEveryCommandFound(t *testing.T) {
	if len(parseCases) < 120 {
		t.Fatalf("only %d cases", len(parseCases))
	}
	seen := map[string]bool{}
	for _, tc := range parseCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			var s *Script
			var err error
			if tc.argv != nil {
				s, err = ParseArgv(tc.argv, testEnv())
			} else {
				s, err = ParseScript(tc.src, testEnv())
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got []string
			for _, c := range s.Commands {
				got = append(got, render(c))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("input %q\ngot:\n\t%s\nwant:\n\t%s", tc.src+strings.Join(tc.argv, " "),
					strings.Join(got, "\n\t"), strings.Join(tc.want, "\n\t"))
			}
		})
	}
}
