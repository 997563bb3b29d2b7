package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
)

// journalRun is the script command journalrun [-session S] [-keep] OP...:
// a run of the workspace of the script's directory, fed to the journal as
// mnemos run's seccomp loop feeds it (Before, then the call), in
// mnemos's state directory. It prints "run ID". Each OP is one word:
// write:PATH:TEXT, append:PATH:TEXT, rm:PATH, rmf:PATH (rm -f: a missing
// file is no error), rmrf:PATH, mkdir:PATH,
// mv:FROM:TO, chmod:MODE:PATH, symlink:TARGET:PATH. With -keep the run is
// left running (its log locked) until the script ends.
func journalRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! journalrun")
	}
	session, keep := "", false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-session":
			session, args = args[1], args[2:]
		case "-keep":
			keep, args = true, args[1:]
		default:
			ts.Fatalf("journalrun: unknown flag %s", args[0])
		}
	}
	p, err := gate.Locate(ts.Getenv("MNEMOS_HOME"), ts.Getenv, ts.Getenv("HOME"))
	ts.Check(err)
	j, err := journal.Open(journalOptions(p))
	ts.Check(err)
	cwd := ts.MkAbs(".")
	r, err := j.Begin(journal.RunInfo{Workspace: gate.Workspace(cwd), Cwd: cwd, Argv: append([]string{"journalrun"}, args...), Session: session})
	ts.Check(err)
	abs := func(p string) string { return ts.MkAbs(p) }
	do := func(k journal.Kind, a, b string, call func() error) {
		if err := r.Before(k, a, b); err != nil {
			ts.Fatalf("Before(%s, %s): %v", k, a, err)
		}
		ts.Check(call())
	}
	var rmrf func(string)
	rmrf = func(p string) {
		fi, err := os.Lstat(p)
		ts.Check(err)
		if fi.IsDir() {
			ents, err := os.ReadDir(p)
			ts.Check(err)
			for _, e := range ents {
				rmrf(filepath.Join(p, e.Name()))
			}
			do(journal.Rmdir, p, "", func() error { return syscall.Rmdir(p) })
			return
		}
		do(journal.Unlink, p, "", func() error { return syscall.Unlink(p) })
	}
	for _, op := range args {
		f := strings.SplitN(op, ":", 3)
		need := map[string]int{"write": 3, "append": 3, "rm": 2, "rmf": 2, "rmrf": 2, "mkdir": 2, "mv": 3, "chmod": 3, "symlink": 3}[f[0]]
		if need == 0 || len(f) != need {
			ts.Fatalf("journalrun: bad operation %q", op)
		}
		switch f[0] {
		case "write", "append":
			flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if f[0] == "append" {
				flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			do(journal.Write, abs(f[1]), "", func() error {
				fd, err := os.OpenFile(abs(f[1]), flag, 0o644)
				if err != nil {
					return err
				}
				_, err = fd.WriteString(strings.ReplaceAll(f[2], `\n`, "\n"))
				return errors.Join(err, fd.Close())
			})
		case "rm":
			do(journal.Unlink, abs(f[1]), "", func() error { return syscall.Unlink(abs(f[1])) })
		case "rmf":
			do(journal.Unlink, abs(f[1]), "", func() error {
				if err := syscall.Unlink(abs(f[1])); !errors.Is(err, syscall.ENOENT) {
					return err
				}
				return nil
			})
		case "rmrf":
			for _, m := range glob(ts, f[1]) {
				rmrf(m)
			}
		case "mkdir":
			do(journal.Mkdir, abs(f[1]), "", func() error { return os.Mkdir(abs(f[1]), 0o755) })
		case "mv":
			do(journal.Rename, abs(f[1]), abs(f[2]), func() error { return syscall.Rename(abs(f[1]), abs(f[2])) })
		case "chmod":
			mode, err := strconv.ParseUint(f[1], 8, 32)
			ts.Check(err)
			do(journal.Chmod, abs(f[2]), "", func() error { return os.Chmod(abs(f[2]), fs.FileMode(mode)) })
		case "symlink":
			do(journal.Symlink, abs(f[2]), "", func() error { return os.Symlink(f[1], abs(f[2])) })
		}
	}
	fmt.Fprintf(ts.Stdout(), "run %s\n", r.ID())
	if keep {
		ts.Defer(func() { r.Finish(); j.Close() })
		return
	}
	sum, err := r.Finish()
	ts.Check(err)
	ts.Check(j.Close())
	for _, n := range sum.NotKept {
		fmt.Fprintf(ts.Stdout(), "not kept: %s (%s)\n", n.Path, n.Why)
	}
}

// glob expands a shell pattern as sh does for rm -rf * (names starting
// with a dot only when the pattern does).
func glob(ts *testscript.TestScript, pattern string) []string {
	m, err := filepath.Glob(ts.MkAbs(pattern))
	ts.Check(err)
	var out []string
	for _, p := range m {
		if strings.HasPrefix(filepath.Base(p), ".") && !strings.HasPrefix(filepath.Base(pattern), ".") {
			continue
		}
		out = append(out, p)
	}
	return out
}
