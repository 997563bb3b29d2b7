package gate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// memAudit records events in memory; fail makes every append fail.
type memAudit struct {
	mu     sync.Mutex
	kinds  []string
	events []map[string]any
	fail   error
}

func (m *memAudit) Append(_ context.Context, kind string, attrs ...slog.Attr) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	ev := map[string]any{}
	for _, a := range attrs {
		ev[a.Key] = a.Value.Any()
	}
	m.kinds = append(m.kinds, kind)
	m.events = append(m.events, ev)
	return nil
}

func (m *memAudit) count(kind string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, k := range m.kinds {
		if k == kind {
			n++
		}
	}
	return n
}

type fixture struct {
	g     *Gate
	audit *memAudit
	ws    string
	home  string
	now   time.Time
}

func newFixture(t *testing.T, policySrc string) *fixture {
	t.Helper()
	// Outside /tmp, which the sandbox grants: it never grants a directory
	// holding the home directory.
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-gate-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{home, ws, filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := Locate(filepath.Join(home, ".mnemos"), func(string) string { return "" }, home)
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.Default()
	if policySrc != "" {
		pol, err = policy.Parse("test.yaml", []byte(policySrc))
		if err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{audit: &memAudit{}, ws: ws, home: home, now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	f.g = New(Config{Paths: paths, Policy: pol, UserHome: home, SelfNames: []string{"mnemos"},
		Now: func() time.Time { return f.now }, Audit: f.audit, Watch: watchOn})
	t.Cleanup(func() { f.g.Close() })
	return f
}

// watchOn is a Config.Watch for a kernel that lets mnemos trap the
// changes of confined commands (the journal is on where the policy turns
// it on), watchOff for one that does not.
func watchOn(sandbox.Status) bool  { return true }
func watchOff(sandbox.Status) bool { return false }

// journal turns the journal on or off for the fixture's later decisions,
// as a kernel that can or cannot trap changes would.
func (f *fixture) journal(on bool) {
	f.g.cfg.Watch = watchOff
	if on {
		f.g.cfg.Watch = watchOn
	}
}

func (f *fixture) req(argv ...string) Request {
	return Request{Argv: argv, Cwd: f.ws, Channel: "cli", Sender: "dev"}
}

func (f *fixture) decide(t *testing.T, mode Mode, argv ...string) Decision {
	t.Helper()
	d, err := f.g.Decide(context.Background(), f.req(argv...), mode)
	if err != nil {
		t.Fatalf("Decide(%v): %v", argv, err)
	}
	return d
}

func TestZeroDecisionIsDeny(t *testing.T) {
	var d Decision
	if d.Outcome != policy.Deny {
		t.Fatalf("zero Decision outcome = %s, want deny", d.Outcome)
	}
}

// TestSecurityGuardIsNeverOverridden: a guard hit stays deny under an
// allow rule for the program, at the full level, with grants.
func TestSecurityGuardIsNeverOverridden(t *testing.T) {
	f := newFixture(t, `level: full
defaults: {shell: allow}
rules:
  - {name: allow rm, action: allow, priority: 1000, command: {argv_prefix: [rm]}}
  - {name: allow cat, action: allow, priority: 1000, command: {argv_prefix: [cat]}}
  - {name: allow dd, action: allow, priority: 1000, command: {argv_prefix: [dd]}}
`)
	st, err := f.g.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/**/x", f.home + "/**"} {
		if _, err := st.RecordGrant(context.Background(), policy.GrantKey{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: target}, approvals.GrantOptions{}, f.now); err != nil && !errors.Is(err, approvals.ErrTargetTooBroad) {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{
		{"rm", "-rf", "/"},
		{"rm", "-rf", f.home},
		{"cat", f.home + "/.ssh/id_rsa"},
		{"dd", "if=/dev/zero", "of=/dev/sda"},
		{"bash", "-c", "ls && rm -rf ~"},
		{"mnemos", "approvals", "approve", "x"},
	} {
		for _, mode := range []Mode{{}, {SpendTicket: true}} {
			d := f.decide(t, mode, argv...)
			if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
				t.Errorf("%v = %s blocked by %q (%s), want deny by guard", argv, d.Outcome, d.BlockedBy, d.Reason)
			}
		}
	}
}

// TestSecurityApprovalIsSpentOnce: an approval lets the identical request
// through exactly once, and only that request.
func TestSecurityApprovalIsSpentOnce(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt")
	if d.Outcome != policy.Ask || d.Approval == nil {
		t.Fatalf("first run: %s, approval %v", d.Outcome, d.Approval)
	}
	if _, err := f.g.Approve(ctx, d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another command, another directory, another identity: not covered.
	if o := f.decide(t, Mode{SpendTicket: true}, "touch", "other.txt").Outcome; o != policy.Ask {
		t.Fatalf("other command got %s", o)
	}
	r := f.req("touch", "notes.txt")
	r.Sender = "mallory"
	if d2, _ := f.g.Decide(ctx, r, Mode{SpendTicket: true}); d2.Outcome != policy.Ask {
		t.Fatalf("other sender got %s", d2.Outcome)
	}
	r = f.req("touch", "notes.txt")
	r.Cwd = f.home
	if d2, _ := f.g.Decide(ctx, r, Mode{SpendTicket: true}); d2.Outcome == policy.Allow {
		t.Fatalf("other directory got allow")
	}
	// policy check does not spend it.
	if o := f.decide(t, Mode{DryRun: true}, "touch", "notes.txt").Outcome; o != policy.Ask {
		t.Fatalf("check got %s", o)
	}
	// Eight racing reruns: exactly one is allowed.
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := f.g.Decide(ctx, f.req("touch", "notes.txt"), Mode{SpendTicket: true, DryRun: true})
			if err != nil {
				t.Error(err)
				return
			}
			if d.Outcome == policy.Allow {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 1 {
		t.Fatalf("%d reruns allowed, want exactly 1", allowed)
	}
	if o := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt").Outcome; o != policy.Ask {
		t.Fatalf("after the ticket was spent: %s", o)
	}
}

// TestSecurityOnlyRequesterResolves: another identity cannot approve or
// deny, and the request stays pending.
func TestSecurityOnlyRequesterResolves(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	d := f.decide(t, Mode{}, "touch", "x")
	tok := d.Approval.Token
	for _, by := range []approvals.Identity{{Channel: "cli", Sender: "mallory"}, {Channel: "telegram", Sender: "dev"}} {
		if _, err := f.g.Approve(ctx, tok, by, ApproveOptions{Remember: "permanent"}); !errors.Is(err, approvals.ErrNotRequester) {
			t.Errorf("approve by %v: %v", by, err)
		}
		if _, err := f.g.Deny(ctx, tok, by); !errors.Is(err, approvals.ErrNotRequester) {
			t.Errorf("deny by %v: %v", by, err)
		}
	}
	st, _ := f.g.Store(ctx)
	p, err := st.Get(ctx, tok)
	if err != nil || p.Status != approvals.StatusPending {
		t.Fatalf("after refused resolutions: %v %v", p.Status, err)
	}
	if n := f.audit.count("grant.recorded"); n != 0 {
		t.Fatalf("%d grants recorded by a stranger", n)
	}
}

// TestSecurityGatedCommandsCannotTouchMnemos: nothing the gated command
// line names may write mnemos's policy, state or audit log, or run its
// approving and policy-editing subcommands.
func TestSecurityGatedCommandsCannotTouchMnemos(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\n")
	p := f.g.cfg.Paths
	for _, argv := range [][]string{
		{"bash", "-c", "echo 'level: full' > " + p.PolicyFile},
		{"rm", "-f", p.DBFile},
		{"cp", "/dev/null", p.AuditFile},
		{"sqlite3", p.DBFile, "update pending set status='approved'"},
		{"sh", "-c", "sed -i d " + p.AuditFile},
		{"mnemos", "approvals", "approve", "abc"},
		{"mnemos", "grants", "revoke", "1"},
		{"mnemos", "init", "--force"},
		{"env", "mnemos", "approvals", "deny", "abc"},
		{"mnemos", "run", "--", "mnemos", "approvals", "approve", "abc"},
		// Where mnemos would look for a policy on a later run: the default
		// directories MNEMOS_HOME moved away from, and the system's.
		{"bash", "-c", "mkdir -p ~/.config/mnemos && echo 'level: full' > ~/.config/mnemos/policy.yaml"},
		{"rm", "-rf", f.home + "/.local/state/mnemos"},
		{"cp", "p.yaml", "/etc/mnemos/policy.yaml"},
	} {
		d := f.decide(t, Mode{SpendTicket: true}, argv...)
		if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
			t.Errorf("%v = %s by %q (%s), want deny by guard", argv, d.Outcome, d.BlockedBy, d.Reason)
		}
	}
	// Reading is fine.
	if d := f.decide(t, Mode{}, "cat", p.PolicyFile); d.Outcome == policy.Deny {
		t.Errorf("reading the policy was denied: %s", d.Reason)
	}
}

// TestRuleAndTableDecisionsOpenNoDatabase: a decision settled by rules and
// the table never touches the state database.
func TestRuleAndTableDecisionsOpenNoDatabase(t *testing.T) {
	f := newFixture(t, "")
	for _, argv := range [][]string{{"git", "status"}, {"ls", "-la"}, {"rm", "-rf", "/"}, {"git", "push", "--force"}, {"echo", "hi"}} {
		f.decide(t, Mode{SpendTicket: true}, argv...)
	}
	if f.g.store != nil {
		t.Fatal("the database was opened")
	}
	if _, err := os.Stat(f.g.cfg.Paths.DBFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database file exists: %v", err)
	}
	if n := f.audit.count("policy.decision"); n != 5 {
		t.Fatalf("%d policy.decision events, want 5", n)
	}
}

// TestAuditFailureIsDeny: when the decision cannot be recorded, nothing is
// allowed.
func TestAuditFailureIsDeny(t *testing.T) {
	f := newFixture(t, "")
	f.audit.fail = errors.New("disk full")
	d, err := f.g.Decide(context.Background(), f.req("git", "status"), Mode{})
	if err == nil || d.Outcome != policy.Deny {
		t.Fatalf("got %s, %v; want deny with an error", d.Outcome, err)
	}
	res, err := f.g.Run(context.Background(), f.req("true"), Stdio{}, RunOptions{})
	if err == nil || res.Ran {
		t.Fatalf("Run with a broken audit log ran=%v err=%v", res.Ran, err)
	}
}

func TestStrictestCommandWins(t *testing.T) {
	f := newFixture(t, "")
	cases := []struct {
		argv []string
		want policy.Outcome
	}{
		{[]string{"bash", "-c", "ls && git status"}, policy.Allow},
		{[]string{"bash", "-c", "ls && touch x"}, policy.Ask},
		{[]string{"bash", "-c", "touch x; git push --force"}, policy.Deny},
		{[]string{"bash", "-c", "cd /etc && cat shadow"}, policy.Deny},
		{[]string{"bash", "-c", "cd /tmp && cat notes"}, policy.Ask},
		{[]string{"bash", "-c", "$CMD"}, policy.Ask},
		{[]string{"bash", "-c", "echo ("}, policy.Deny},
		{[]string{}, policy.Deny},
	}
	for _, tc := range cases {
		d, _ := f.g.Decide(context.Background(), f.req(tc.argv...), Mode{DryRun: true})
		if d.Outcome != tc.want {
			t.Errorf("%q = %s (%s), want %s", strings.Join(tc.argv, " "), d.Outcome, d.Reason, tc.want)
		}
	}
}

func TestLevelCanOnlyBeLowered(t *testing.T) {
	f := newFixture(t, "level: supervised\n")
	full, ro := policy.Full, policy.ReadOnly
	r := f.req("touch", "x")
	r.Level = &full
	if d, _ := f.g.Decide(context.Background(), r, Mode{DryRun: true}); d.Outcome != policy.Ask || d.Level != "supervised" {
		t.Fatalf("--level full under a supervised policy: %s at %s", d.Outcome, d.Level)
	}
	r.Level = &ro
	if d, _ := f.g.Decide(context.Background(), r, Mode{DryRun: true}); d.Outcome != policy.Deny || d.Level != "readonly" {
		t.Fatalf("--level readonly: %s at %s", d.Outcome, d.Level)
	}
}

func TestRememberRefusesBroadPrefixes(t *testing.T) {
	for _, argv := range [][]string{{"bash"}, {"sh", "-c", "make"}, {"python3", "x.py"}, {"env", "make"}, {"sudo", "make"}, {"xargs", "rm"}, {"git"}, {"make", "$TARGET"}} {
		if _, err := SafePrefix(argv); err == nil {
			t.Errorf("SafePrefix(%v) accepted", argv)
		}
	}
	if p, err := SafePrefix([]string{"make", "test"}); err != nil || strings.Join(p, " ") != "make test" {
		t.Fatalf("SafePrefix(make test) = %v, %v", p, err)
	}
}

// TestRunWaitsForApproval: run --wait parks the request, then runs the
// command once a person approves, spending the ticket.
func TestRunWaitsForApproval(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	type result struct {
		res RunResult
		err error
	}
	done := make(chan result, 1)
	parked := make(chan Decision, 1)
	go func() {
		res, err := f.g.Run(ctx, f.req("touch", "waited.txt"), Stdio{}, RunOptions{
			Wait: true, PollEvery: 5 * time.Millisecond,
			OnPending: func(d Decision) { parked <- d },
		})
		done <- result{res, err}
	}()
	var d Decision
	select {
	case d = <-parked:
	case r := <-done:
		t.Fatalf("Run returned before parking: %+v %v", r.res.Decision, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the request was never parked")
	}
	// A second gate (another process) approves.
	other := New(f.g.cfg)
	defer other.Close()
	if _, err := other.Approve(ctx, d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not notice the approval")
	}
	if r.err != nil || !r.res.Ran || r.res.ExitCode != 0 {
		t.Fatalf("after approval: ran=%v code=%d err=%v (%s)", r.res.Ran, r.res.ExitCode, r.err, r.res.Decision.Reason)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "waited.txt")); err != nil {
		t.Fatal(err)
	}
	if f.audit.count("run.finished") != 1 {
		t.Fatal("run.finished was not recorded")
	}
}

// TestRunWaitEndsOnRejection: a rejected request does not run.
func TestRunWaitEndsOnRejection(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	done := make(chan RunResult, 1)
	parked := make(chan Decision, 1)
	go func() {
		res, _ := f.g.Run(ctx, f.req("touch", "never.txt"), Stdio{}, RunOptions{
			Wait: true, PollEvery: 5 * time.Millisecond,
			OnPending: func(d Decision) { parked <- d },
		})
		done <- res
	}()
	d := <-parked
	other := New(f.g.cfg)
	defer other.Close()
	if _, err := other.Deny(ctx, d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Ran || res.Decision.Outcome != policy.Deny || !strings.Contains(res.Decision.Reason, "rejected") {
		t.Fatalf("ran=%v outcome=%s reason=%q", res.Ran, res.Decision.Outcome, res.Decision.Reason)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "never.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the rejected command ran")
	}
}

// TestApprovalExpires: after its TTL a request cannot be approved, its
// expired status persists, and the sweep records approval.expired.
func TestApprovalExpires(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	d := f.decide(t, Mode{}, "touch", "late.txt")
	tok := d.Approval.Token
	if !d.Approval.ExpiresAt.Equal(f.now.Add(policy.DefaultApprovalTTL)) {
		t.Fatalf("expires at %v, want now+600s", d.Approval.ExpiresAt)
	}
	f.now = f.now.Add(policy.DefaultApprovalTTL + time.Second)
	if _, err := f.g.Approve(ctx, tok, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); !errors.Is(err, approvals.ErrExpired) {
		t.Fatalf("approving a stale request: %v", err)
	}
	st, _ := f.g.Store(ctx)
	if p, err := st.Get(ctx, tok); err != nil || p.Status != approvals.StatusExpired {
		t.Fatalf("status after the refused approval: %v %v", p.Status, err)
	}
	if f.audit.count("approval.expired") != 1 {
		t.Fatalf("approval.expired recorded %d times", f.audit.count("approval.expired"))
	}
	// A fresh pending request is parked by the next run, and the sweep
	// marks it once its time is up.
	d2 := f.decide(t, Mode{SpendTicket: true}, "touch", "late.txt")
	if d2.Approval == nil || d2.Approval.Token == tok {
		t.Fatalf("the rerun did not park a new request: %+v", d2.Approval)
	}
	f.now = f.now.Add(policy.DefaultApprovalTTL + time.Second)
	if n, err := f.g.ExpireSweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	if f.audit.count("approval.expired") != 2 {
		t.Fatalf("approval.expired recorded %d times, want 2", f.audit.count("approval.expired"))
	}
}

// writeGrant records, for the fixture's requester, a grant to write the
// workspace file name with maxUses uses, and returns the store it is in.
func (f *fixture) writeGrant(t *testing.T, name string, maxUses int) (approvals.Backend, policy.Grant) {
	t.Helper()
	st, err := f.g.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(f.ws, name)
	g, err := st.RecordGrant(context.Background(), policy.GrantKey{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: target}, approvals.GrantOptions{MaxUses: maxUses}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	return st, g
}

// TestGrantsSpendAndPrune: a grant's max_uses is spent run by run, and a
// grant unused for the prune window is revoked as stale.
func TestGrantsSpendAndPrune(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	st, g := f.writeGrant(t, "n.txt", 2)
	for i, want := range []policy.Outcome{policy.Allow, policy.Allow, policy.Ask} {
		if d := f.decide(t, Mode{SpendTicket: true}, "touch", "n.txt"); d.Outcome != want {
			t.Fatalf("run %d: %s (%s), want %s", i+1, d.Outcome, d.Reason, want)
		}
	}
	// policy check does not spend uses.
	g2, err := st.RecordGrant(ctx, policy.GrantKey{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: filepath.Join(f.ws, "m.txt")}, approvals.GrantOptions{MaxUses: 1}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f.decide(t, Mode{}, "touch", "m.txt")
	}
	if d := f.decide(t, Mode{SpendTicket: true}, "touch", "m.txt"); d.Outcome != policy.Allow {
		t.Fatalf("the one use was spent by policy check: %s", d.Reason)
	}
	f.now = f.now.Add(91 * 24 * time.Hour)
	gone, err := f.g.PruneGrants(ctx, 90*24*time.Hour, approvals.Identity{Channel: "cli", Sender: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	// g and g2 are used up, so only active grants are pruned: none here.
	if len(gone) != 0 {
		t.Fatalf("pruned %v; used-up grants are not active", gone)
	}
	g3, err := st.RecordGrant(ctx, policy.GrantKey{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: filepath.Join(f.ws, "o.txt")}, approvals.GrantOptions{}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(91 * 24 * time.Hour)
	gone, err = f.g.PruneGrants(ctx, 90*24*time.Hour, approvals.Identity{Channel: "cli", Sender: "dev"})
	if err != nil || len(gone) != 1 || gone[0].ID != g3.ID {
		t.Fatalf("prune: %v %v, want grant %d", gone, err, g3.ID)
	}
	if d := f.decide(t, Mode{SpendTicket: true}, "touch", "o.txt"); d.Outcome != policy.Ask {
		t.Fatalf("a stale grant still covers: %s", d.Reason)
	}
	_ = g
	_ = g2
}
