package shellparse

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fuzzLimits keep each fuzz input cheap.
func fuzzLimits() Limits { return Limits{MaxBytes: 8 << 10, MaxArgs: 4000, MaxDepth: 32} }

func checkResult(t *testing.T, s *Script, err error, again func() (*Script, error)) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		var le *LimitError
		if !errors.As(err, &pe) && !errors.As(err, &le) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
	}
	s2, err2 := again()
	if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("errors differ between runs: %v / %v", err, err2)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Fatalf("output differs between runs")
	}
	if s == nil {
		return
	}
	for _, c := range s.Commands {
		if len(c.Argv) > 0 && c.Argv[0].Dynamic && !c.Dynamic {
			t.Fatalf("dynamic program name on a static command: %+v", c)
		}
		for _, w := range c.Argv {
			if strings.Contains(w.Value, markerPrefix) {
				t.Fatalf("placeholder leaked into %q", w.Value)
			}
		}
	}
}

func FuzzParseScript(f *testing.F) {
	for _, tc := range parseCases {
		if tc.argv == nil {
			f.Add(tc.src)
		}
	}
	f.Add(benchScript50())
	f.Fuzz(func(t *testing.T, src string) {
		parse := func() (*Script, error) { return ParseScriptLimits(src, testEnv(), fuzzLimits()) }
		s, err := parse()
		checkResult(t, s, err, parse)
	})
}

func FuzzParseArgv(f *testing.F) {
	for _, tc := range parseCases {
		if tc.argv != nil {
			f.Add(strings.Join(tc.argv, "\x00"))
		} else {
			f.Add("bash\x00-c\x00" + tc.src)
		}
	}
	f.Add("sudo\x00-u\x00root\x00env\x00A=1\x00xargs\x00-I{}\x00sh\x00-c\x00rm {}")
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		parse := func() (*Script, error) { return ParseArgvLimits(argv, testEnv(), fuzzLimits()) }
		s, err := parse()
		checkResult(t, s, err, parse)
	})
}

// FuzzScanSed: reading any sed script ends, never panics, and gives the
// same answer twice; every e command it reports is text of the script.
func FuzzScanSed(f *testing.F) {
	for _, s := range []string{"s/a/b/g", "1e rm -rf /", "s/x/y/e", ":a;N;$!ba;s/\\n/ /g", "/x/{s//y/;p}",
		"a\\\ntext", "s/[/]/x/w out", "y/abc/xyz/", "0~3d", "\\,x,p", "s/a/b/;e", "{", "s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		var p1, p2 sedProgram
		scanSed(script, &p1)
		scanSed(script, &p2)
		if !reflect.DeepEqual(p1, p2) {
			t.Fatalf("not deterministic: %+v / %+v", p1, p2)
		}
		for _, c := range p1.commands {
			if !strings.Contains(script, c) {
				t.Fatalf("command %q is not in the script", c)
			}
		}
	})
}
