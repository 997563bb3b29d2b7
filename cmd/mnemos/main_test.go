package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mnemos-dev/mnemos/sandbox"
)

func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[0]) {
		os.Exit(sandbox.RunHelper(os.Args))
	}
	cmds := map[string]func(){
		"mnemos": func() {
			// Scripts own their system policy file; the real one in /etc
			// is not read.
			systemPolicyFile = os.Getenv("MNEMOS_TEST_SYSTEM_POLICY")
			// Scripts may describe a kernel without Landlock (0) or with
			// an older ABI than this one's; only this test binary reads it.
			if v := os.Getenv("MNEMOS_TEST_LANDLOCK_ABI"); v != "" {
				abi, err := strconv.Atoi(v)
				if err != nil {
					panic("MNEMOS_TEST_LANDLOCK_ABI: " + err.Error())
				}
				probeSandbox = func() sandbox.Status {
					st := sandbox.Probe().WithABI(abi)
					if abi < 1 {
						st.Err = "described by the test"
					}
					return st
				}
			}
			// The journal keeps what confined commands change, as on a
			// kernel that lets mnemos trap the changes; scripts may
			// describe one that does not.
			watchJournal = func(st sandbox.Status) bool { return st.Watch && os.Getenv("MNEMOS_TEST_NO_JOURNAL") == "" }
			// Scripts may describe a machine where the view cannot be
			// built (user namespaces disabled).
			if v := os.Getenv("MNEMOS_TEST_NO_VIEW"); v != "" {
				probe := probeSandbox
				probeSandbox = func() sandbox.Status {
					st := probe()
					st.View, st.ViewErr = false, v
					st.ViewHint = "sudo sysctl -w kernel.unprivileged_userns_clone=1 (and set it in /etc/sysctl.d to keep it)"
					return st
				}
			}
			os.Exit(Main(context.Background(), argsFor(os.Args[0], os.Args[1:]), stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv))
		},
	}
	// mnemos-sh and mnemos-bash are mnemos invoked by those names.
	cmds["mnemos-sh"], cmds["mnemos-bash"] = cmds["mnemos"], cmds["mnemos"]
	testscript.Main(m, cmds)
}

// TestScript runs the user sessions under testdata/script.
func TestScript(t *testing.T) { testscript.Run(t, scriptParams()) }

// scriptParams are TestScript's: the scripts' environment, conditions
// and commands (the PostgreSQL scripts add theirs).
func scriptParams() testscript.Params {
	return testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// The home directory lies outside the workspace, as on a real
			// machine: the sandbox never grants a directory holding it.
			// Nor under /tmp, which the sandbox grants read-write.
			home, err := os.MkdirTemp("/var/tmp", "mnemos-home-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(home) })
			env.Setenv("HOME", home)
			env.Setenv("MNEMOS_HOME", filepath.Join(home, ".mnemos"))
			env.Setenv("MNEMOS_SENDER", "dev")
			env.Setenv("MNEMOS_TEST_SYSTEM_POLICY", filepath.Join(env.WorkDir, "etc", "mnemos", "policy.yaml"))
			env.Setenv("XDG_CONFIG_HOME", "")
			env.Setenv("XDG_STATE_HOME", "")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "dev")
			env.Setenv("GIT_AUTHOR_EMAIL", "dev@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "dev")
			env.Setenv("GIT_COMMITTER_EMAIL", "dev@example.com")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				return sandbox.Probe().ABI > 0, nil
			case "view":
				return sandbox.Probe().View, nil
			case "root":
				return os.Geteuid() == 0, nil
			case "python3":
				return fileExists("/usr/bin/python3"), nil
			case "git":
				_, err := exec.LookPath("git")
				return err == nil, nil
			}
			return false, errors.New("unknown condition " + cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// journalrun OP... feeds the journal a run (journalcmd_test.go).
			"journalrun": journalRun,
			// exits N PROG [ARG...] runs PROG and checks its exit status.
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exits N PROG [ARG...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				prog, err := exec.LookPath(args[1])
				if err != nil {
					// The script's PATH, not the test's.
					for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
						if p := filepath.Join(dir, args[1]); fileExists(p) {
							prog, err = p, nil
							break
						}
					}
				}
				ts.Check(err)
				cmd := exec.Command(prog, args[2:]...)
				cmd.Dir = ts.MkAbs(".")
				var env []string
				for _, k := range []string{"PATH", "HOME", "MNEMOS_HOME", "MNEMOS_SENDER", "MNEMOS_TEST_SYSTEM_POLICY", "TMPDIR", "GIT_CONFIG_NOSYSTEM", "MNEMOS_TEST_LANDLOCK_ABI", "MNEMOS_TEST_NO_VIEW", "MNEMOS_TEST_NO_JOURNAL", "MNEMOS_HOST_ID"} {
					env = append(env, k+"="+ts.Getenv(k))
				}
				cmd.Env = append(os.Environ(), env...)
				// Its output is the script's stdout and stderr, as after exec.
				cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
				_ = cmd.Run()
				got := cmd.ProcessState.ExitCode()
				if ws, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
					got = -1
				}
				if (got == want) == neg {
					ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
				}
			},
			// waitfor FILE REGEXP polls FILE for up to 20 s until REGEXP
			// matches its content.
			"waitfor": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: waitfor FILE REGEXP")
				}
				re, err := regexp.Compile(args[1])
				ts.Check(err)
				deadline := time.Now().Add(20 * time.Second)
				for time.Now().Before(deadline) {
					if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && re.Match(b) {
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				ts.Fatalf("%s never matched %q", args[0], args[1])
			},
			// edit FILE OLD NEW replaces the first OLD in FILE with NEW.
			"edit": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: edit FILE OLD NEW")
				}
				f := ts.MkAbs(args[0])
				b, err := os.ReadFile(f)
				ts.Check(err)
				if !strings.Contains(string(b), args[1]) {
					ts.Fatalf("%s does not contain %q", args[0], args[1])
				}
				ts.Check(os.WriteFile(f, []byte(strings.Replace(string(b), args[1], args[2], 1)), 0o600))
			},
			// capture FILE REGEXP VAR sets VAR to the first submatch of
			// REGEXP in the last stdout or stderr.
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: capture stdout|stderr REGEXP VAR")
				}
				re, err := regexp.Compile(args[1])
				ts.Check(err)
				m := re.FindStringSubmatch(ts.ReadFile(args[0]))
				if len(m) < 2 {
					ts.Fatalf("no match for %q in %s", args[1], args[0])
				}
				ts.Setenv(args[2], m[1])
			},
		},
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
