package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// startPrepared runs sh -c script under spec, with rules prepared for
// prepared, and returns its exit code and stderr.
func (w world) startPrepared(t *testing.T, prepared, spec Spec, st Status, script string) (int, string, Applied) {
	t.Helper()
	pre := Prepare(prepared, st)
	defer pre.Close()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = w.ws
	cmd.Env = []string{"HOME=" + w.home, "PATH=/usr/bin:/bin", "LC_ALL=C", "OUT=" + w.outside, "WS=" + w.ws}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	a, err := StartPrepared(cmd, spec, st, pre)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, stderr.String(), a
}

func TestStartPreparedUsesFittingRules(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	spec := w.spec(t, nil)
	if code, stderr, a := w.startPrepared(t, spec, spec, st, `echo x > "$WS/f" && cat /etc/hostname >/dev/null`); code != 0 || !a.Enforced {
		t.Fatalf("exit %d (%s), applied %+v", code, stderr, a)
	}
	if code, _, _ := w.startPrepared(t, spec, spec, st, `echo x > "$OUT/f"`); code == 0 {
		t.Fatal("wrote outside the workspace under prepared rules")
	}
	// What the caller is told is what a fresh ruleset would report.
	_, _, got := w.startPrepared(t, spec, spec, st, `true`)
	fresh := w.run(t, spec, st, nil, "true").applied
	if strings.Join(got.Notes, "\n") != strings.Join(fresh.Notes, "\n") ||
		strings.Join(got.Skipped, " ") != strings.Join(fresh.Skipped, " ") || got.Enforced != fresh.Enforced {
		t.Errorf("prepared run reports %+v, a fresh one %+v", got, fresh)
	}
}

// TestSecurityPreparedRulesNeverGrantMoreThanTheSpec: rules prepared for
// a wider spec than the one the command starts with are not used, nor
// rules prepared for another network setting.
func TestSecurityPreparedRulesNeverGrantMoreThanTheSpec(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	wide := w.spec(t, func(o *Options) { o.ExtraWrite = []string{w.outside} })
	narrow := w.spec(t, nil)
	if code, stderr, _ := w.startPrepared(t, wide, wide, st, `echo x > "$OUT/wide"`); code != 0 {
		t.Fatalf("the wide spec itself refused the write: %s", stderr)
	}
	code, _, _ := w.startPrepared(t, wide, narrow, st, `echo x > "$OUT/narrow"`)
	if code == 0 || exists(filepath.Join(w.outside, "narrow")) {
		t.Fatal("rules prepared for a wider spec were used for a narrower one")
	}
	// Network changes what TCP rules handle (and the seccomp filter, which
	// refuses inet sockets without it): rules prepared with it are not
	// reused without it, nor the other way round. A connection to a
	// server on loopback shows which the command got.
	if st.ABI < 4 && !st.Seccomp {
		t.Skipf("nothing refuses TCP here: Landlock ABI %d predates TCP rules and there is no seccomp filter (%s)", st.ABI, st.SeccompErr)
	}
	ln := listen(t, "tcp", "127.0.0.1:0")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	connect := fmt.Sprintf("SANDBOX_TEST_NET=tcp SANDBOX_TEST_ADDR=%s exec '%s'", ln.Addr(), exe)
	net := narrow
	net.Network = true
	if code, stderr, _ := w.startPrepared(t, net, net, st, connect); code != 0 {
		t.Fatalf("the network spec itself refused the connection: %s", stderr)
	}
	if code, _, _ := w.startPrepared(t, narrow, narrow, st, connect); code == 0 {
		t.Fatal("the spec without network connected")
	}
	if code, _, _ := w.startPrepared(t, net, narrow, st, connect); code == 0 {
		t.Error("rules prepared with network were used for a spec without it: the command connected")
	}
	if code, stderr, _ := w.startPrepared(t, narrow, net, st, connect); code != 0 {
		t.Errorf("rules prepared without network were used for a spec with it: %s", stderr)
	}
}

func TestPreparedCloseBeforeUse(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	spec := w.spec(t, nil)
	pre := Prepare(spec, st)
	pre.Close()
	pre.Close()
	// A closed Prepared is not used: the command still starts, confined.
	cmd := exec.Command("sh", "-c", `echo x > "$OUT/closed"`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "OUT=" + w.outside}
	a, err := StartPrepared(cmd, spec, st, pre)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !a.Enforced || exists(filepath.Join(w.outside, "closed")) {
		t.Fatalf("applied %+v; outside file exists: %v", a, exists(filepath.Join(w.outside, "closed")))
	}
}
