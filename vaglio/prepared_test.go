package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// preparedGuards are guards with clean, odd and missing fields.
func preparedGuards() []Guard {
	return []Guard{
		{},
		testGuard(),
		{Home: "/"},
		{Home: "relative/home"},
		{Home: "/root", Protected: []string{"/root/.config/mnemos"}},
		{Home: "/home/u/", Protected: []string{"", "relative", "/", "/home/u//.config/./mnemos/", "/home/u/.con[f]ig/mne*mos"}},
		{Home: "/home/u", SelfNames: []string{"", "/", ".", "/usr/local/bin/mnemos", "./bin/mn", "/opt//mn/../bin/mn2"}},
	}
}

func preparedCommands() []shellparse.Command {
	return []shellparse.Command{
		cmd("rm -rf /"),
		cmd("rm -rf @/*"),
		cmd("rm -rf ~"),
		cmd("rm -rf /home/u/.config"),
		cmd("mkfs.ext4 /dev/sda1"),
		cmd("dd if=/dev/zero of=/dev/sda"),
		cmd("chmod -R 777 /"),
		cmd("cat /etc/shadow"),
		cmd("cat /home/u/.ssh/id_rsa"),
		cmd("cat ~/.ssh/id_rsa.pub"),
		cmd("cp x /home/u/.config/mnemos/policy.yaml"),
		cmd("touch .config/mnemos/x"),
		cmd("mv /home/u/.conf/mne-mos/x y"),
		redir(cmd("echo hi"), ">", "/home/u/.local/state/mnemos/audit.jsonl"),
		redir(cmd("echo hi"), ">", "/dev/sda"),
		within(cmd(":"), "function :", "|"),
		cmd("mnemos approvals approve 1"),
		cmd("/usr/local/bin/mnemos grants add fs:write /"),
		cmd("./bin/mn policy edit"),
		cmd("python3 -c 'import shutil; shutil.rmtree(\"/\")'"),
		wrap(cmd("rm -rf ."), "env", "env", "-C", "/"),
		wrap(cmd("cat shadow"), "sudo", "sudo", "--chdir=/etc"),
		cmd("git status --short"),
		cmd("grep -rn TODO --include=*.go ."),
		cmd("go test ./..."),
		cmd("ls -la src/"),
	}
}

// TestSecurityPreparedIsGuard: a prepared guard judges as its guard, the
// zero Prepared as the zero Guard, and changing the guard's slices after
// Prepare changes nothing.
func TestSecurityPreparedIsGuard(t *testing.T) {
	for _, g := range preparedGuards() {
		p := g.Prepare()
		for _, c := range preparedCommands() {
			for _, cwd := range []string{"", "/", "/home/u", "/home/u/proj/", "/etc", "relative"} {
				h1, ok1 := g.Check(c, cwd)
				h2, ok2 := p.Check(c, cwd)
				if h1 != h2 || ok1 != ok2 {
					t.Errorf("Guard%+v in %q on %s: guard %v %+v, prepared %v %+v", g, cwd, c, ok1, h1, ok2, h2)
				}
			}
		}
	}
	var zero Prepared
	for _, c := range preparedCommands() {
		h1, ok1 := Guard{}.Check(c, "/home/u")
		h2, ok2 := zero.Check(c, "/home/u")
		if h1 != h2 || ok1 != ok2 {
			t.Errorf("zero Prepared on %s: %v %+v, want %v %+v", c, ok2, h2, ok1, h1)
		}
	}
	g := testGuard()
	p := g.Prepare()
	g.Protected[0], g.SelfNames[0] = "/elsewhere", "other"
	for _, c := range preparedCommands() {
		h1, ok1 := testGuard().Check(c, "/home/u")
		h2, ok2 := p.Check(c, "/home/u")
		if h1 != h2 || ok1 != ok2 {
			t.Errorf("after the guard's slices changed, on %s: %v %+v, want %v %+v", c, ok2, h2, ok1, h1)
		}
	}
}
