package policy

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// catalogSource is the classification catalog (see catalog.txt).
//
//go:embed catalog.txt
var catalogSource string

// toolSpec is one program of the catalog.
type toolSpec struct {
	kind    toolKind
	pattern bool     // first operand is a pattern
	script  bool     // first operand is a script
	mode    bool     // first operand is a mode or owner
	opts    []string // options that take a separate value
	outs    []string // options whose value is a file written
	ins     []string // options whose value is a file read
	runs    []string // options whose value is run as a command or loaded as code
	verb    string
}

// takes reports whether opt takes a separate value.
func (s toolSpec) takes(opt string) bool {
	return slices.Contains(s.opts, opt) || slices.Contains(s.outs, opt) ||
		slices.Contains(s.ins, opt) || slices.Contains(s.runs, opt)
}

// catalog is the parsed catalog, built once and never changed.
var catalog = sync.OnceValue(func() map[string]toolSpec {
	m, err := parseCatalog(catalogSource)
	if err != nil {
		// catalog.txt is embedded and tested; failing here is a build defect.
		panic("policy: " + err.Error())
	}
	return m
})

func parseCatalog(src string) (map[string]toolSpec, error) {
	kinds := map[string]toolKind{
		"pure": kindPure, "time": kindTime, "read": kindRead, "readdir": kindReadDir,
		"write": kindWrite, "copy": kindCopy, "move": kindMove, "net": kindNet,
		"mail": kindMail, "git": kindGit, "navigate": kindNavigate, "exec": kindExec,
	}
	out := map[string]toolSpec{}
	for i, line := range strings.Split(src, "\n") {
		if j := strings.Index(line, "#"); j >= 0 && (j == 0 || line[j-1] == ' ') {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("catalog.txt:%d: want NAME KIND [FLAGS...]", i+1)
		}
		k, ok := kinds[f[1]]
		if !ok {
			return nil, fmt.Errorf("catalog.txt:%d: unknown kind %q", i+1, f[1])
		}
		if _, dup := out[f[0]]; dup {
			return nil, fmt.Errorf("catalog.txt:%d: %s listed twice", i+1, f[0])
		}
		s := toolSpec{kind: k}
		for _, flag := range f[2:] {
			switch {
			case flag == "pattern":
				s.pattern = true
			case flag == "script":
				s.script = true
			case flag == "mode":
				s.mode = true
			case strings.HasPrefix(flag, "verb="):
				s.verb = strings.ReplaceAll(strings.TrimPrefix(flag, "verb="), "_", " ")
			case strings.HasPrefix(flag, "out:-"):
				s.outs = append(s.outs, strings.TrimPrefix(flag, "out:"))
			case strings.HasPrefix(flag, "in:-"):
				s.ins = append(s.ins, strings.TrimPrefix(flag, "in:"))
			case strings.HasPrefix(flag, "run:-"):
				s.runs = append(s.runs, strings.TrimPrefix(flag, "run:"))
			case strings.HasPrefix(flag, "-"):
				s.opts = append(s.opts, flag)
			default:
				return nil, fmt.Errorf("catalog.txt:%d: unknown flag %q", i+1, flag)
			}
		}
		out[f[0]] = s
	}
	return out, nil
}

// specOf returns a program's catalog entry; an unlisted program runs code.
func specOf(name string) toolSpec {
	if s, ok := catalog()[name]; ok {
		return s
	}
	return toolSpec{kind: kindExec}
}
