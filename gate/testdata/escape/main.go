// Command escape tries, from inside mnemos's sandbox, each way out that
// the sandbox must close, and prints one line per attempt:
//
//	NAME<TAB>ok|refused|skipped<TAB>DETAIL
//
// It is built and run by gate's TestSecurityEscapeSuite as an allowed
// command; with the argument swap-git it makes only the attempt that
// moves the workspace's .git away. Every path it touches is put together here, while it runs, from
// directories named in its environment, so the decision layer, which
// reads only the command line, never sees one. It exits 0 whatever
// happens: the test reads the lines.
//
// Environment: ESCAPE_HOME (the user's home), ESCAPE_MNEMOS (mnemos's
// configuration directory), ESCAPE_RO (a directory granted read-only
// holding "file"), ESCAPE_FD and ESCAPE_FD_MARK (a descriptor the caller
// left open on a secret file, and a string in that file), ESCAPE_HOME_SOCK
// and ESCAPE_TMP_SOCK (unix sockets someone listens on), ESCAPE_SSL (the
// name of a key under /etc/ssl/private, empty when there is none).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	// First, before this program opens anything that could take its
	// number: the descriptor the caller left open.
	fdAttempts()

	home, mn, ro := os.Getenv("ESCAPE_HOME"), os.Getenv("ESCAPE_MNEMOS"), os.Getenv("ESCAPE_RO")
	ws, err := os.Getwd()
	if err != nil {
		fmt.Println("getwd\trefused\t" + err.Error())
		return
	}
	git := filepath.Join(ws, ".g"+"it")

	if len(os.Args) > 1 && os.Args[1] == "swap-git" {
		// Alone, since it moves .git away: renaming the directory that
		// holds the read-only mounts moves them along, and a new .git in
		// its place would be the command's.
		try("replace .git with a writable copy", func() error {
			old := filepath.Join(ws, ".git.moved")
			if err := os.Rename(git, old); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(git, "hooks"), 0o755); err != nil {
				return err
			}
			return write(filepath.Join(git, "hooks", "post-checkout"), "#!/bin/sh\necho pwned\n", os.O_CREATE|os.O_TRUNC)
		})
		return
	}

	// What runs later, outside the sandbox.
	try("write .git/hooks/pre-commit", func() error {
		return write(filepath.Join(git, "ho"+"oks", "pre-commit"), "#!/bin/sh\necho pwned\n", os.O_CREATE|os.O_TRUNC)
	})
	try("append to .git/config", func() error {
		return write(filepath.Join(git, "con"+"fig"), "[core]\n\tfsmonitor = echo pwned\n", os.O_APPEND)
	})
	try("replace .git/config", func() error {
		tmp := filepath.Join(git, "config.new")
		if err := write(tmp, "[core]\n\tfsmonitor = echo pwned\n", os.O_CREATE|os.O_TRUNC); err != nil {
			return err
		}
		defer os.Remove(tmp)
		return os.Rename(tmp, filepath.Join(git, "con"+"fig"))
	})
	try("create .git/config.worktree", func() error {
		return write(filepath.Join(git, "config."+"worktree"), "[core]\n\tfsmonitor = echo pwned\n", os.O_CREATE|os.O_EXCL)
	})
	try("write .git/info/attributes", func() error {
		return write(filepath.Join(git, "in"+"fo", "attributes"), "* filter=pwned\n", os.O_CREATE|os.O_TRUNC)
	})
	try("create .git/commondir", func() error {
		// git reads a commondir file in any git directory: config and
		// hooks would then come from a directory the command may write.
		evil := filepath.Join(ws, "evil-common")
		if err := os.MkdirAll(filepath.Join(evil, "hooks"), 0o755); err != nil {
			return err
		}
		return write(filepath.Join(git, "common"+"dir"), evil+"\n", os.O_CREATE|os.O_EXCL)
	})
	try("write .envrc", func() error {
		return write(filepath.Join(ws, ".env"+"rc"), "echo pwned\n", os.O_CREATE|os.O_TRUNC)
	})
	try("write .vscode/tasks.json", func() error {
		return write(filepath.Join(ws, ".vs"+"code", "tasks.json"), `{"tasks": [{"command": "echo pwned", "runOptions": {"runOn": "folderOpen"}}]}`, os.O_CREATE|os.O_TRUNC)
	})
	try("write ~/.local/bin/x", func() error {
		return write(filepath.Join(home, ".lo"+"cal", "bin", "x"), "#!/bin/sh\necho pwned\n", os.O_CREATE|os.O_TRUNC)
	})

	// Metadata and names of protected files, which Landlock does not
	// restrict: a key, mnemos's policy, and a file granted read-only.
	for _, f := range []struct{ name, path string }{
		{"~/.ssh/id_rsa", filepath.Join(home, ".s"+"sh", "id_"+"rsa")},
		{"policy.yaml", filepath.Join(mn, "poli"+"cy.yaml")},
		{"a read-only file", filepath.Join(ro, "file")},
	} {
		try("chmod "+f.name, func() error { return unix.Chmod(f.path, 0o777) })
		try("chown "+f.name, func() error { return unix.Lchown(f.path, 4242, 4242) })
		try("utime "+f.name, func() error {
			t := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			return os.Chtimes(f.path, t, t)
		})
		try("rename "+f.name, func() error { return os.Rename(f.path, f.path+".moved") })
		try("hard-link "+f.name, func() error { return os.Link(f.path, filepath.Join(ws, "linked-"+filepath.Base(f.path))) })
	}

	// A system file, which every command may read: changed to the mode
	// and owner it has, so that nothing changes if the attempt succeeds.
	sys := "/etc/" + "passwd"
	var st unix.Stat_t
	if err := unix.Lstat(sys, &st); err != nil {
		fmt.Printf("chmod %s (its own mode)\trefused\t%v\n", sys, err)
		fmt.Printf("chown %s (its own owner)\trefused\t%v\n", sys, err)
	} else {
		try("chmod "+sys+" (its own mode)", func() error { return unix.Chmod(sys, st.Mode&0o7777) })
		try("chown "+sys+" (its own owner)", func() error { return unix.Lchown(sys, int(st.Uid), int(st.Gid)) })
	}

	// New namespaces and mounts: a way to undo the view.
	try("unshare CLONE_NEWUSER", func() error { return unix.Unshare(unix.CLONE_NEWUSER) })
	try("unshare CLONE_NEWUSER|CLONE_NEWNS", func() error { return unix.Unshare(unix.CLONE_NEWUSER | unix.CLONE_NEWNS) })
	try("mount a tmpfs", func() error {
		dir := filepath.Join(ws, "mnt")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return unix.Mount("tmpfs", dir, "tmpfs", 0, "")
	})
	try("remount .git/hooks read-write", func() error {
		return unix.Mount("", filepath.Join(git, "hooks"), "", unix.MS_REMOUNT|unix.MS_BIND, "")
	})
	try("unmount .git/hooks", func() error { return unix.Unmount(filepath.Join(git, "hooks"), unix.MNT_DETACH) })
	try("mount_setattr .git/hooks read-write", func() error {
		attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
		return unix.MountSetattr(unix.AT_FDCWD, filepath.Join(git, "hooks"), 0, &attr)
	})

	// Sockets of services outside the sandbox.
	try("connect a unix socket in home", func() error { return connect(os.Getenv("ESCAPE_HOME_SOCK")) })
	try("connect a unix socket in /tmp", func() error { return connect(os.Getenv("ESCAPE_TMP_SOCK")) })

	// A TLS private key, which root could otherwise read.
	if name := os.Getenv("ESCAPE_SSL"); name == "" {
		fmt.Println("read /etc/ssl/private key\tskipped\tno key was made (not root)")
	} else {
		try("read /etc/ssl/private key", func() error {
			_, err := os.ReadFile("/etc/ssl/" + "private/" + name)
			return err
		})
	}

}

// try runs one attempt and prints its line.
func try(name string, f func() error) {
	if err := f(); err != nil {
		fmt.Printf("%s\trefused\t%v\n", name, err)
		return
	}
	fmt.Printf("%s\tok\t\n", name)
}

func write(path, content string, flag int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o755)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func connect(path string) error {
	if path == "" {
		return errors.New("no socket named")
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: path})
}

// fdAttempts reads the descriptor the caller left open, directly and
// through /proc/self/fd. Reading anything but the secret is a refusal.
func fdAttempts() {
	n, err := strconv.Atoi(os.Getenv("ESCAPE_FD"))
	mark := []byte(os.Getenv("ESCAPE_FD_MARK"))
	if err != nil || len(mark) == 0 {
		fmt.Println("read an inherited descriptor\trefused\tno descriptor named")
		fmt.Println("read /proc/self/fd of an inherited descriptor\trefused\tno descriptor named")
		return
	}
	secret := func(b []byte, err error) error {
		switch {
		case err != nil:
			return err
		case !bytes.Contains(b, mark):
			return fmt.Errorf("descriptor %d holds something else", n)
		}
		return nil
	}
	try("read an inherited descriptor", func() error {
		b := make([]byte, 256)
		k, err := unix.Pread(n, b, 0)
		if k < 0 {
			k = 0
		}
		return secret(b[:k], err)
	})
	try("read /proc/self/fd of an inherited descriptor", func() error {
		return secret(os.ReadFile("/proc/self/fd/" + strconv.Itoa(n)))
	})
}
