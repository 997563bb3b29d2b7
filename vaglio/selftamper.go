package vaglio

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// The self-tamper check: nothing the gated command runs may approve, deny,
// grant, revoke or edit policy through mnemos, nor write mnemos's own files.
// Only a person outside the gate does those things.

func selfTamperHit(pattern, word, reason string) Hit {
	return Hit{Check: CheckSelfTamper, Pattern: pattern, Word: word, Reason: reason}
}

// isSelfName reports whether a program base name is mnemos.
func (c *checker) isSelfName(name string) bool {
	if name == "mnemos" {
		return true
	}
	if name == "" {
		return false
	}
	for _, s := range c.self {
		if selfBase(s) == name {
			return true
		}
	}
	return false
}

// isSelf reports whether argv[0] runs mnemos: its base name or its path is
// a self name. A dynamic program word that mentions a self name
// ("$(which mnemos)") counts too.
func (c *checker) isSelf(w shellparse.Word) bool {
	if w.Dynamic {
		if strings.Contains(w.Value, "mnemos") {
			return true
		}
		for _, s := range c.self {
			if b := selfBase(s); b != "" && strings.Contains(w.Value, b) {
				return true
			}
		}
		return false
	}
	if c.isSelfName(path.Base(w.Value)) {
		return true
	}
	if !strings.Contains(w.Value, "/") {
		return false
	}
	p := c.r.abs(w.Value)
	for _, s := range c.self {
		if strings.HasPrefix(s, "/") && cleanPath(s) == p {
			return true
		}
	}
	return false
}

// selfValueFlags are mnemos's flags that take a value in the next word.
func selfValueFlag(f string) bool {
	switch f {
	case "--home", "--policy", "--level", "--channel", "--sender", "--actor", "--session", "--config",
		"--format", "--cwd", "--for", "--remember", "--ttl", "--reason", "--note":
		return true
	}
	return false
}

// selfReadOnly reports the mnemos subcommands that change nothing.
func selfReadOnly(sub []string) bool {
	if len(sub) == 0 {
		return true // usage
	}
	next := ""
	if len(sub) > 1 {
		next = sub[1]
	}
	switch sub[0] {
	case "version", "help", "status":
		return true
	case "policy":
		switch next {
		case "check", "explain", "registry", "table", "outcome", "lint", "test":
			return true
		}
	case "approvals":
		return next == "list" || next == "show"
	case "grants", "extensions":
		return next == "list"
	case "audit":
		return next == "tail" || next == "verify"
	case "sandbox":
		return next == "status"
	}
	return false
}

// selfMutating reports subcommands known to change state, for the reason.
func selfMutating(sub []string) string {
	if len(sub) == 0 {
		return ""
	}
	next := ""
	if len(sub) > 1 {
		next = sub[1]
	}
	switch sub[0] {
	case "approvals":
		switch next {
		case "approve", "deny", "resolve", "answer", "watch":
			return "resolves an approval"
		case "url":
			return "signs a browser in to the approvals page, which answers as the person"
		case "cancel":
			return "withdraws an approval"
		}
	case "extensions":
		switch next {
		case "admit":
			return "admits an extension and grants what it asks"
		case "revoke":
			return "changes grants"
		}
	case "grants":
		switch next {
		case "revoke", "prune", "record", "add":
			return "changes grants"
		}
	case "policy":
		switch next {
		case "rules", "edit", "add", "set":
			return "edits the policy"
		}
	case "init":
		return "initialises mnemos's configuration"
	}
	return ""
}

// roles are argRoles(cmd.Name(), cmd.Argv).
func (c *checker) selfTamper(cmd shellparse.Command, roles []role) bool {
	var subBuf [2][]shellparse.Word
	for _, argv := range c.subCommands(cmd, subBuf[:0]) {
		if len(argv) == 0 || !c.isSelf(argv[0]) {
			continue
		}
		if h, ok := selfSubcommand(argv); ok && !c.emit(h) {
			return false
		}
	}
	if !c.hasProtected() {
		return true
	}
	for i, rd := range cmd.Redirects {
		if !redirectWrites(rd) {
			continue
		}
		for _, cd := range c.redirectCandidates(i, rd) {
			if p, ok := c.protectedHit(cd, false); ok {
				h := selfTamperHit(p, rd.Target.Value,
					"redirect "+rd.Op+" onto "+quote(rd.Target.Value)+" (self-tamper: writes mnemos's own files)")
				if !c.emit(h) {
					return false
				}
			}
		}
	}
	name := cmd.Name()
	if len(cmd.Argv) == 0 || isReader(name, cmd.Argv[1:]) {
		return true
	}
	destroys := destroysDirs(name, cmd.Argv)
	for i, w := range cmd.Argv[1:] {
		if roles != nil && (roles[i] == roleText || roles[i] == rolePattern) {
			continue
		}
		cds := c.argCandidates(i, w)
		if roles != nil && roles[i] == roleScript {
			cds = literalPaths(append([]candidate(nil), cds...))
		}
		for _, cd := range cds {
			if p, ok := c.protectedHit(cd, destroys && !cd.openDir); ok {
				what := name
				if what == "" {
					what = "a dynamic program"
				}
				h := selfTamperHit(p, cd.word, what+" on "+quote(cd.word)+" (self-tamper: may change mnemos's own files)")
				if !c.emit(h) {
					return false
				}
				break
			}
		}
	}
	return true
}

// selfSubcommand judges a mnemos invocation: read-only subcommands pass,
// everything else (known or not) is a hit.
func selfSubcommand(argv []shellparse.Word) (Hit, bool) {
	var sub []string
	prevFlag := false
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		v := w.Value
		if w.Dynamic {
			if len(sub) >= 2 {
				prevFlag = false
				continue
			}
			return selfTamperHit("mnemos "+strings.Join(append(sub, "?"), " "), v,
				"mnemos with a computed subcommand "+quote(v)+" (self-tamper: only read-only subcommands may run through the gate)"), true
		}
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "-") {
			// Help never runs the subcommand, unless the word is the
			// value of the flag before it.
			if (v == "-h" || v == "--help") && !prevFlag {
				return Hit{}, false
			}
			if selfValueFlag(v) {
				i++
				prevFlag = false
				continue
			}
			prevFlag = !strings.Contains(v, "=")
			continue
		}
		prevFlag = false
		if len(sub) < 2 {
			sub = append(sub, v)
		}
	}
	if selfReadOnly(sub) {
		return Hit{}, false
	}
	pattern := strings.TrimSpace("mnemos " + strings.Join(sub, " "))
	why := selfMutating(sub)
	if why == "" {
		why = "only read-only subcommands may run through the gate"
	}
	return selfTamperHit(pattern, strings.Join(sub, " "), pattern+" (self-tamper: "+why+")"), true
}

// destroysDirs reports commands that delete, move or re-permission whole
// directories: for them, naming a directory above a protected path (such
// as ~/.config) is a hit as well.
func destroysDirs(name string, argv []shellparse.Word) bool {
	switch name {
	case "rm":
		return rmRecursive(argv)
	case "mv", "chmod", "chown", "chgrp", "chattr", "setfacl":
		return true
	case "find":
		return !isReader(name, argv[1:])
	}
	return false
}

// protectedHit reports whether a candidate is, is inside, or (when ancestor
// is set) is above a protected path.
func (c *checker) protectedHit(cd candidate, ancestor bool) (string, bool) {
	for _, p := range c.protectedPaths() {
		if c.protectedMatch(&cd, p, ancestor) {
			return p, true
		}
	}
	return "", false
}

// protectedMatch reports whether a candidate is, is inside, or (when
// ancestor is set) is above the protected path p.
func (c *checker) protectedMatch(cd *candidate, p string, ancestor bool) bool {
	if !cd.glob && (c.protectedLiteral || !hasPatternChar(p)) {
		// Literal paths, both clean: element by element is prefix by
		// prefix.
		return below(cd.path, p) || ancestor && below(p, cd.path)
	}
	// The rule escapeGlob(p)+"/**": the path and everything below it.
	*cd = cd.withElems()
	return matchShape(escapeGlob(p)[1:], false, true, "", *cd, ancestor)
}

// below reports whether the clean absolute path p is dir or inside it.
func below(p, dir string) bool {
	if dir == "/" || p == dir {
		return true
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// selfRoles marks as text the command that mnemos's read-only policy
// subcommands judge ("mnemos policy check -- cat /etc/shadow" reads no
// file): the words after "--". Every other word may be a path.
func selfRoles(args []shellparse.Word) []role {
	roles := make([]role, len(args))
	var sub []string
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			return nil
		}
		if v == "--" {
			if len(sub) >= 2 && sub[0] == "policy" && (sub[1] == "check" || sub[1] == "explain" || sub[1] == "test") {
				for j := i + 1; j < len(args); j++ {
					roles[j] = roleText
				}
			}
			break
		}
		if strings.HasPrefix(v, "-") {
			if selfValueFlag(v) {
				i++
			}
			continue
		}
		sub = append(sub, v)
	}
	return roles
}
