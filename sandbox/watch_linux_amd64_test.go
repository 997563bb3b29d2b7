package sandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// amd64 also has the calls older than the *at forms.
func TestWatchNumbersAMD64(t *testing.T) {
	calls, _ := watchCalls("amd64")
	host := map[string]uint32{
		"open": unix.SYS_OPEN, "creat": unix.SYS_CREAT, "unlink": unix.SYS_UNLINK, "rmdir": unix.SYS_RMDIR,
		"mkdir": unix.SYS_MKDIR, "mknod": unix.SYS_MKNOD, "rename": unix.SYS_RENAME, "link": unix.SYS_LINK,
		"symlink": unix.SYS_SYMLINK, "chmod": unix.SYS_CHMOD, "chown": unix.SYS_CHOWN, "lchown": unix.SYS_LCHOWN,
	}
	for _, c := range calls {
		if nr, ok := host[c.name]; ok {
			if nr != c.nr {
				t.Errorf("%s is %d in the table, %d on amd64", c.name, c.nr, nr)
			}
			delete(host, c.name)
		}
	}
	if len(host) > 0 {
		t.Errorf("not trapped: %v", host)
	}
}
