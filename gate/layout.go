package gate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/audit"
)

// The secrets directory and moving an older layout into it.
//
// mnemos used to keep its credentials beside the rest of its state: the
// audit key, the state database and the hook tickets in the state
// directory itself, and the approvals page's access token in serve.token.
// They now live in Paths.SecretsDir, a directory of their own (0700, files
// 0600), and the page's token lives only in mnemos serve's memory.
//
// Settle moves an older layout into the secrets directory the first time
// a newer mnemos meets it, under a lock, in a way a crash cannot leave
// half done: the files are linked (not moved) into a new directory beside
// it, which is synced, then renamed to the secrets directory in one
// rename(2). Until that rename the older layout is untouched and in use;
// after it, the secrets directory holds every file, and the old names,
// which are the same files, are removed (on the next run if a crash came
// first). Nothing is copied, so nothing written in between is lost.

// movedSecrets are the names, in the state directory, under which an older
// mnemos kept what now lives in the secrets directory.
func movedSecrets() []string {
	return []string{audit.KeyFile, dbName, dbName + "-wal", dbName + "-shm", dbName + "-journal", hookTicketsDir}
}

// legacyToken is the approvals page's access token an older mnemos serve
// wrote; nothing reads it any more, and whoever read it could sign in to
// the page.
const legacyToken = "serve.token"

// newSecretsPrefix begins the name of the directory Settle fills before it
// becomes the secrets directory.
const newSecretsPrefix = ".secrets-new-"

// Settled is what Settle found and did.
type Settled struct {
	// Moved are the files and directories moved into the secrets
	// directory (their old paths).
	Moved []string `json:"moved,omitempty"`
	// Removed are leftovers removed: an older serve's access token, the
	// old names of moved files.
	Removed []string `json:"removed,omitempty"`
	// Postponed says why the older layout is still in use (an older
	// mnemos serve holds it); "" when the secrets directory is in use.
	Postponed string `json:"postponed,omitempty"`
	// Dir is the secrets directory, in use or to be.
	Dir string `json:"dir"`
	// Stale are files an older mnemos wrote under the old names after the
	// move: they are not used, and kept for a person to look at.
	Stale []string `json:"stale,omitempty"`
}

// Legacy returns the paths of the older layout, which kept the secrets in
// the state directory itself.
func (p Paths) Legacy() Paths {
	q := p
	q.SecretsDir = p.StateDir
	q.DBFile = filepath.Join(p.StateDir, dbName)
	q.AuditKey = filepath.Join(p.StateDir, audit.KeyFile)
	return q
}

// LegacySecrets are the paths under which an older mnemos kept secrets in
// the state directory (the moved files and the page's access token). The
// guard refuses commands naming them as it does the secrets directory.
func (p Paths) LegacySecrets() (files, dirs []string) {
	for _, n := range append(movedSecrets(), legacyToken) {
		if n == hookTicketsDir {
			dirs = append(dirs, filepath.Join(p.StateDir, n))
			continue
		}
		files = append(files, filepath.Join(p.StateDir, n))
	}
	return files, dirs
}

// settleStep, when set (tests), is called before each step of a move and
// may stop it there with an error, as a crash would.
type settleStep func(step string) error

// Settle makes sure mnemos's secrets live in the secrets directory: it
// moves an older layout's files there (see the comment above), removes an
// older serve's access token, and returns the paths to use. Those are p,
// or p.Legacy() while an older mnemos serve still holds the older layout
// (Settled.Postponed says so; the move happens once it is stopped). A
// fresh install has nothing to move: the directory is made, mode 0700, by
// the first writer. A secrets directory that is not a directory is an
// error.
func Settle(p Paths) (Paths, Settled, error) { return settle(p, nil) }

func settle(p Paths, step settleStep) (Paths, Settled, error) {
	out := Settled{Dir: p.SecretsDir}
	if p.SecretsDir == "" || p.SecretsDir == p.StateDir {
		return p, out, nil
	}
	have, err := secretsDirState(p.SecretsDir)
	if err != nil {
		return p, out, err
	}
	old := oldSecrets(p)
	token := filepath.Join(p.StateDir, legacyToken)
	_, terr := os.Lstat(token)
	if len(old) == 0 && terr != nil {
		return p, out, nil // the usual case: nothing to move or remove
	}
	unlock, err := lockState(p.StateDir)
	if err != nil {
		return p, out, fmt.Errorf("cannot lock %s to move mnemos's secrets: %w", p.StateDir, err)
	}
	defer unlock()
	if have, err = secretsDirState(p.SecretsDir); err != nil {
		return p, out, err
	}
	if !have && len(oldSecrets(p)) > 0 {
		if pid, busy := olderServe(p.StateDir); busy {
			out.Postponed = "an older mnemos serve" + pidSuffix(pid) + " uses the state in " + p.StateDir +
				": stop it and start it again to move mnemos's secrets into " + p.SecretsDir
			return p.Legacy(), out, nil
		}
		if err := moveSecrets(p, &out, step); err != nil {
			return p, out, err
		}
	}
	if err := removeLeftovers(p, &out); err != nil {
		return p, out, err
	}
	return p, out, nil
}

// secretsDirState reports whether the secrets directory exists; anything
// there but a directory is an error.
func secretsDirState(dir string) (bool, error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, fmt.Errorf("%s is not a directory (%s): mnemos keeps its secrets there; move it aside", dir, fi.Mode().Type())
	}
	return true, nil
}

// oldSecrets are the older layout's files that exist.
func oldSecrets(p Paths) []string {
	var out []string
	for _, n := range movedSecrets() {
		if _, err := os.Lstat(filepath.Join(p.StateDir, n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func pidSuffix(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// moveSecrets links the older layout's files into a new directory and
// renames it to the secrets directory.
func moveSecrets(p Paths, out *Settled, step settleStep) error {
	at := func(s string) error {
		if step == nil {
			return nil
		}
		return step(s)
	}
	// A directory a crash left half filled is of no use: start again.
	if stale, _ := filepath.Glob(filepath.Join(p.StateDir, newSecretsPrefix+"*")); len(stale) > 0 {
		for _, d := range stale {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	if err := at("begin"); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(p.StateDir, newSecretsPrefix) // 0700
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed && step == nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	names := oldSecrets(p)
	for _, n := range names {
		from, to := filepath.Join(p.StateDir, n), filepath.Join(tmp, n)
		if err := at("link " + n); err != nil {
			return err
		}
		fi, err := os.Lstat(from)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			err = linkTree(from, to)
		} else {
			err = linkPrivate(from, to)
		}
		if err != nil {
			return fmt.Errorf("move %s into %s: %w", from, p.SecretsDir, err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := at("commit"); err != nil {
		return err
	}
	if err := os.Rename(tmp, p.SecretsDir); err != nil {
		return fmt.Errorf("move mnemos's secrets into %s: %w", p.SecretsDir, err)
	}
	committed = true
	if err := syncDir(p.StateDir); err != nil {
		return err
	}
	for _, n := range names {
		out.Moved = append(out.Moved, filepath.Join(p.StateDir, n))
	}
	return at("committed")
}

// linkPrivate links the regular file from to to (copying it where the
// file system has no hard links) and makes it readable by its owner only.
func linkPrivate(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", from, fi.Mode().Type())
	}
	if err := os.Link(from, to); err != nil {
		if !isNoLinks(err) {
			return err
		}
		if err := copyPrivate(from, to); err != nil {
			return err
		}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(to, fi.Mode().Perm()&0o700)
	}
	return nil
}

// copyPrivate copies a file, mode 0600, synced.
func copyPrivate(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, in)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// linkTree makes to (0700) and links every regular file of from into it;
// anything else there is left behind.
func linkTree(from, to string) error {
	if err := os.Mkdir(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := linkPrivate(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return syncDir(to)
}

// removeLeftovers removes an older serve's access token and the old names
// of moved files that are still the same files as in the secrets
// directory. An old name that is another file was written by an older
// mnemos after the move: it is left, and reported as stale.
func removeLeftovers(p Paths, out *Settled) error {
	token := filepath.Join(p.StateDir, legacyToken)
	if err := os.Remove(token); err == nil {
		out.Removed = append(out.Removed, token)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if have, err := secretsDirState(p.SecretsDir); err != nil || !have {
		return err
	}
	for _, n := range movedSecrets() {
		from, to := filepath.Join(p.StateDir, n), filepath.Join(p.SecretsDir, n)
		fi, err := os.Lstat(from)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			if err := removeLinkedTree(from, to, out); err != nil {
				return err
			}
			continue
		}
		if ti, err := os.Lstat(to); err == nil && os.SameFile(fi, ti) {
			if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			out.Removed = append(out.Removed, from)
			continue
		}
		out.Stale = append(out.Stale, from)
	}
	return nil
}

// removeLinkedTree removes the files of from that are the same files in
// to, then from itself when that leaves it empty.
func removeLinkedTree(from, to string, out *Settled) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	left := false
	for _, e := range entries {
		a, b := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		fa, err1 := os.Lstat(a)
		fb, err2 := os.Lstat(b)
		if err1 == nil && err2 == nil && os.SameFile(fa, fb) {
			if err := os.Remove(a); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		left = true
	}
	if left {
		out.Stale = append(out.Stale, from)
		return nil
	}
	if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out.Removed = append(out.Removed, from)
	return nil
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && strings.Contains(err.Error(), "invalid argument") {
		return nil // some file systems cannot sync a directory
	}
	return err
}
