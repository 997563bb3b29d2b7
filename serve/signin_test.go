package serve

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityNothingOnDiskOpensThePage: an older serve's token file is
// removed when serve starts, and no file serve writes holds its session
// key or a sign-in code it issued.
func TestSecurityNothingOnDiskOpensThePage(t *testing.T) {
	f := newGateFixture(t, policy.Default(), nil)
	old := filepath.Join(f.paths.StateDir, legacyTokenName)
	if err := os.WriteFile(old, []byte(strings.Repeat("a", 52)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.start()
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", old, err)
	}
	code := f.code()
	b := f.browser(true)
	b.get("/")
	secrets := [][]byte{f.srv.sess.key, []byte(hex.EncodeToString(f.srv.sess.key)), []byte(code)}
	err := filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, s) {
				t.Errorf("%s holds a secret of the page", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSecuritySignInSocketIsPrivate: the socket is the user's alone (0600
// in a 0700 directory), hands out a link that signs a browser in once,
// and serve refuses to listen in a directory others may enter.
func TestSecuritySignInSocketIsPrivate(t *testing.T) {
	f := newFixture(t)
	sock := f.paths.ServeSocket()
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, %v", sock, fi.Mode(), err)
	}
	if di, err := os.Stat(filepath.Dir(sock)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: %v, %v", di.Mode(), err)
	}
	link, exp, err := SignIn(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(exp); d <= 0 || d > SignInTTL {
		t.Errorf("the link lasts %v", d)
	}
	b := f.browser(false)
	path := strings.TrimPrefix(link, f.base())
	if resp := b.get(path); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the socket's link: %s", resp.Status)
	}
	if resp := f.browser(false).get(path); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the link signed a second browser in: %s", resp.Status)
	}
	f.shutdown()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived serve: %v", err)
	}

	if err := os.Chmod(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(f.cfg); err == nil || !strings.Contains(err.Error(), "open to others") {
		t.Fatalf("Start in a directory others may enter: %v", err)
	}
}

// TestSecuritySandboxedPeerIsFound: a process whose parent runs a
// program named mnemos (as every command mnemos run confines has) is
// refused a link; one without is not.
func TestSecuritySandboxedPeerIsFound(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "mnemos")
	in, err := os.Open(sh)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(fake, os.O_WRONLY|os.O_CREATE, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	in.Close()
	out.Close()
	for _, tc := range []struct {
		prog string
		want bool
	}{{fake, true}, {sh, false}} {
		cmd := exec.Command(tc.prog, "-c", "sleep 30; :")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		child := 0
		for deadline := time.Now().Add(5 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			child = childOf(cmd.Process.Pid)
		}
		_, got := sandboxedAncestor(child)
		cmd.Process.Kill()
		cmd.Wait()
		if child == 0 {
			t.Fatal("the shell started no child")
		}
		if got != tc.want {
			t.Errorf("under %s: sandboxed = %v, want %v", tc.prog, got, tc.want)
		}
	}
}

// childOf finds a child of pid in /proc.
func childOf(pid int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(n) == pid {
			return n
		}
	}
	return 0
}
