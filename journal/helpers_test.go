package journal

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ws is a workspace and a journal; its methods do what a command would,
// calling Before first as the seccomp loop does.
type ws struct {
	t   *testing.T
	dir string
	j   *Journal
	r   *Run
}

func newWS(t *testing.T, o Options) *ws {
	t.Helper()
	base := t.TempDir()
	w := &ws{t: t, dir: filepath.Join(base, "work")}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.dir, _ = filepath.EvalSymlinks(w.dir)
	if o.Dir == "" {
		o.Dir = filepath.Join(base, "state", "journal")
	}
	j, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	w.j = j
	return w
}

func (w *ws) p(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(w.dir, rel)
}

// begin starts a run.
func (w *ws) begin() *Run {
	w.t.Helper()
	r, err := w.j.Begin(RunInfo{Workspace: w.dir, Argv: []string{"test"}, Session: "s1"})
	if err != nil {
		w.t.Fatal(err)
	}
	w.r = r
	return r
}

func (w *ws) finish() Summary {
	w.t.Helper()
	s, err := w.r.Finish()
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *ws) before(k Kind, a, b string) {
	w.t.Helper()
	if err := w.r.Before(k, w.p(a), bOrEmpty(w, b)); err != nil {
		w.t.Fatalf("Before(%s, %s, %s): %v", k, a, b, err)
	}
}

func bOrEmpty(w *ws, b string) string {
	if b == "" {
		return ""
	}
	return w.p(b)
}

func (w *ws) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// Setup helpers (no run).
func (w *ws) file(rel, content string, mode fs.FileMode) {
	w.t.Helper()
	w.must(os.MkdirAll(filepath.Dir(w.p(rel)), 0o755))
	w.must(os.WriteFile(w.p(rel), []byte(content), mode))
	w.must(os.Chmod(w.p(rel), mode))
	old := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
	w.must(os.Chtimes(w.p(rel), old, old))
}

// Calls, each recorded first.
func (w *ws) write(rel, content string) {
	w.t.Helper()
	w.before(Write, rel, "")
	f, err := os.OpenFile(w.p(rel), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	w.must(err)
	_, err = f.WriteString(content)
	w.must(err)
	w.must(f.Close())
}

func (w *ws) appendTo(rel, content string) {
	w.t.Helper()
	w.before(Write, rel, "")
	f, err := os.OpenFile(w.p(rel), os.O_WRONLY|os.O_APPEND, 0)
	w.must(err)
	_, err = f.WriteString(content)
	w.must(err)
	w.must(f.Close())
}

func (w *ws) truncate(rel string, n int64) {
	w.t.Helper()
	w.before(Write, rel, "")
	w.must(os.Truncate(w.p(rel), n))
}

func (w *ws) unlink(rel string) {
	w.t.Helper()
	w.before(Unlink, rel, "")
	w.must(syscall.Unlink(w.p(rel)))
}

func (w *ws) rmdir(rel string) {
	w.t.Helper()
	w.before(Rmdir, rel, "")
	w.must(syscall.Rmdir(w.p(rel)))
}

func (w *ws) mkdir(rel string, mode fs.FileMode) {
	w.t.Helper()
	w.before(Mkdir, rel, "")
	w.must(os.Mkdir(w.p(rel), mode))
}

func (w *ws) rename(a, b string) {
	w.t.Helper()
	w.before(Rename, a, b)
	w.must(syscall.Rename(w.p(a), w.p(b)))
}

func (w *ws) exchange(a, b string) {
	w.t.Helper()
	w.before(Exchange, a, b)
	w.must(exchange(w.p(a), w.p(b)))
}

func (w *ws) chmod(rel string, mode fs.FileMode) {
	w.t.Helper()
	w.before(Chmod, rel, "")
	w.must(os.Chmod(w.p(rel), mode))
}

func (w *ws) symlink(target, rel string) {
	w.t.Helper()
	w.before(Symlink, rel, "")
	w.must(os.Symlink(target, w.p(rel)))
}

func (w *ws) link(old, new string) {
	w.t.Helper()
	w.before(Link, old, new)
	w.must(os.Link(w.p(old), w.p(new)))
}

// rmrf removes a tree as rm -rf does: children first, each call recorded.
func (w *ws) rmrf(rel string) {
	w.t.Helper()
	fi, err := os.Lstat(w.p(rel))
	w.must(err)
	if fi.IsDir() {
		ents, err := os.ReadDir(w.p(rel))
		w.must(err)
		for _, e := range ents {
			w.rmrf(filepath.Join(rel, e.Name()))
		}
		w.rmdir(rel)
		return
	}
	w.unlink(rel)
}

// snapshot describes every name below dir: type, permission bits,
// content or target, a file's modification time, and which names share
// an inode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	inodes := map[uint64][]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir // not journaled
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var s State
		sysStat(fi, &s)
		desc := fmt.Sprintf("%s %04o", typeOf(fi.Mode()), unixPerm(fi.Mode()))
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %q mtime=%d", data, s.Mtime)
			inodes[s.Ino] = append(inodes[s.Ino], rel)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range inodes {
		if len(names) > 1 {
			sort.Strings(names)
			for _, n := range names {
				out[n] += " links=" + strings.Join(names, ",")
			}
		}
	}
	return out
}

func diffSnapshots(want, got map[string]string) string {
	var b bytes.Buffer
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			fmt.Fprintf(&b, "%s:\n\twant %s\n\tgot  %s\n", k, orNone(want[k]), orNone(got[k]))
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}
