package sandbox

import (
	"bytes"
	"path/filepath"
	"strings"
)

// A git repository's configuration names programs git runs: core.fsmonitor
// on every git status, core.pager, core.editor and core.sshCommand,
// aliases, filter and diff drivers, credential helpers, include.path and
// more. A repository a run leaves in the workspace keeps only the
// settings below, which name no program and send git nowhere new: an
// allow-list, so that a setting git learns of later is dropped, not kept.

// gitSetting is one setting of a git configuration file, spelled as the
// file spells it.
type gitSetting struct {
	section, sub, key string
	value             string
	// bare is a key without "=", which git reads as true.
	bare bool
}

// harmlessGitKeys are the settings a repository left by a run may keep,
// as section.key (lower case) for sections without a subsection and
// section.*.key for those named per remote, branch or submodule.
var harmlessGitKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.ignorecase": true, "core.precomposeunicode": true,
	"core.symlinks": true, "core.autocrlf": true, "core.eol": true, "core.safecrlf": true,
	"core.quotepath": true, "core.sparsecheckout": true, "core.sparsecheckoutcone": true,
	"core.checkstat": true, "core.trustctime": true, "core.abbrev": true, "core.compression": true,
	"core.protecthfs": true, "core.protectntfs": true, "core.splitindex": true, "core.untrackedcache": true,
	"core.worktree":           true, // only inside the workspace (harmlessValue)
	"extensions.objectformat": true, "extensions.refstorage": true, "extensions.partialclone": true,
	"extensions.preciousobjects": true, "extensions.noop": true,
	"remote.*.url": true, "remote.*.pushurl": true, // not through a program (harmlessValue)
	"remote.*.fetch": true, "remote.*.push": true, "remote.*.tagopt": true, "remote.*.promisor": true,
	"remote.*.partialclonefilter": true, "remote.*.mirror": true, "remote.*.prune": true,
	"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true, "branch.*.pushremote": true,
	"branch.*.description": true,
	"submodule.*.url":      true, "submodule.*.active": true, "submodule.*.branch": true,
	"submodule.*.ignore": true, "submodule.*.fetchrecursesubmodules": true, "submodule.*.shallow": true,
	"user.name": true, "user.email": true, "user.signingkey": true,
	"init.defaultbranch": true, "pull.rebase": true, "pull.ff": true, "push.default": true,
	"push.autosetupremote": true, "fetch.prune": true, "merge.ff": true, "rebase.autostash": true,
	"rebase.autosquash": true, "commit.gpgsign": true, "tag.gpgsign": true,
	"lfs.repositoryformatversion": true, "gc.auto": true, "receive.denycurrentbranch": true,
	"index.version": true, "feature.manyfiles": true,
}

// harmlessSetting reports whether s may stay in the configuration of the
// git directory gitDir: its key is on the list, and a worktree lies in the
// workspace (inWS) and a URL goes through no remote helper (ext::, any
// TRANSPORT::) and is no option.
func harmlessSetting(s gitSetting, gitDir string, inWS func(string) bool) bool {
	sec, key := strings.ToLower(s.section), strings.ToLower(s.key)
	name := sec + "." + key
	if s.sub != "" {
		name = sec + ".*." + key
	}
	if !harmlessGitKeys[name] {
		return false
	}
	switch name {
	case "core.worktree":
		v := s.value
		if !filepath.IsAbs(v) {
			v = filepath.Join(gitDir, v)
		}
		return !s.bare && inWS(filepath.Clean(v))
	case "remote.*.url", "remote.*.pushurl", "submodule.*.url":
		// TRANSPORT::ADDRESS runs git-remote-TRANSPORT (ext:: any
		// command); a leading dash is an option to ssh.
		v := strings.TrimSpace(s.value)
		transport, _, helper := strings.Cut(v, "::")
		return !s.bare && !strings.HasPrefix(v, "-") && !(helper && !strings.ContainsAny(transport, "/@[:"))
	}
	return true
}

// parseGitConfig reads a git configuration file. It is strict: what it
// cannot read with certainty (an escape git may read otherwise, a stray
// character) makes ok false, and the caller then keeps none of the file.
func parseGitConfig(b []byte) (out []gitSetting, ok bool) {
	p := &configParser{b: b}
	sec, sub := "", ""
	for {
		p.skipSpace()
		if p.eof() {
			return out, true
		}
		switch c := p.b[p.i]; {
		case c == '\n':
			p.i++
			continue
		case c == '#' || c == ';':
			p.skipLine()
			continue
		case c == '[':
			var okh bool
			if sec, sub, okh = p.header(); !okh {
				return out, false
			}
			continue
		case isAlpha(c):
			if sec == "" {
				return out, false
			}
			s, oks := p.setting()
			if !oks {
				return out, false
			}
			s.section, s.sub = sec, sub
			out = append(out, s)
		default:
			return out, false
		}
	}
}

type configParser struct {
	b []byte
	i int
}

func (p *configParser) eof() bool { return p.i >= len(p.b) }

func (p *configParser) skipSpace() {
	for !p.eof() && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r' && p.i+1 < len(p.b) && p.b[p.i+1] == '\n') {
		p.i++
	}
}

func (p *configParser) skipLine() {
	for !p.eof() && p.b[p.i] != '\n' {
		p.i++
	}
}

// header reads [section] or [section "subsection"]; the old
// [section.subsection] form is refused.
func (p *configParser) header() (sec, sub string, ok bool) {
	p.i++ // [
	start := p.i
	for !p.eof() && (isAlnum(p.b[p.i]) || p.b[p.i] == '-') {
		p.i++
	}
	sec = string(p.b[start:p.i])
	if sec == "" || p.eof() {
		return "", "", false
	}
	if p.b[p.i] == ' ' || p.b[p.i] == '\t' {
		p.skipSpace()
		if p.eof() || p.b[p.i] != '"' {
			return "", "", false
		}
		p.i++
		var s strings.Builder
		for {
			if p.eof() || p.b[p.i] == '\n' || p.b[p.i] == 0 {
				return "", "", false
			}
			c := p.b[p.i]
			p.i++
			if c == '"' {
				break
			}
			if c == '\\' {
				if p.eof() || p.b[p.i] != '"' && p.b[p.i] != '\\' {
					return "", "", false
				}
				c = p.b[p.i]
				p.i++
			}
			s.WriteByte(c)
		}
		sub = s.String()
		if sub == "" {
			return "", "", false
		}
	}
	if p.eof() || p.b[p.i] != ']' {
		return "", "", false
	}
	p.i++
	return sec, sub, true
}

// setting reads KEY, KEY = VALUE, up to the end of its line (or of the
// lines a trailing backslash joins).
func (p *configParser) setting() (gitSetting, bool) {
	start := p.i
	for !p.eof() && (isAlnum(p.b[p.i]) || p.b[p.i] == '-') {
		p.i++
	}
	s := gitSetting{key: string(p.b[start:p.i])}
	p.skipSpace()
	if p.eof() || p.b[p.i] == '\n' || p.b[p.i] == '#' || p.b[p.i] == ';' {
		s.bare = true
		p.skipLine()
		return s, true
	}
	if p.b[p.i] != '=' {
		return s, false
	}
	p.i++
	p.skipSpace()
	var v []byte
	quoted := false
	// Unquoted trailing whitespace is not part of the value.
	keep := 0
	for {
		if p.eof() {
			break
		}
		c := p.b[p.i]
		if c == '\n' {
			if quoted {
				return s, false
			}
			break
		}
		p.i++
		switch {
		case c == 0:
			return s, false
		case c == '\r' && !p.eof() && p.b[p.i] == '\n':
			continue
		case !quoted && (c == '#' || c == ';'):
			p.skipLine()
			s.value = string(v[:keep])
			return s, true
		case c == '"':
			quoted = !quoted
			keep = len(v)
			continue
		case c == '\\':
			if p.eof() {
				return s, false
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '\n':
				// A continuation line.
				continue
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case '\\', '"':
			default:
				return s, false
			}
			v = append(v, e)
			keep = len(v)
			continue
		}
		v = append(v, c)
		if quoted || (c != ' ' && c != '\t') {
			keep = len(v)
		}
	}
	if quoted {
		return s, false
	}
	s.value = string(v[:keep])
	return s, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// writeGitConfig writes settings the way git itself writes them: a
// header when the section changes, a tab before each key, values quoted
// and escaped only where git would.
func writeGitConfig(settings []gitSetting) []byte {
	var b bytes.Buffer
	prevSec, prevSub, first := "", "", true
	for _, s := range settings {
		if first || s.section != prevSec || s.sub != prevSub {
			b.WriteByte('[')
			b.WriteString(s.section)
			if s.sub != "" {
				b.WriteString(" \"")
				b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s.sub))
				b.WriteByte('"')
			}
			b.WriteString("]\n")
			prevSec, prevSub, first = s.section, s.sub, false
		}
		b.WriteByte('\t')
		b.WriteString(s.key)
		if !s.bare {
			b.WriteString(" = ")
			b.WriteString(quoteGitValue(s.value))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// quoteGitValue is git's own quoting of a value it writes.
func quoteGitValue(v string) string {
	quote := v != "" && (v[0] == ' ' || v[len(v)-1] == ' ') || strings.ContainsAny(v, ";#\r")
	var b strings.Builder
	if quote {
		b.WriteByte('"')
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if quote {
		b.WriteByte('"')
	}
	return b.String()
}

// harmlessGitConfig returns the configuration b of the git directory
// gitDir (in the workspace inWS tells) reduced to its harmless settings, the settings it dropped (as
// section.key), and whether it changed: b is kept as it is only when it
// is exactly what git would write for the settings it holds, all of them
// harmless, so that git never reads a file another way than mnemos did.
func harmlessGitConfig(b []byte, gitDir string, inWS func(string) bool) (kept []byte, dropped []string, changed bool) {
	settings, ok := parseGitConfig(b)
	var keep []gitSetting
	for _, s := range settings {
		if harmlessSetting(s, gitDir, inWS) {
			keep = append(keep, s)
			continue
		}
		name := strings.ToLower(s.section + "." + s.key)
		if s.sub != "" {
			name = strings.ToLower(s.section) + "." + s.sub + "." + strings.ToLower(s.key)
		}
		dropped = append(dropped, name)
	}
	if !ok {
		dropped = append(dropped, "what could not be read with certainty")
	}
	kept = writeGitConfig(keep)
	return kept, dropped, !ok || !bytes.Equal(kept, b)
}
