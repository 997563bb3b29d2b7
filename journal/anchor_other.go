//go:build !linux

package journal

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// at is a name below the workspace whose directories, when undo looked,
// were no links (see anchor_linux.go; nothing feeds the journal here).
type at struct{ path string }

func openAt(ws, path string) (*at, error) {
	rel, ok := within(ws, path)
	if !ok || !filepath.IsLocal(rel) {
		return nil, errOutside
	}
	walked := ws
	dir, _ := filepath.Split(rel)
	for _, c := range strings.Split(dir, "/") {
		if c == "" {
			continue
		}
		walked = filepath.Join(walked, c)
		fi, err := os.Lstat(walked)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &os.PathError{Op: "open", Path: walked, Err: errLinkOnTheWay}
		}
		if !fi.IsDir() {
			return nil, &os.PathError{Op: "open", Path: walked, Err: syscall.ENOTDIR}
		}
	}
	return &at{path: filepath.Join(ws, rel)}, nil
}

func (a *at) close() {}

func (a *at) sibling(name string) *at { return &at{path: filepath.Join(filepath.Dir(a.path), name)} }

func (a *at) lstat() (State, error) { return lstat(a.path) }

func (a *at) unlink() error               { return syscall.Unlink(a.path) }
func (a *at) rmdir() error                { return syscall.Rmdir(a.path) }
func (a *at) mkdir(mode uint32) error     { return os.Mkdir(a.path, goMode(mode)) }
func (a *at) symlink(target string) error { return os.Symlink(target, a.path) }
func (a *at) mkfifo(mode uint32) error    { return mkfifo(a.path, mode) }
func (a *at) lchown(uid, gid int) error   { return os.Lchown(a.path, uid, gid) }
func (a *at) lutimes(mtimeNs int64) error { return lutimes(a.path, mtimeNs) }
func (a *at) chmod(mode uint32) error     { return os.Chmod(a.path, goMode(mode)) }
func (a *at) open() (*os.File, error)     { return os.Open(a.path) }
func (a *at) create(mode uint32) (*os.File, error) {
	return os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(mode&0o777))
}

func renameAt(from, to *at) error { return os.Rename(from.path, to.path) }
func linkAt(from, to *at) error   { return os.Link(from.path, to.path) }
func exchangeAt(a, b *at) error   { return exchange(a.path, b.path) }
