package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// sessionRules consults, for one request, the rules a person remembered
// for its session (approvals.SessionRule): read from the state database
// the first time a command would ask for code:exec or mail:send, and
// turned into a policy of allow rules that the command is evaluated
// against, as if they stood last in the policy file. They apply only to
// what the table (or defaults.shell) would ask about: never over a rule
// of the policy that matched, nor over the table's denied, a floor or
// the guard, and --policy (Config.Extra) still makes the decision
// stricter.
type sessionRules struct {
	g                        *Gate
	channel, sender, session string
	now                      time.Time

	loaded bool
	pol    *policy.Policy
	// contained holds the "contained work" concessions (containedwork.go).
	contained *policy.Policy
}

// apply returns the result of the session rules for a command whose
// policy result is res, and whether one of them allows it.
func (s *sessionRules) apply(ctx context.Context, in policy.Input, cl *classify.Classification, res policy.Result, cd *CommandDecision, explain bool) (policy.Result, bool, error) {
	if res.Outcome != policy.Ask || res.Rule != nil || (res.DecidedBy != policy.ByTable && res.DecidedBy != policy.ByDefaults) ||
		!usesAlways(res.Accesses) && !res.Contained {
		return res, false, nil
	}
	pol, err := s.policy(ctx)
	if err != nil {
		return res, false, err
	}
	if res.Contained && s.contained != nil {
		if alt, ok, err := s.applyPolicy(ctx, s.contained, in, cl, cd, explain); err != nil || ok {
			return alt, ok, err
		}
	}
	if pol == nil || !usesAlways(res.Accesses) {
		return res, false, nil
	}
	if alt, ok, err := s.applyPolicy(ctx, pol, in, cl, cd, explain); err != nil || ok {
		return alt, ok, err
	}
	return res, false, nil
}

// applyPolicy evaluates a command against a policy of session rules: its
// result and true when one of them allows it; a zero result and false
// when none does.
func (s *sessionRules) applyPolicy(ctx context.Context, pol *policy.Policy, in policy.Input, cl *classify.Classification, cd *CommandDecision, explain bool) (policy.Result, bool, error) {
	alt, err := evaluate(ctx, pol, in, cl, nil, cd, explain)
	if err != nil {
		return policy.Result{}, false, err
	}
	if alt.Outcome != policy.Allow || alt.Rule == nil {
		return policy.Result{}, false, nil
	}
	alt.Reason = "session " + alt.Reason
	return alt, true, nil
}

// policy loads the identity's active session rules once; nil when there
// are none. A SQLite file not created yet holds none: it is not created
// for the asking (a shared state is not a file here: it is asked).
func (s *sessionRules) policy(ctx context.Context) (*policy.Policy, error) {
	if s.loaded {
		return s.pol, nil
	}
	s.loaded = true
	if s.g.store == nil && !s.g.SharedState() {
		if _, err := os.Stat(s.g.cfg.Paths.DBFile); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	st, err := s.g.Store(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := st.ActiveSessionRules(ctx, s.channel, s.sender, s.session, s.now)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	rs, cs := splitContained(rs)
	if len(cs) > 0 {
		if s.contained, err = containedPolicy(cs); err != nil {
			return nil, err
		}
	}
	if len(rs) == 0 {
		return nil, nil
	}
	s.pol, err = sessionPolicy(rs)
	return s.pol, err
}

// sessionPolicy is a policy holding an allow rule for each session rule,
// in order, named after it.
func sessionPolicy(rs []approvals.SessionRule) (*policy.Policy, error) {
	rules := make([]policy.RememberedRule, len(rs))
	for i, r := range rs {
		words := strings.Join(r.ArgvPrefix, " ")
		if r.Exact {
			words += " (exactly)"
		}
		rules[i] = policy.RememberedRule{Name: fmt.Sprintf("%s: allow %s (approval %s, until %s)", r.Label(), words, r.Approval,
			r.ExpiresAt.Local().Format("15:04")), ArgvPrefix: r.ArgvPrefix, Pin: r.Pin, Exact: r.Exact}
	}
	const name = "session rules"
	src, err := policy.AddRememberedRules(name, []byte("rules:\n"), rules)
	if err != nil {
		return nil, err
	}
	return policy.Parse(name, src)
}

// RevokeSessionRule ends a session rule and records session_rule.revoked.
func (g *Gate) RevokeSessionRule(ctx context.Context, id int64, by approvals.Identity) (approvals.SessionRule, bool, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return approvals.SessionRule{}, false, err
	}
	sr, ok, err := st.RevokeSessionRule(ctx, id, g.cfg.Now())
	if err != nil || !ok {
		return sr, ok, err
	}
	return sr, true, g.cfg.Audit.Append(ctx, "session_rule.revoked",
		slog.String("id", sr.Label()), slog.Any("argv_prefix", sr.ArgvPrefix), slog.String("by", by.Channel+":"+by.Sender))
}
