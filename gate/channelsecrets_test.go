package gate

import (
	"context"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityChannelCredentialsAreNeverRead: the files that hold a
// channel's credentials (an email channel's SMTP password, a bot's token,
// a webhook's signing key) are denied by the guard to every command that
// names them, sandboxed or not, at every level and whatever the rules say,
// wherever the policy keeps them: whoever reads one sends mail, speaks as
// the bot or signs webhooks as mnemos.
func TestSecurityChannelCredentialsAreNeverRead(t *testing.T) {
	f := newFixture(t, `level: full
defaults: {shell: allow}
allow:
  - {name: cat, command: {argv_prefix: [cat]}}
channels:
  - name: mail
    email: {smtp: "smtp.example.com:587", from: me@example.com, to: me@example.com, password_file: /srv/creds/smtp.password}
  - name: phone
    telegram: {token_file: /srv/creds/bot.token, chat_id: 1}
  - name: hook
    webhook: https://hooks.example.com/mnemos
    secret_file: /srv/creds/hook.secret
`)
	for _, tc := range []struct {
		cmd  string
		want policy.Outcome
	}{
		{"cat /srv/creds/smtp.password", policy.Deny},
		{"cat /srv/creds/bot.token", policy.Deny},
		{"base64 /srv/creds/hook.secret", policy.Deny},
		{"cat /srv/creds/smtp.pass*", policy.Deny},
		{"cat /srv/creds/notes.txt", policy.Allow},
	} {
		for _, unsandboxed := range []bool{true, false} {
			req := f.req("bash", "-c", tc.cmd)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == policy.Deny && (d.Outcome != policy.Deny || d.BlockedBy != "guard") ||
				tc.want == policy.Allow && d.Outcome == policy.Deny && d.BlockedBy == "guard" {
				t.Errorf("%s (unsandboxed %v) = %s by %s (%s), want %s", tc.cmd, unsandboxed, d.Outcome, d.BlockedBy, d.Reason, tc.want)
			}
		}
	}
}
