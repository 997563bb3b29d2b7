package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseSh(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		argv  []string
		login bool
	}{
		{[]string{"-c", "ls"}, []string{"sh", "-c", "ls"}, false},
		{[]string{"-c", "echo $1", "name", "-x", "--help"}, []string{"sh", "-c", "echo $1", "name", "-x", "--help"}, false},
		{[]string{"-ec", "false"}, []string{"sh", "-e", "-c", "false"}, false},
		{[]string{"-e", "-u", "-c", "x"}, []string{"sh", "-e", "-u", "-c", "x"}, false},
		{[]string{"+x", "-c", "x"}, []string{"sh", "+x", "-c", "x"}, false},
		{[]string{"-o", "noglob", "-c", "x"}, []string{"sh", "-o", "noglob", "-c", "x"}, false},
		{[]string{"-o", "pipefail", "+o", "xtrace", "-c", "x"}, []string{"sh", "-o", "pipefail", "+o", "xtrace", "-c", "x"}, false},
		{[]string{"-eo", "nounset", "-c", "x"}, []string{"sh", "-e", "-o", "nounset", "-c", "x"}, false},
		{[]string{"-lc", "x"}, []string{"sh", "-c", "x"}, true},
		{[]string{"-c", "-l", "x"}, []string{"sh", "-c", "x"}, true},
		{[]string{"-c", "--", "-x"}, []string{"sh", "-c", "-x"}, false},
		{[]string{"-c", "-", "x"}, []string{"sh", "-c", "x"}, false},
		{[]string{"--bash", "-lc", "x", "a"}, []string{"bash", "-c", "x", "a"}, true},
		// The script ends the options: what follows is $0, $1 ...
		{[]string{"-c", "x", "-i"}, []string{"sh", "-c", "x", "-i"}, false},
	} {
		inv, err := parseSh(tc.args)
		if err != nil {
			t.Errorf("parseSh(%q): %v", tc.args, err)
			continue
		}
		if !slices.Equal(inv.argv, tc.argv) || inv.login != tc.login {
			t.Errorf("parseSh(%q) = %q login %v, want %q login %v", tc.args, inv.argv, inv.login, tc.argv, tc.login)
		}
	}
}

// TestSecurityShRunsOnlyDecidedScripts: mnemos sh runs a script given
// whole with -c, which the gate decides before anything runs; a shell that
// reads its commands from a terminal, stdin or a file is refused, as is
// any option it does not know.
func TestSecurityShRunsOnlyDecidedScripts(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"script.sh"},
		{"-s"},
		{"-s", "-c", "x"},
		{"-cs", "x"},
		{"-i", "-c", "x"},
		{"-ic", "x"},
		{"-c", "-i", "x"},
		{"--bash", "-i"},
		{"-c"},
		{"-e", "x"},
		{"-k", "-c", "x"},
		{"--rcfile", "f", "-c", "x"},
		{"-O", "extglob", "-c", "x"},
		{"-o"},
		// Options that change what the script's words mean to the shell.
		{"-k", "-c", "x"},
		{"-o", "keyword", "-c", "x"},
		{"-ac", "GIT_EXTERNAL_DIFF=./x; git diff"},
		{"-o", "allexport", "-c", "x"},
		{"+o", "braceexpand", "-c", "x"},
		{"-o", "posix", "-c", "x"},
		{"-o", "history", "-c", "x"},
		{"--bash"},
	} {
		inv, err := parseSh(args)
		var xe *exitError
		if !errors.As(err, &xe) || xe.code != exitUsage {
			t.Errorf("parseSh(%q) = %q, %v; want a usage error", args, inv.argv, err)
		}
	}
}

func TestArgsFor(t *testing.T) {
	for _, tc := range []struct {
		argv0 string
		args  []string
		want  string
	}{
		{"/usr/local/bin/mnemos", []string{"run", "--", "ls"}, "run -- ls"},
		{"/usr/local/bin/mnemos-sh", []string{"-c", "ls"}, "sh -c ls"},
		{"mnemos-sh", []string{"-lc", "ls"}, "sh -lc ls"},
		{"/opt/mnemos-bash", []string{"-c", "ls"}, "sh --bash -c ls"},
		// Only the name counts, not the directory.
		{"/home/me/mnemos-sh/mnemos", []string{"version"}, "version"},
	} {
		if got := strings.Join(argsFor(tc.argv0, tc.args), " "); got != tc.want {
			t.Errorf("argsFor(%q, %q) = %q, want %q", tc.argv0, tc.args, got, tc.want)
		}
	}
}
