package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// reachFixture is a workspace and two directories outside what the
// sandbox grants, out (which a request writes) and elsewhere (where a
// link in out may lead).
func reachFixture(t *testing.T) (f *fixture, out, elsewhere string) {
	t.Helper()
	requireLandlock(t, 1)
	f = newFixture(t, "")
	out = filepath.Join(filepath.Dir(f.ws), "outside")
	elsewhere = filepath.Join(filepath.Dir(f.ws), "elsewhere")
	for _, d := range []string{out, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(elsewhere, "a.txt"), filepath.Join(elsewhere, "b.txt"), filepath.Join(out, "plain.txt")} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f, out, elsewhere
}

func relink(t *testing.T, target, link string) {
	t.Helper()
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestSecurityReachCarriesWhatItResolvesTo: a write outside the sandbox
// through a link asks with a card naming both the link and where it
// leads, and what the sandbox would grant is that target.
func TestSecurityReachCarriesWhatItResolvesTo(t *testing.T) {
	f, out, elsewhere := reachFixture(t)
	w := filepath.Join(out, "w.txt")
	relink(t, filepath.Join(elsewhere, "a.txt"), w)
	d := f.decide(t, Mode{DryRun: true}, "bash", "-c", "echo x > "+w)
	if d.Outcome != policy.Ask || len(d.Reach) != 1 {
		t.Fatalf("= %s, reach %+v; want ask with one reach", describe(d), d.Reach)
	}
	if r := d.Reach[0]; r.Path != w || r.Resolved != filepath.Join(elsewhere, "a.txt") || !r.Write {
		t.Errorf("reach = %+v; want %s resolved to %s", r, w, filepath.Join(elsewhere, "a.txt"))
	}
	if line := reachLines(d.Reach)[0]; !strings.Contains(line, w+" (a link to "+filepath.Join(elsewhere, "a.txt")+")") {
		t.Errorf("card line %q does not name the link's target", line)
	}
	// A plain file reads as before.
	d = f.decide(t, Mode{DryRun: true}, "bash", "-c", "echo x > "+filepath.Join(out, "plain.txt"))
	if len(d.Reach) != 1 || d.Reach[0].Resolved != "" || strings.Contains(reachLines(d.Reach)[0], "a link") {
		t.Errorf("plain file: reach %+v", d.Reach)
	}
}

// TestSecurityReachSwappedAfterApprovalIsRefused: the rerun that would
// spend the approval of a write outside the sandbox is refused when the
// path now leads elsewhere than the card said (a link swapped in for a
// plain file, or retargeted), and runs when it still leads where it did.
func TestSecurityReachSwappedAfterApprovalIsRefused(t *testing.T) {
	f, out, elsewhere := reachFixture(t)
	a, b := filepath.Join(elsewhere, "a.txt"), filepath.Join(elsewhere, "b.txt")
	for _, tc := range []struct {
		name          string
		before, after string // link targets; "" is a plain file
		refused       bool
	}{
		{"plain file swapped for a link", "", a, true},
		{"link retargeted", a, b, true},
		{"link left alone", a, a, false},
		{"plain file left alone", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := filepath.Join(out, strings.ReplaceAll(tc.name, " ", "_"))
			set := func(target string) {
				os.Remove(w)
				if target == "" {
					if err := os.WriteFile(w, []byte("orig\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				relink(t, target, w)
			}
			set(tc.before)
			argv := []string{"bash", "-c", "echo x > " + w}
			f.askAndApprove(t, ApproveOptions{}, argv...)
			set(tc.after)
			d := f.decide(t, Mode{SpendTicket: true}, argv...)
			if tc.refused {
				if d.Outcome != policy.Deny || d.BlockedBy != "sandbox" || !strings.Contains(d.Reason, "leads elsewhere than when it was approved") {
					t.Fatalf("= %s; want deny by sandbox: leads elsewhere", describe(d))
				}
				return
			}
			if d.Outcome != policy.Allow || d.Ticket == "" {
				t.Fatalf("= %s; want allow by the ticket", describe(d))
			}
		})
	}
}

// TestSecurityReachMovedBeforeTheRunIsRefused: between the decision and
// the sandbox, a path the decision lets the run reach is resolved again;
// one that now leads elsewhere refuses the run.
func TestSecurityReachMovedBeforeTheRunIsRefused(t *testing.T) {
	f, out, elsewhere := reachFixture(t)
	w := filepath.Join(out, "w.txt")
	relink(t, filepath.Join(elsewhere, "a.txt"), w)
	argv := []string{"bash", "-c", "echo x > " + w}
	f.askAndApprove(t, ApproveOptions{}, argv...)
	d := f.decide(t, Mode{SpendTicket: true}, argv...)
	if d.Outcome != policy.Allow || len(d.Reach) != 1 {
		t.Fatalf("= %s; want allow with a reach", describe(d))
	}
	if err := reachMoved(d); err != nil {
		t.Fatalf("reachMoved before any change: %v", err)
	}
	if _, err := f.g.sandboxSpec(f.req(argv...), d, RunOptions{}); err != nil {
		t.Fatalf("sandboxSpec before any change: %v", err)
	}
	relink(t, filepath.Join(f.home, ".bashrc"), w)
	if err := reachMoved(d); !errors.Is(err, ErrReachMoved) {
		t.Fatalf("reachMoved after the swap = %v; want ErrReachMoved", err)
	}
	if _, err := f.g.sandboxSpec(f.req(argv...), d, RunOptions{}); !errors.Is(err, ErrReachMoved) {
		t.Fatalf("sandboxSpec after the swap = %v; want ErrReachMoved", err)
	}
}

// TestSecurityReachToWhatRunsLaterIsNeverGranted: a write outside the
// sandbox whose path resolves to what runs later (another repository's
// hooks, an agent's hooks file) is refused up front: no policy can grant
// it.
func TestSecurityReachToWhatRunsLaterIsNeverGranted(t *testing.T) {
	f, out, elsewhere := reachFixture(t)
	for _, target := range []string{
		filepath.Join(elsewhere, ".git", "hooks", "post-checkout"),
		filepath.Join(f.home, ".copilot", "hooks", "zzz.json"),
		filepath.Join(f.home, ".bashrc"),
	} {
		w := filepath.Join(out, "l")
		relink(t, target, w)
		var res sandbox.Resolver
		resolved, never := f.g.reachResolved(sandbox.Need{Path: w, Write: true}, sandbox.Spec{}, f.ws, &res)
		if resolved != target || !strings.Contains(never, "no policy can grant it") || !strings.Contains(never, "(a link to ") {
			t.Errorf("%s -> %s: resolved %q, never %q", w, target, resolved, never)
		}
		if _, never := f.g.reachResolved(sandbox.Need{Path: w}, sandbox.Spec{}, f.ws, &res); never != "" {
			t.Errorf("reading %s -> %s: never %q; reading it is the sandbox's to judge", w, target, never)
		}
	}
	// Named as it is, a path asks as what runs later where it is
	// (classify): only a link hides it.
	for _, p := range []string{filepath.Join(out, "plain.txt"), filepath.Join(elsewhere, ".git", "hooks", "post-checkout")} {
		if _, never := f.g.reachResolved(sandbox.Need{Path: p, Write: true}, sandbox.Spec{}, f.ws, &sandbox.Resolver{}); never != "" {
			t.Errorf("%s: never %q", p, never)
		}
	}
}
