package approvals

import (
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
)

// TestHeadlineVerbFitsTheInvocation: a program asked only for its help,
// its version or a listing reads "run", not what the program does when it
// works ("May I install?" for pip --version).
func TestHeadlineVerbFitsTheInvocation(t *testing.T) {
	for _, tc := range []struct {
		verb string
		argv string
		want string
	}{
		{"install", "pip --version", "run"},
		{"install", "pip -V", "run"},
		{"install", "pip3 --help", "run"},
		{"install", "pip help", "run"},
		{"install", "pip help install", "run"},
		{"install", "pip install --help", "run"},
		{"install", "pip install -h", "run"},
		{"install", "pip list", "run"},
		{"install", "pip list --outdated", "run"},
		{"install", "pip show requests", "run"},
		{"install", "pip freeze", "run"},
		{"install", "/usr/bin/pip3 list", "run"},
		{"install", "apt list --installed", "run"},
		{"install", "apt show curl", "run"},
		{"install", "apt-get --version", "run"},
		{"install", "brew info wget", "run"},
		{"install", "brew --prefix", "run"},
		{"build", "make --version", "run"},
		{"build", "make --help", "run"},
		{"build", "make install --help", "run"},
		{"build", "mvn -version", "run"},
		{"build", "cmake --help", "run"},
		{"compile", "gcc --version", "run"},
		{"compile", "javac -version", "run"},
		{"test", "pytest --version", "run"},
		{"test", "jest --help", "run"},
	} {
		if got := HeadlineVerb(classify.CodeExec, tc.verb, strings.Fields(tc.argv)...); got != tc.want {
			t.Errorf("HeadlineVerb(code:exec, %q, %s) = %q, want %q", tc.verb, tc.argv, got, tc.want)
		}
	}
	// Without the words, the program's verb stands.
	if got := HeadlineVerb(classify.CodeExec, "install"); got != "install" {
		t.Errorf("HeadlineVerb(code:exec, install) without argv = %q", got)
	}
	// A card of another class keeps its verb.
	if got := HeadlineVerb(classify.FSWrite, "delete", "rm", "--help"); got != "delete" {
		t.Errorf("HeadlineVerb(fs:write, delete, rm --help) = %q", got)
	}
}

// TestSecurityCardVerbNeverMilder: a command that does what its program
// does keeps the program's verb, and no word makes "run remotely" or a
// verb that says code runs read as anything milder.
func TestSecurityCardVerbNeverMilder(t *testing.T) {
	for _, tc := range []struct {
		verb string
		argv []string
	}{
		{"install", []string{"pip", "install", "requests"}},
		{"install", []string{"pip", "install", "requests", "--help"}},
		{"install", []string{"pip", "install", "-r", "requirements.txt"}},
		{"install", []string{"pip", "--isolated", "install", "x"}},
		{"install", []string{"pip", "--version", "install", "x"}},
		{"install", []string{"pip", "uninstall", "-y", "x"}},
		{"install", []string{"pip", "download", "x"}},
		{"install", []string{"pip", "$SUB"}},
		{"install", []string{"pip", "list;"}},
		{"install", []string{"pip", "LIST"}},
		{"install", []string{"pip"}},
		{"install", []string{"apt-get", "install", "-y", "curl"}},
		{"install", []string{"apt-get", "list"}},
		{"install", []string{"apt", "install", "--help", "curl"}},
		{"install", []string{"brew", "install", "wget"}},
		{"install", []string{"brew", "upgrade"}},
		{"build", []string{"make"}},
		{"build", []string{"make", "version"}},
		{"build", []string{"make", "help"}},
		{"build", []string{"make", "-j4", "--help", "all"}},
		{"build", []string{"make", "./--help"}},
		{"build", []string{"make", "Install", "--help"}},
		{"build", []string{"make", "all", "--help=x"}},
		{"compile", []string{"gcc", "x.c", "--help"}},
		{"compile", []string{"gcc", "-o", "x", "x.c"}},
		{"test", []string{"pytest", "tests/", "--help"}},
		{"test", []string{"pytest", "-x"}},
	} {
		if got := HeadlineVerb(classify.CodeExec, tc.verb, tc.argv...); got != tc.verb {
			t.Errorf("HeadlineVerb(code:exec, %q, %q) = %q, want %q", tc.verb, tc.argv, got, tc.verb)
		}
	}
	for _, argv := range [][]string{{"ssh", "host", "--help"}, {"ssh", "-V"}, {"ssh", "host", "ls"}} {
		if got := HeadlineVerb(classify.CodeExec, "run remotely", argv...); got != "run remotely" {
			t.Errorf("HeadlineVerb(code:exec, run remotely, %q) = %q", argv, got)
		}
	}
	for _, verb := range []string{"", "write", "read", "edit", "print", "show help"} {
		if got := HeadlineVerb(classify.CodeExec, verb, "pip", "--version"); got != "run" {
			t.Errorf("HeadlineVerb(code:exec, %q, pip --version) = %q, want run", verb, got)
		}
	}
	if got := HeadlineVerb(classify.MailSend, "", "sendmail", "--help"); got != "send mail" {
		t.Errorf("HeadlineVerb(mail:send, sendmail --help) = %q", got)
	}
}
