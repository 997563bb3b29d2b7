package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityNestedRepoAsks: at level full, a command that makes a git
// repository inside the workspace's asks, under the sandbox and outside
// it, however it makes it (git init, clone, submodule, worktree, a copy,
// an extraction, a .git written by hand), and its card says so; the
// look-alikes do not ask for it. Under the sandbox, git init of a
// directory the request makes afresh runs (the run's check looks after
// what it leaves); outside, nothing looks after it, so it asks.
func TestSecurityNestedRepoAsks(t *testing.T) {
	f := newFixture(t, strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1))
	for p, s := range map[string]string{
		filepath.Join(f.ws, "existing", "f"):                       "x\n",
		filepath.Join(f.ws, "vendor", "lib", "lib.go"):             "package lib\n",
		filepath.Join(filepath.Dir(f.ws), "other", ".git", "HEAD"): "ref: refs/heads/main\n",
		filepath.Join(filepath.Dir(f.ws), "other", "a.go"):         "package a\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		asks   = "ask"
		allows = "allow"
		any    = ""
	)
	tests := []struct {
		cmd                string
		sandboxed, outside string
		nested             bool
	}{
		{"git init vendor/lib", asks, asks, true},
		{"git init existing", asks, asks, true},
		{"cd existing && git init", asks, asks, true},
		{"git -C existing init", asks, asks, true},
		{"git init -q --template=./tpl existing", asks, asks, true},
		{"GIT_DIR=existing/.git git init", asks, asks, true},
		{"git init --bare existing", asks, asks, true},
		{"git clone https://example.com/x.git", asks, asks, true},
		{"git clone -q --depth 1 https://example.com/x.git vendor/x", asks, asks, true},
		{"git clone ../other vendor/other", asks, asks, true},
		{"git submodule add https://example.com/x.git vendor/x", asks, asks, true},
		{"git submodule update --init --recursive", asks, asks, true},
		{"git submodule absorbgitdirs", asks, asks, true},
		{"git worktree add ../wt", asks, asks, true},
		{"git worktree add -b feature wt", asks, asks, true},
		{"cp -r ../other/.git existing/", asks, asks, true},
		{"cp -r ../other existing/copy", asks, asks, true},
		{"rsync -a ../other/ existing/copy/", asks, asks, true},
		{"tar xf lib.tar vendor/lib/.git", asks, asks, true},
		{"tar -C vendor/lib/.git -xf git.tar", asks, asks, true},
		{"unzip lib.zip -d vendor/lib/.git", asks, asks, true},
		{"mkdir -p vendor/lib/.git/hooks", asks, asks, true},
		{"echo 'gitdir: /tmp/x' > existing/.git", asks, asks, true},
		{"cp -r /tmp/x .git/modules/lib", asks, asks, true},
		// git init of a directory made afresh: contained under the sandbox.
		{"git init fresh", allows, asks, false},
		{"mkdir -p test-repo && cd test-repo && git init && echo x > f && git add f", allows, asks, false},
		// Look-alikes.
		{"git init", allows, allows, false},
		{"git status", allows, allows, false},
		{"git commit -qm x", allows, any, false},
		{"git --no-pager log -- .git", allows, allows, false},
		{"rm -rf vendor/foo/.git", allows, any, false},
		{"cp -r existing copy", allows, any, false},
		{"tar xf lib.tar", allows, any, false},
		{"git submodule status", allows, any, false},
		{"git worktree list", allows, any, false},
	}
	for _, tt := range tests {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", tt.cmd)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.sandboxed
			if unsandboxed {
				want = tt.outside
			}
			nested := false
			for _, c := range d.Commands {
				nested = nested || c.NestedRepo != ""
			}
			if want != any && d.Outcome.String() != want {
				t.Errorf("%q (unsandboxed %v) = %s; want %s", tt.cmd, unsandboxed, describe(d), want)
			}
			if nested != (tt.nested || unsandboxed && tt.outside == asks && tt.sandboxed == allows && strings.Contains(tt.cmd, "git init")) {
				t.Errorf("%q (unsandboxed %v): makes a nested repository = %v (%s)", tt.cmd, unsandboxed, nested, d.Reason)
			}
		}
	}

	// The card says so.
	d, err := f.g.Decide(context.Background(), f.req("bash", "-c", "git clone ../other vendor/other"), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	card := strings.Join(d.Card, "\n")
	if !strings.Contains(card, "makes a git repository at vendor/other inside the repository "+f.ws) || !strings.Contains(card, "moved aside") {
		t.Errorf("card:\n%s", card)
	}
}

// TestNestedRepoFreshProject: in a directory that is no repository, git
// init and git clone make no repository inside another, and ask no more
// than they did.
func TestNestedRepoFreshProject(t *testing.T) {
	f := newFixture(t, strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1))
	if err := os.RemoveAll(filepath.Join(f.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(f.ws, "app"), 0o755)
	for _, cmd := range []string{"git init", "git init app", "cd app && git init", "git clone https://example.com/x.git", "git init --bare x.git"} {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", cmd)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range d.Commands {
				if c.NestedRepo != "" {
					t.Errorf("%q (unsandboxed %v): nested at %s", cmd, unsandboxed, c.NestedRepo)
				}
			}
		}
	}
}
