package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestSecurityGuardLookAlikes: commands that only look like a guard hit
// (a file system made in an image file of the workspace, code that only
// prints a dangerous command, a shell told only to read its script, find
// showing the names it finds) are left to the policy, and each sibling
// that really does the dangerous thing stays a hit.
func TestSecurityGuardLookAlikes(t *testing.T) {
	const ws = "/home/u/proj"
	g := testGuard()
	g.Workspace = ws
	shn := func(line string, shellArgv ...string) shellparse.Command {
		return wrap(within(cmd(line), "bash -c"), shellArgv[0]+" -c", shellArgv...)
	}
	for _, tc := range []struct {
		cmd  shellparse.Command
		want string
	}{
		// mkfs in an image file of the workspace.
		{cmd("mkfs.ext4 disk.img"), ok},
		{cmd("mkfs.ext4 -F -L data build/disk.img 10M"), ok},
		{cmd("mkfs.vfat -C fs.img 1024"), ok},
		{cmd("mkfs -t ext4 ./img/root.img"), ok},
		{cmd("mkswap swap.img"), ok},
		{cmd("mkfs.ext4 /dev/sdb1"), irr},
		{cmd("mkfs.ext4 /dev/loop0"), irr},
		{cmd("mkfs.ext4 @$DISK"), irr},
		{cmd("mkfs.ext4 @disk*.img"), irr},
		{cmd("mkfs.ext4 /tmp/disk.img"), irr},
		{cmd("mkfs.ext4 ../disk.img"), irr},
		{cmd("mkfs.ext4 sub/../../x.img"), irr},
		{cmd("mkfs.ext4 ~/disk.img"), irr},
		{cmd("mkfs.ext4 ."), irr},
		{cmd("mkfs.ext4 -d /etc disk.img"), irr},
		{cmd("mkfs.vfat -C fs.img @$N"), irr},
		{cmd("mkfs.ext4 @img/$N.img"), irr},
		{cmd("mkfs.ext4"), irr},
		{cmd("dd if=/dev/zero of=disk.img bs=1M count=10"), ok},
		{cmd("dd if=/dev/zero of=/dev/sda"), irr},
		// Code that only prints.
		{cmd("python3 -c 'print(\"rm -rf /\")'"), ok},
		{cmd("python -c 'print(\"rm -rf ~\"); print(\"done\")'"), ok},
		{cmd("node -e 'console.log(\"rm -rf /\")'"), ok},
		{cmd("perl -e 'print \"rm -rf /\\n\"'"), ok},
		{cmd("ruby -e 'puts \"rm -rf ~\"'"), ok},
		{cmd("python3 -c 'import os; print(\"rm -rf /\")'"), irr},
		{cmd("python3 -c 'print(\"x\"); __import__(\"os\").system(\"rm -rf /\")'"), irr},
		{cmd("python3 -c 'print(os.system(\"rm -rf /\"))'"), irr},
		{cmd("python3 -c 'print(\"rm -rf /\") or os.system(\"rm -rf /\")'"), irr},
		{cmd("python3 -c 'print(\"rm -rf /\", os.system(\"rm -rf /\"))'"), irr},
		{cmd("python3 -c 'print(\"rm -rf /\" + os.popen(\"rm -rf /\").read())'"), irr},
		{within(cmd("python3 -c 'print(\"rm -rf /\")'"), "bash -c", "|"), irr},
		{within(cmd("python3 -c 'print(\"rm -rf /\")'"), "bash -c", "$(…)"), irr},
		{within(cmd("python3 -c 'print(\"rm -rf /\")'"), "bash -c", "<(…)"), irr},
		{within(cmd("python3 -c 'print(\"rm -rf /\")'"), "function f"), irr},
		// A shell that only reads its script.
		{shn("rm -rf /", "sh", "-n", "-c"), ok},
		{shn("rm -rf ~", "bash", "-nc"), ok},
		{shn("rm -rf /", "bash", "-o", "noexec", "-c"), ok},
		{shn("rm -rf /", "fish", "--no-execute", "-c"), ok},
		{shn("rm -rf /", "sh", "-c"), irr},
		{shn("rm -rf /", "bash", "-n", "+n", "-c"), irr},
		{shn("rm -rf /", "bash", "-o", "noexec", "+o", "noexec", "-c"), irr},
		{shn("rm -rf /", "bash", "-o", "errexit", "-c"), irr},
		{shn("rm -rf /", "bash", "--", "-n", "-c"), irr},
		{redir(shn("cat x", "sh", "-n", "-c"), ">", "/dev/sda"), irr},
		{wrap(cmd("rm -rf /"), "su -c", "su", "-n", "-c"), irr},
		// find showing names.
		{cmd("find . -name .env -exec echo {} ;"), ok},
		{wrap(cmd("echo {}"), "find -exec", "find", ".", "-name", ".env", "-exec"), ok},
		{cmd("find . -name .env -exec printf %s\\n {} ;"), ok},
		{cmd("find . -name .env -exec cat {} ;"), fp},
		{cmd("find . -name .env -exec echo {} ; -exec cat {} ;"), fp},
		{cmd("find . -name .env -exec @$X {} ;"), fp},
		{cmd("find . -name .env -exec"), fp},
		{wrap(cmd("cat {}"), "find -exec", "find", "/home/u/.ssh", "-exec"), fp},
		// Metadata of system files.
		{cmd("getfacl /etc/passwd"), ok},
		{cmd("lsattr /etc/shadow"), ok},
		{cmd("namei -l /etc/passwd"), ok},
		{cmd("stat /etc/passwd"), ok},
		{cmd("cat /etc/passwd"), fp},
		{cmd("file /etc/shadow"), fp},
	} {
		h, hit := g.Check(tc.cmd, ws)
		switch {
		case tc.want == ok && hit:
			t.Errorf("%s %v: unexpected hit %s", tc.cmd, tc.cmd.Wrappers, h.Reason)
		case tc.want != ok && !hit:
			t.Errorf("%s %v %v: no hit, want %s", tc.cmd, tc.cmd.Wrappers, tc.cmd.Context, tc.want)
		case hit && h.Check != tc.want:
			t.Errorf("%s: check %s, want %s (%s)", tc.cmd, h.Check, tc.want, h.Reason)
		}
	}
}

// TestSecurityOnlyPrints: code counts as only printing when it is nothing
// but print calls of plain literals; a literal a language interpolates or
// any other statement makes it code whose literals are read.
func TestSecurityOnlyPrints(t *testing.T) {
	for code, want := range map[string]bool{
		`print('rm -rf /')`:                        true,
		`print("rm -rf ~\n"); print('x')`:          true,
		`console.log('rm -rf /')`:                  true,
		`puts 'rm -rf ~'`:                          true,
		`print "rm -rf /\n"`:                       true,
		`echo 'rm -rf /';`:                         true,
		``:                                         false,
		`echo "{${system('rm -rf /')}}";`:          false,
		`puts "#{system('rm -rf /')}"`:             false,
		"console.log(`${execSync('rm -rf /')}`)":   false,
		`print "@{[ system 'rm -rf /' ]}"`:         false,
		`print(f'{os.system("rm -rf /")}')`:        false,
		`print('a', os.system('rm -rf /'))`:        false,
		`print('a') or os.system('rm -rf /')`:      false,
		`print = os.system; print('rm -rf /')`:     false,
		`import os; print('rm -rf /')`:             false,
		`os.print('rm -rf /')`:                     false,
		`print('rm -rf /'`:                         false,
		`print('\x72m -rf /')`:                     false,
		`sys.stdout.write('rm -rf /')`:             false,
		`print('rm -rf /')\nos.system('rm -rf /')`: false,
	} {
		if got := onlyPrints(code); got != want {
			t.Errorf("onlyPrints(%q) = %v, want %v", code, got, want)
		}
	}
}
