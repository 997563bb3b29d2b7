//go:build unix

package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemos-dev/mnemos/gate"
)

// TestSecurityOwnFilesArePrivateUnderAnyUmask: the directories and files
// mnemos creates are 0700 and 0600 whatever the umask, so StrictModes
// never refuses what mnemos wrote itself.
func TestSecurityOwnFilesArePrivateUnderAnyUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	// Not under /tmp, where run refuses to keep its state.
	home, err := os.MkdirTemp("/var/tmp", "mnemos-umask-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := filepath.Join(home, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	env := map[string]string{"HOME": home, "MNEMOS_SENDER": "dev"}
	getenv := func(k string) string { return env[k] }
	var out, errs strings.Builder
	s := stdio{in: strings.NewReader(""), out: &out, err: &errs}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"init"}, 0},
		{[]string{"run", "--", "true"}, 0},
		// An ask creates the database.
		{[]string{"policy", "check", "--", "touch", "notes.txt"}, exitApproval},
	} {
		if code := Main(context.Background(), c.args, s, getenv); code != c.code {
			t.Fatalf("mnemos %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, errs.String())
		}
	}
	paths, err := gate.Locate("", getenv, home)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{paths.ConfigDir, paths.StateDir} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{paths.PolicyFile, paths.DBFile, paths.AuditFile} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was not created: %v", f, err)
		}
	}
	if found := (gate.StrictModes{UID: os.Geteuid()}).Check(paths); len(found) > 0 {
		t.Errorf("StrictModes refuses what mnemos wrote: %v", found)
	}
}
