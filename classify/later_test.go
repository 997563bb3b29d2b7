package classify

import "testing"

// TestSecurityWritesToWhatRunsLaterResolved: a write is judged on every
// path it may resolve to (globs, a link made to what runs later, a copy
// into a git directory, git init's template, split's prefix), and the
// list of what runs later matches the sandbox's: each is code:exec with
// a floor of ask, so it asks at every level.
func TestSecurityWritesToWhatRunsLaterResolved(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   bool
	}{
		// Files other programs run or obey at their next start.
		{"echo x > ~/.cargo/env", true},
		{"echo 'import os' > ~/.local/lib/python3.11/site-packages/x.pth", true},
		{"echo x > /usr/lib/python3/dist-packages/sitecustomize.py", true},
		{"echo x > ~/.pyenv/pyenv.d/exec/x.bash", true},
		{"cp x ~/.pyenv/shims/python", true},
		{"echo x > /etc/apt/apt.conf.d/99x", true},
		{"echo x > /etc/ld.so.conf.d/x.conf", true},
		{"echo x > /etc/pam.d/sshd", true},
		{"echo x > ~/.local/share/systemd/user/x.service", true},
		{"echo x > ~/.claude/settings.json", true},
		{"echo x > .claude/settings.json", true},
		{"echo x > ~/.vimrc", true},
		{"echo x > ~/.config/nvim/init.lua", true},
		{"echo x > ~/.gdbinit", true},
		{"echo x > .cargo/config.toml", true},
		{"echo x > mise.toml", true},
		{"rm mise.toml", false},
		{"echo x > src/settings.json", false},
		{"echo x > notes/vimrc.txt", false},
		// Globs.
		{"echo x > .git/hoo*/pre-commit", true},
		{"echo x > .git/conf?g", true},
		{"echo x > .git/*/pre-push", true},
		{"cp x .g?t/hooks/post-merge", true},
		{"echo x > ~/.bash?c", true},
		{"echo x > src/*.txt", false},
		// A link to what runs later, made to write through.
		{"ln -s .git/hooks h", true},
		{"ln -s /w/.git g", true},
		{"ln -sf ~/.bashrc b", true},
		{"cp -s .git/config c", true},
		{"ln -s ../lib/a.so b.so", false},
		// Copies, moves and archives into a git directory.
		{"cp -r evil/ .git/hooks", true},
		{"cp x .git/", true},
		{"mv x .git/", true},
		{"rsync -a evil/ .git/hooks/", true},
		{"tar -x -C .git -f x.tar", true},
		{"cp -r evil .git/modules/sub", true},
		{"rm -rf .git/index.lock", false},
		// git init's template copies its hooks.
		{"git init --template=/tmp/t", true},
		{"git init --templ=/tmp/t", true},
		{"git init -q", false},
		// split's and csplit's output prefixes.
		{"split -b1 f .git/hooks/pre-", true},
		{"csplit -f .git/hooks/pre- f 1", true},
		// The widened list.
		{"echo x > .git/config.worktree", true},
		{"echo x > .git/info/attributes", true},
		{"echo x > .git/commondir", true},
		{"echo x > .git/modules/sub/config", true},
		{"echo x > .git/modules/sub/hooks/pre-commit", true},
		{"echo x > .git/worktrees/w/gitdir", true},
		{"echo x > .git/worktrees/w/commondir", true},
		{"echo x > .husky/pre-commit", true},
		{"echo x > .vscode/tasks.json", true},
		{"echo x > .vscode/settings.json", true},
		{"echo x > .idea/runConfigurations/x.xml", true},
		{"echo x > .devcontainer/devcontainer.json", true},
		{"echo x > .pre-commit-config.yaml", true},
		{"echo x > lefthook.yml", true},
		{"echo x > .lefthook-local.yaml", true},
		{"echo x > ~/.local/bin/ls", true},
		{"echo x > ~/bin/git", true},
		{"echo x > /usr/local/bin/git", true},
		{"echo x > ~/.config/autostart/x.desktop", true},
		{"echo x > ~/.config/systemd/user/x.service", true},
		{"echo x > ~/.local/share/applications/x.desktop", true},
		{"echo x > /var/spool/cron/crontabs/u", true},
		{"echo x > /etc/cron.d/x", true},
		{"echo x > /etc/crontab", true},
		{"echo x > ~/.gitconfig", true},
		{"echo x >> ~/.bash_aliases", true},
		{"echo x > .vscode/notes.md", false},
		{"echo x > lefthook.md", false},
		{"echo x > .github/workflows/ci.yml", false},
		{"echo x > ~/.local/share/notes.txt", false},
		{"echo x > docs/cron.md", false},
	} {
		cl := classifyScript(t, tc.script)
		// A write to a path that is not known before it runs (a glob
		// that may reach a hidden name) asks on its own floor.
		got := cl.Floor == Ask
		for _, a := range cl.Accesses {
			if a.Capability == CodeExec {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%s: runs code = %v, want %v (%+v)", tc.script, got, tc.want, cl.Accesses)
		}
	}
}
