package shellparse

import (
	"strings"
)

// Tools that reach other machines or terminals, and run a local command to
// do it: ssh's ProxyCommand, rsync's remote shell, scp's transport
// program, tmux and screen sessions. What they run here is walked like any
// other carried command.

// sshOptionCommands are the ssh configuration keys whose value ssh runs
// on this machine with the user's shell.
var sshOptionCommands = []string{"proxycommand", "localcommand", "knownhostscommand"}

// SSHRunsOption reports whether an ssh -o value ("ProxyCommand=...")
// sets a command ssh runs on this machine; the parser walks it.
func SSHRunsOption(s string) bool {
	key, val := sshOption(s)
	for _, k := range sshOptionCommands {
		if key == k && val != "" && !strings.EqualFold(val, "none") {
			return true
		}
	}
	return false
}

// sshOption splits an ssh -o value ("Key=Value", "Key Value", "Key = Value").
func sshOption(s string) (key, val string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "= \t")
	if i < 0 {
		return strings.ToLower(s), ""
	}
	key, val = strings.ToLower(s[:i]), strings.TrimSpace(s[i:])
	val = strings.TrimSpace(strings.TrimPrefix(val, "="))
	return key, val
}

// runSSH handles ssh, scp and sftp: -o options that name a local command,
// and the transport program of scp -S and sftp -S/-D. An -F file may set
// the same options; it is not read, and the tool says so.
func (w *walker) runSSH(inv *invocation, name string) {
	var cs []carried
	var notes []string
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		switch {
		case a.val == "-o" || strings.HasPrefix(a.val, "-o") && len(a.val) > 2:
			v, j, ok := optionArg(args, i, "", "-o")
			if !ok {
				continue
			}
			i = j
			key, val := sshOption(v.val)
			for _, k := range sshOptionCommands {
				if key == k && val != "" && !strings.EqualFold(val, "none") {
					cs = append(cs, carried{via: "-o " + k, script: w.scriptOf(v, val)})
				}
			}
		case (name == "scp" || name == "sftp") && strings.HasPrefix(a.val, "-S"),
			name == "sftp" && strings.HasPrefix(a.val, "-D"):
			v, j, ok := optionArg(args, i, "", a.val[:2])
			if !ok {
				continue
			}
			i = j
			cs = append(cs, carried{via: a.val[:2], argv: []field{v},
				note: name + " starts " + v.val + " with arguments chosen at run time"})
		case strings.HasPrefix(a.val, "-F"):
			notes = append(notes, name+" reads its options, which may run commands, from a file")
		}
	}
	if len(cs) == 0 && len(notes) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs, notes...)
}

// runRsync handles rsync -e/--rsh: the remote shell is a local command
// line, run with the host and rsync's own arguments appended.
func (w *walker) runRsync(inv *invocation) {
	var cs []carried
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn || !strings.HasPrefix(a.val, "-") {
			continue
		}
		if a.val == "--" {
			break
		}
		if !strings.HasPrefix(a.val, "--rsh") && !(strings.HasPrefix(a.val, "-e") || shortEndsWith(a.val, 'e')) {
			continue
		}
		var v field
		var ok bool
		j := i
		switch {
		case strings.HasPrefix(a.val, "--rsh"):
			v, j, ok = optionArg(args, i, "--rsh", "")
		case strings.HasPrefix(a.val, "-e"):
			v, j, ok = optionArg(args, i, "", "-e")
		case i+1 < len(args):
			// -ave CMD: the cluster ends with e, which takes the next word.
			v, j, ok = args[i+1], i+1, true
		}
		if !ok {
			continue
		}
		i = j
		cs = append(cs, carried{via: "-e", script: w.scriptOf(v, v.val)})
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}

// shortEndsWith reports a cluster of short options ("-ave") ending in c.
func shortEndsWith(s string, c byte) bool {
	return len(s) > 2 && s[0] == '-' && s[1] != '-' && s[len(s)-1] == c
}

// tmuxRunning are the tmux commands whose trailing words are a shell
// command (or, for send-keys, keys typed into a shell).
var tmuxRunning = map[string]bool{
	"new-session": true, "new": true, "new-window": true, "neww": true,
	"split-window": true, "splitw": true, "respawn-pane": true, "respawnp": true,
	"respawn-window": true, "respawnw": true, "run-shell": true, "run": true,
	"if-shell": true, "if": true, "display-popup": true, "popup": true,
	"pipe-pane": true, "pipep": true, "send-keys": true, "send": true,
}

// runTmux handles tmux: the words after a command that starts a shell
// command, other than its options, are that command. Options that take a
// value are not known one by one, so a value may be judged as part of the
// command: that only adds to what is judged.
func (w *walker) runTmux(inv *invocation) {
	args := inv.args
	i := 1
	for i < len(args) && strings.HasPrefix(args[i].val, "-") && !args[i].dyn {
		if args[i].val == "-L" || args[i].val == "-S" || args[i].val == "-f" || args[i].val == "-c" || args[i].val == "-T" {
			i++
		}
		i++
	}
	if i >= len(args) || args[i].dyn || !tmuxRunning[args[i].val] {
		if i < len(args) && args[i].dyn {
			w.emitInv(inv, false, "tmux runs a command whose name is computed at run time")
			return
		}
		w.emitInv(inv, false)
		return
	}
	var words []field
	for j := i + 1; j < len(args); j++ {
		v := args[j].val
		if !args[j].dyn && strings.HasPrefix(v, "-") && len(v) > 1 {
			if strings.ContainsAny(v[len(v)-1:], "ctnsFxyeSlpbwm") && len(v) == 2 {
				j++ // a value
			}
			continue
		}
		if v == ";" || v == `\;` {
			break
		}
		words = append(words, args[j])
	}
	if len(words) == 0 {
		w.emitInv(inv, false)
		return
	}
	script := joinFields(w, words)
	w.runCarriers(inv, []carried{{via: args[i].val, script: &script}})
}

// runScreen handles screen: its first word that is not an option is the
// program it starts; -X stuff types text into the session's shell.
func (w *walker) runScreen(inv *invocation) {
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			w.emitInv(inv, false, "screen runs a command computed at run time")
			return
		}
		switch a.val {
		case "-S", "-c", "-t", "-T", "-e", "-h", "-p", "-s", "-Logfile":
			i++
			continue
		case "-X":
			if i+1 < len(args) {
				rest := args[i+1:]
				script := joinFields(w, rest)
				if len(rest) > 1 && (rest[0].val == "stuff" || rest[0].val == "exec" || rest[0].val == "screen") {
					script = joinFields(w, rest[1:])
				}
				w.runCarriers(inv, []carried{{via: "-X", script: &script}})
				return
			}
		}
		if strings.HasPrefix(a.val, "-") {
			// A cluster ending in an option that takes a value (-dmS NAME).
			if v := a.val; len(v) > 2 && v[1] != '-' && strings.ContainsAny(v[len(v)-1:], "ScTtehps") {
				i++
			}
			continue
		}
		w.runCarriers(inv, []carried{{argv: args[i:]}})
		return
	}
	w.emitInv(inv, false)
}
