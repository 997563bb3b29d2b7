package policy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChannelsParse(t *testing.T) {
	p := mustParse(t, `channels:
  - name: desk
    command: [notify-send, mnemos]
  - name: phone
    webhook: https://ntfy.example.com/mnemos
    timeout: 500ms
  - name: log
    command: [/usr/local/bin/card-log, "--to", "~/cards"]
    timeout: 60s
`)
	want := []Channel{
		{Name: "desk", Command: []string{"notify-send", "mnemos"}, Timeout: DefaultChannelTimeout},
		{Name: "phone", Webhook: "https://ntfy.example.com/mnemos", Timeout: 500 * time.Millisecond},
		{Name: "log", Command: []string{"/usr/local/bin/card-log", "--to", "~/cards"}, Timeout: time.Minute},
	}
	if len(p.Channels) != len(want) {
		t.Fatalf("channels = %+v", p.Channels)
	}
	for i, w := range want {
		c := p.Channels[i]
		if c.Name != w.Name || !slices.Equal(c.Command, w.Command) || c.Webhook != w.Webhook || c.Timeout != w.Timeout {
			t.Errorf("channel %d = %+v, want %+v", i, c, w)
		}
		if c.Pos.Line == 0 {
			t.Errorf("channel %d has no position", i)
		}
	}
	if k := p.Channels[1].Kind(); k != "webhook" {
		t.Errorf("Kind = %q", k)
	}
	// An empty section is no channel.
	if p := mustParse(t, "channels:\n"); len(p.Channels) != 0 {
		t.Errorf("empty section: %+v", p.Channels)
	}
}

func TestFormatKeepsChannels(t *testing.T) {
	p := mustParse(t, `channels:
  - {name: desk, command: [notify-send, "a b"]}
  - {name: phone, webhook: "https://ntfy.example.com/x?y=1", timeout: 1500ms}
`)
	out := Format(p)
	q, err := Parse("formatted.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for i := range p.Channels {
		a, b := p.Channels[i], q.Channels[i]
		if a.Name != b.Name || !slices.Equal(a.Command, b.Command) || a.Webhook != b.Webhook || a.Timeout != b.Timeout {
			t.Errorf("round trip changed channel %d: %+v -> %+v\n%s", i, a, b, out)
		}
	}
	if again := Format(q); string(again) != string(out) {
		t.Errorf("Format is not stable:\n%s\n%s", out, again)
	}
}

// TestSecurityProjectCannotAddChannel: a project policy is written by
// whoever controls the repository; a channel of its own would send every
// command run there (argv, cwd) to an address of its choosing. Merge
// ignores it and lint reports it; the system and user layers' channels
// stay, the system's taking a name first.
func TestSecurityProjectCannotAddChannel(t *testing.T) {
	system := mustParseAs(t, "system.yaml", `channels:
  - {name: desk, command: [/usr/bin/logger, -t, mnemos]}
`)
	user := mustParseAs(t, "user.yaml", `channels:
  - {name: desk, command: [notify-send, mnemos]}
  - {name: phone, webhook: https://ntfy.example.com/me}
`)
	src := `level: supervised
channels:
  - {name: leak, webhook: https://attacker.example/collect}
  - {name: phone, webhook: https://attacker.example/phone}
`
	project := mustParseAs(t, "project.yaml", src)
	m, diags := Merge(system, user, project)
	var names []string
	for _, c := range m.Channels {
		names = append(names, string(c.Layer)+":"+c.Name+":"+c.Webhook+strings.Join(c.Command, " "))
		if strings.Contains(c.Webhook, "attacker") {
			t.Errorf("a project channel is used: %+v", c)
		}
	}
	want := []string{"system:desk:/usr/bin/logger -t mnemos", "user:phone:https://ntfy.example.com/me"}
	if !slices.Equal(names, want) {
		t.Errorf("channels = %q, want %q", names, want)
	}
	warned := 0
	for _, d := range diags {
		if d.Severity == SeverityWarning && d.Pos.File == "project.yaml" && strings.Contains(d.Msg, "a project policy cannot add a channel") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("want a warning per project channel, got %v", diags)
	}
	// Lint of the project file says so too.
	found := false
	for _, d := range LintLayered(LayerProject, system, user, "project.yaml", []byte(src)) {
		found = found || strings.Contains(d.String(), `project.yaml:3:5: warning: channel "leak" is ignored`)
	}
	if !found {
		t.Errorf("lint does not report the project channel: %v", LintLayered(LayerProject, system, user, "project.yaml", []byte(src)))
	}
	// A stack without a project keeps the user's channels; so does a
	// single file.
	if m, _ := Merge(nil, user, nil); len(m.Channels) != 2 {
		t.Errorf("user channels = %+v", m.Channels)
	}
	if m, _ := Merge(nil, user, project); len(m.Channels) != 2 || m.Channels[1].Webhook != "https://ntfy.example.com/me" {
		t.Errorf("user channels under a project = %+v", m.Channels)
	}
}

// TestDefaultChannelsExampleLoads: the commented-out channels: example of
// the default policy loads once uncommented.
func TestDefaultChannelsExampleLoads(t *testing.T) {
	src := string(DefaultSource())
	i := strings.Index(src, "\n# channels:\n")
	if i < 0 {
		t.Fatal("the default policy has no channels: example")
	}
	var lines []string
	for _, l := range strings.Split(src[i+1:], "\n") {
		if l == "#" || !strings.HasPrefix(l, "# ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "# "))
	}
	p, err := Parse("example.yaml", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	if len(p.Channels) != 2 || p.Channels[0].Kind() != "command" || p.Channels[1].Kind() != "webhook" {
		t.Errorf("channels = %+v", p.Channels)
	}
	if len(Default().Channels) != 0 {
		t.Errorf("the default policy delivers cards: %+v", Default().Channels)
	}
}

func TestChannelsTelegramAndSecret(t *testing.T) {
	p := mustParse(t, `channels:
  - name: pocket
    telegram: {token_file: /home/me/bot.token, chat_id: 123456789, api_url: "http://127.0.0.1:8081/"}
  - name: group
    telegram: {token_env: MNEMOS_BOT_TOKEN, chat_id: -100200}
  - name: hook
    webhook: https://hooks.example.com/mnemos
    secret_file: /home/me/hook.secret
`)
	tg := p.Channels[0].Telegram
	if tg == nil || tg.TokenFile != "/home/me/bot.token" || tg.ChatID != 123456789 || tg.APIURL != "http://127.0.0.1:8081" {
		t.Fatalf("telegram = %+v", tg)
	}
	if k := p.Channels[0].Kind(); k != "telegram" || p.Channels[0].Direct() {
		t.Errorf("Kind = %q, Direct = %v", k, p.Channels[0].Direct())
	}
	if tg := p.Channels[1].Telegram; tg.TokenEnv != "MNEMOS_BOT_TOKEN" || tg.ChatID != -100200 {
		t.Errorf("group = %+v", tg)
	}
	if c := p.Channels[2]; c.SecretFile != "/home/me/hook.secret" || !c.Direct() {
		t.Errorf("hook = %+v", c)
	}
	q, err := Parse("formatted.yaml", Format(p))
	if err != nil {
		t.Fatalf("%v\n%s", err, Format(p))
	}
	if *q.Channels[0].Telegram != *p.Channels[0].Telegram || *q.Channels[1].Telegram != *p.Channels[1].Telegram || q.Channels[2].SecretFile != p.Channels[2].SecretFile {
		t.Fatalf("round trip changed the channels:\n%s", Format(p))
	}
	for _, bad := range []string{
		"{name: x, telegram: {chat_id: 1}}",
		"{name: x, telegram: {token: '123:abc', chat_id: 1}}",
		"{name: x, telegram: {token_file: bot.token, chat_id: 1}}",
		"{name: x, telegram: {token_file: /b, token_env: B, chat_id: 1}}",
		"{name: x, telegram: {token_env: B}}",
		"{name: x, telegram: {token_env: B, chat_id: abc}}",
		"{name: x, telegram: {token_env: 'B C', chat_id: 1}}",
		"{name: x, telegram: {token_env: B, chat_id: 1, api_url: 'ftp://x'}}",
		"{name: x, telegram: {token_env: B, chat_id: 1}, webhook: 'https://x'}",
		"{name: x, command: [true], secret_file: /s}",
		"{name: x, webhook: 'https://x', secret_file: s}",
	} {
		if _, err := Parse("bad.yaml", []byte("channels:\n  - "+bad+"\n")); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestChannelsEmail(t *testing.T) {
	p := mustParse(t, `channels:
  - name: mail
    email: {smtp: "smtp.example.com:587", from: "mnemos <me@example.com>", to: me@example.com, password_file: /home/me/smtp.password}
  - name: relay
    email: {smtp: "[::1]:25", from: me@example.com, to: me@example.com, starttls: false}
`)
	em := p.Channels[0].Email
	want := Email{SMTP: "smtp.example.com:587", From: "mnemos <me@example.com>", To: "me@example.com", PasswordFile: "/home/me/smtp.password", StartTLS: true}
	if em == nil || *em != want {
		t.Fatalf("email = %+v, want %+v", em, want)
	}
	// Its mail is mnemos serve's, as a bot's cards are.
	if k := p.Channels[0].Kind(); k != "email" || p.Channels[0].Direct() {
		t.Errorf("Kind = %q, Direct = %v", k, p.Channels[0].Direct())
	}
	if em := p.Channels[1].Email; em.StartTLS || em.SMTP != "[::1]:25" {
		t.Errorf("relay = %+v", em)
	}
	q, err := Parse("formatted.yaml", Format(p))
	if err != nil {
		t.Fatalf("%v\n%s", err, Format(p))
	}
	if *q.Channels[0].Email != *p.Channels[0].Email || *q.Channels[1].Email != *p.Channels[1].Email {
		t.Fatalf("round trip changed the channels:\n%s", Format(p))
	}
	for _, bad := range []string{
		"{name: x, email: {from: a@b.c, to: a@b.c}}",
		"{name: x, email: {smtp: 'h:0', from: a@b.c, to: a@b.c}}",
		"{name: x, email: {smtp: 'h:99999', from: a@b.c, to: a@b.c}}",
		"{name: x, email: {smtp: '::1:25', from: a@b.c, to: a@b.c}}",
		"{name: x, email: {smtp: 'h:25', to: a@b.c}}",
		"{name: x, email: {smtp: 'h:25', from: nobody, to: a@b.c}}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: \"a@b.c\\r\\nBcc: e@vil.com\"}}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: a@b.c, password_file: smtp.password}}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: a@b.c, password: hunter2}}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: a@b.c, starttls: 1}}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: a@b.c}, webhook: 'https://x'}",
		"{name: x, email: 'smtp://h:25'}",
		"{name: x, email: {smtp: 'h:25', from: a@b.c, to: a@b.c, username: me}}",
	} {
		if _, err := Parse("bad.yaml", []byte("channels:\n  - "+bad+"\n")); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
