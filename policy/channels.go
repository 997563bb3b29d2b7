package policy

import (
	"fmt"
	"net/mail"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Channel timeouts: a delivery that takes longer is given up.
const (
	DefaultChannelTimeout = 5 * time.Second
	MaxChannelTimeout     = 60 * time.Second
)

// Channel is one entry of the channels: section: a notifier the card of
// every new pending approval is delivered to.
//
//	channels:
//	  - name: desk                      # unique in the file
//	    command: [notify-send, mnemos]  # argv; the card as JSON on stdin
//	  - name: phone
//	    webhook: https://ntfy.example.com/mnemos   # POST the card as JSON
//	    secret_file: /home/me/.config/mnemos/hook.secret  # sign each POST
//	    timeout: 5s                     # default 5s, at most 60s
//	  - name: pocket
//	    telegram: {token_file: /home/me/.config/mnemos/bot.token, chat_id: 123456789}
//	  - name: mail
//	    email: {smtp: smtp.example.com:587, from: mnemos@example.com, to: me@example.com,
//	            password_file: /home/me/.config/mnemos/smtp.password, starttls: true}
//
// A channel has exactly one of command, webhook, telegram and email. A command's
// program is a bare name, looked up in a fixed system PATH, or an absolute
// path; never a relative path, which would resolve against the workspace.
// A webhook is an http or https URL; with secret_file each POST carries a
// Mnemos-Signature header (HMAC-SHA256 of TIMESTAMP.BODY under the file's
// content). A telegram channel is a bot that mnemos serve runs: the bot
// token comes from token_file or from the environment variable token_env,
// never from the policy itself. An email channel is sent by mnemos serve
// too: the card as a short plain-text message with links to its approvals
// page; the SMTP password comes from password_file, never from the policy.
//
// Only the system and user layers may define channels: a project policy is
// written by whoever controls the repository, and a channel of its own
// would send the commands run there to an address of its choosing. Merge
// ignores a project's channels and reports them as a warning.
type Channel struct {
	Name    string   `json:"name"`
	Command []string `json:"command,omitempty"`
	Webhook string   `json:"webhook,omitempty"`
	// SecretFile holds the key a webhook's POSTs are signed with.
	SecretFile string        `json:"secret_file,omitempty"`
	Telegram   *Telegram     `json:"telegram,omitempty"`
	Email      *Email        `json:"email,omitempty"`
	Timeout    time.Duration `json:"timeout"`
	Layer      Layer         `json:"layer,omitempty"`
	Pos        Pos           `json:"pos"`
}

// Telegram is a channel's Telegram bot (seed 002, chapter 7).
type Telegram struct {
	// TokenFile or TokenEnv gives the bot token: a file (absolute path)
	// or an environment variable of mnemos serve.
	TokenFile string `json:"token_file,omitempty"`
	TokenEnv  string `json:"token_env,omitempty"`
	// ChatID is the chat the cards go to; updates from any other chat are
	// ignored.
	ChatID int64 `json:"chat_id"`
	// APIURL is the Bot API's base URL (DefaultTelegramAPI when empty).
	APIURL string `json:"api_url,omitempty"`
}

// DefaultTelegramAPI is the Bot API's base URL.
const DefaultTelegramAPI = "https://api.telegram.org"

// Email is a channel's mail account: mnemos serve sends each card from it
// through an SMTP server.
type Email struct {
	// SMTP is the server's HOST:PORT (587 for submission with STARTTLS).
	SMTP string `json:"smtp"`
	// From and To are the sender's and the recipient's addresses (an
	// address, or a name and an address: "mnemos <me@example.com>").
	From string `json:"from"`
	To   string `json:"to"`
	// Username is the SMTP login; From's address when empty.
	Username string `json:"username,omitempty"`
	// PasswordFile holds the SMTP password (absolute path); without it
	// mnemos does not log in (a relay that needs no login).
	PasswordFile string `json:"password_file,omitempty"`
	// StartTLS upgrades the connection before anything is sent, and a
	// server that does not offer it is a failure, never a fall-back to
	// plain text. It defaults to true; false is for a relay on this
	// machine (a password is then sent only to a loopback address).
	StartTLS bool `json:"starttls"`
}

// Kind is "command", "webhook", "telegram" or "email".
func (c Channel) Kind() string {
	switch {
	case c.Telegram != nil:
		return "telegram"
	case c.Email != nil:
		return "email"
	case c.Webhook != "":
		return "webhook"
	}
	return "command"
}

// Direct reports whether the process that parks a request delivers its
// card to this channel (a command or a webhook). A telegram channel's bot
// and an email channel's mail are mnemos serve's: the mail's links lead to
// serve's page, and the password stays in serve's process.
func (c Channel) Direct() bool { return c.Telegram == nil && c.Email == nil }

var channelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// channels decodes the channels: section; a bad entry is reported and
// skipped, so one lint shows the errors of every entry.
func (d *decoder) channels(n *yaml.Node) []Channel {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errs = append(d.errs, d.errAt(n, "channels must be a list of {name, command, webhook, telegram or email, timeout}"))
		return nil
	}
	var out []Channel
	first := map[string]int{}
	for _, item := range n.Content {
		c, nameAt, err := d.channel(item)
		if err != nil {
			d.errs = append(d.errs, err)
			continue
		}
		if line, dup := first[c.Name]; dup {
			d.errs = append(d.errs, d.errAt(nameAt, fmt.Sprintf("duplicate channel name %q (first at line %d)", c.Name, line)))
			continue
		}
		first[c.Name] = item.Line
		out = append(out, c)
	}
	return out
}

// channel decodes one entry of a channels: list, and returns where its
// name was written.
func (d *decoder) channel(n *yaml.Node) (Channel, *yaml.Node, *Error) {
	c := Channel{Timeout: DefaultChannelTimeout, Pos: d.pos(n)}
	if n.Kind != yaml.MappingNode {
		return c, nil, d.errAt(n, "expected a channel (a mapping with name and command, webhook, telegram or email)")
	}
	var nameAt, cmdAt, secretAt *yaml.Node
	kinds := 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			s, err := d.strict(v)
			if err != nil {
				return c, nil, err
			}
			if !channelName().MatchString(s) {
				return c, nil, d.errAt(v, fmt.Sprintf("channel name %q must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", s))
			}
			c.Name, nameAt = s, v
		case "command":
			argv, err := d.channelCommand(v)
			if err != nil {
				return c, nil, err
			}
			c.Command, cmdAt = argv, k
			kinds++
		case "webhook":
			s, err := d.strict(v)
			if err != nil {
				return c, nil, err
			}
			if msg := checkWebhook(s); msg != "" {
				return c, nil, d.errAt(v, msg)
			}
			c.Webhook = s
			kinds++
			if cmdAt == nil {
				cmdAt = k
			}
		case "secret_file":
			s, err := d.strict(v)
			if err != nil {
				return c, nil, err
			}
			if !filepath.IsAbs(s) {
				return c, nil, d.errAt(v, fmt.Sprintf("channel secret_file %q must be an absolute path", s))
			}
			c.SecretFile, secretAt = s, k
		case "telegram":
			tg, err := d.telegram(v)
			if err != nil {
				return c, nil, err
			}
			c.Telegram = tg
			kinds++
			if cmdAt == nil {
				cmdAt = k
			}
		case "email":
			em, err := d.email(v)
			if err != nil {
				return c, nil, err
			}
			c.Email = em
			kinds++
			if cmdAt == nil {
				cmdAt = k
			}
		case "timeout":
			s, err := d.str(v)
			if err != nil {
				return c, nil, err
			}
			dur, perr := parseDuration(s)
			if perr != nil || dur <= 0 || dur > MaxChannelTimeout {
				return c, nil, d.errAt(v, fmt.Sprintf("channel timeout %q must be a duration above 0 and at most %ds (e.g. 5s, 500ms)", s, int(MaxChannelTimeout.Seconds())))
			}
			c.Timeout = dur
		default:
			return c, nil, d.errAt(k, fmt.Sprintf("unknown key %q in channel (want name, command, webhook, secret_file, telegram, email or timeout)", k.Value))
		}
	}
	switch {
	case nameAt == nil:
		return c, nil, d.errAt(n, "channel without a name: give it name: (unique in the file)")
	case kinds == 0:
		return c, nil, d.errAt(n, fmt.Sprintf("channel %q needs command: (an argv list), webhook: (a URL), telegram: (a bot) or email: (a mail account)", c.Name))
	case kinds > 1:
		return c, nil, d.errAt(cmdAt, fmt.Sprintf("channel %q has more than one of command, webhook, telegram and email; give it one (write a channel for each)", c.Name))
	case secretAt != nil && c.Webhook == "":
		return c, nil, d.errAt(secretAt, fmt.Sprintf("channel %q: secret_file signs a webhook's POSTs; this channel has no webhook", c.Name))
	}
	return c, nameAt, nil
}

// telegram reads a channel's telegram: mapping.
func (d *decoder) telegram(n *yaml.Node) (*Telegram, *Error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errAt(n, "telegram must be a mapping: {token_file: PATH or token_env: VAR, chat_id: N}")
	}
	tg := &Telegram{}
	chat := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "token_file":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if !filepath.IsAbs(s) {
				return nil, d.errAt(v, fmt.Sprintf("telegram token_file %q must be an absolute path", s))
			}
			tg.TokenFile = s
		case "token_env":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if !envName().MatchString(s) {
				return nil, d.errAt(v, fmt.Sprintf("telegram token_env %q is not an environment variable's name", s))
			}
			tg.TokenEnv = s
		case "chat_id":
			s, err := d.str(v)
			if err != nil {
				return nil, err
			}
			id, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil || id == 0 || !isDecimalInt(s) {
				return nil, d.errAt(v, fmt.Sprintf("telegram chat_id %q must be a chat's number (negative for a group)", s))
			}
			tg.ChatID, chat = id, true
		case "api_url":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if why := httpURLProblem(s); why != "" {
				return nil, d.errAt(v, fmt.Sprintf("telegram api_url %q %s", s, why))
			}
			tg.APIURL = strings.TrimSuffix(s, "/")
		default:
			return nil, d.errAt(k, fmt.Sprintf("unknown key %q in telegram (want token_file or token_env, chat_id, api_url)", k.Value))
		}
	}
	switch {
	case tg.TokenFile == "" && tg.TokenEnv == "":
		return nil, d.errAt(n, "telegram needs the bot token from token_file: (a file) or token_env: (a variable); never write the token itself in a policy")
	case tg.TokenFile != "" && tg.TokenEnv != "":
		return nil, d.errAt(n, "telegram has both token_file and token_env; give it one")
	case !chat:
		return nil, d.errAt(n, "telegram needs chat_id: the chat the cards go to")
	}
	return tg, nil
}

// email reads a channel's email: mapping.
func (d *decoder) email(n *yaml.Node) (*Email, *Error) {
	const shape = "email must be a mapping: {smtp: HOST:PORT, from: ADDRESS, to: ADDRESS, password_file: PATH, starttls: true}"
	if n.Kind != yaml.MappingNode {
		return nil, d.errAt(n, shape)
	}
	em := &Email{StartTLS: true}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "smtp":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if why := hostPortProblem(s); why != "" {
				return nil, d.errAt(v, fmt.Sprintf("email smtp %q %s", s, why))
			}
			em.SMTP = s
		case "from", "to":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if why := mailAddressProblem(s); why != "" {
				return nil, d.errAt(v, fmt.Sprintf("email %s %q %s", k.Value, s, why))
			}
			if k.Value == "from" {
				em.From = s
			} else {
				em.To = s
			}
		case "username":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if s == "" || strings.ContainsAny(s, "\r\n\x00") {
				return nil, d.errAt(v, fmt.Sprintf("email username %q must be one line of text", s))
			}
			em.Username = s
		case "password_file":
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			if !filepath.IsAbs(s) {
				return nil, d.errAt(v, fmt.Sprintf("email password_file %q must be an absolute path", s))
			}
			em.PasswordFile = s
		case "starttls":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				return nil, d.errAt(v, fmt.Sprintf("email starttls %q must be true or false", v.Value))
			}
			b, err := strconv.ParseBool(strings.ToLower(v.Value))
			if err != nil {
				return nil, d.errAt(v, fmt.Sprintf("email starttls %q must be true or false", v.Value))
			}
			em.StartTLS = b
		case "password":
			return nil, d.errAt(k, "email password: never write the password in a policy; put it in a file only you can read and name it in password_file")
		default:
			return nil, d.errAt(k, fmt.Sprintf("unknown key %q in email (want smtp, from, to, username, password_file, starttls)", k.Value))
		}
	}
	switch {
	case em.SMTP == "":
		return nil, d.errAt(n, "email needs smtp: the server's HOST:PORT (e.g. smtp.example.com:587)")
	case em.From == "":
		return nil, d.errAt(n, "email needs from: the address the cards are sent from")
	case em.To == "":
		return nil, d.errAt(n, "email needs to: the address the cards go to")
	case em.Username != "" && em.PasswordFile == "":
		return nil, d.errAt(n, "email has a username but no password_file: give the password in a file (never in the policy)")
	}
	return em, nil
}

// hostPortProblem returns why s is not HOST:PORT ("must be HOST:PORT",
// "has a bad port"), or "". A host that is an IPv6 address is written in
// brackets ([::1]:25).
func hostPortProblem(s string) string {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "must be HOST:PORT, e.g. smtp.example.com:587"
	}
	host, port := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") || (!strings.HasPrefix(host, "[") && strings.Contains(host, ":")) {
		return "must be HOST:PORT (an IPv6 address in brackets: [::1]:25)"
	}
	if strings.Trim(host, "[]") == "" || strings.ContainsAny(host, " /@\t\r\n") {
		return "must be HOST:PORT, e.g. smtp.example.com:587"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || !isDecimalInt(port) {
		return "has a bad port (1 to 65535)"
	}
	return ""
}

// mailAddressProblem returns why s is not one mail address (with or
// without a name), or "".
func mailAddressProblem(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return "must be one line"
	}
	a, err := mail.ParseAddress(s)
	if err != nil || !strings.Contains(a.Address, "@") {
		return "is not a mail address (me@example.com, or \"Name <me@example.com>\")"
	}
	return ""
}

// channelCommand reads a channel's argv: a non-empty list of strings whose
// program is a bare name or an absolute path.
func (d *decoder) channelCommand(n *yaml.Node) ([]string, *Error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, d.errAt(n, "channel command must be a non-empty list of words, e.g. [notify-send, mnemos]")
	}
	argv := make([]string, 0, len(n.Content))
	for _, e := range n.Content {
		s, err := d.strict(e)
		if err != nil {
			return nil, err
		}
		argv = append(argv, s)
	}
	prog := argv[0]
	switch {
	case prog == "":
		return nil, d.errAt(n.Content[0], "channel command's program is empty")
	case strings.ContainsRune(prog, '/') && !strings.HasPrefix(prog, "/"):
		return nil, d.errAt(n.Content[0], fmt.Sprintf("channel command's program %q is a relative path, which would resolve against the workspace; write a bare name or an absolute path", prog))
	case strings.HasPrefix(prog, "~"):
		return nil, d.errAt(n.Content[0], fmt.Sprintf("channel command's program %q starts with ~; write an absolute path", prog))
	}
	return argv, nil
}

// checkWebhook returns why s is not a usable webhook URL, or "".
func checkWebhook(s string) string {
	if why := httpURLProblem(s); why != "" {
		return fmt.Sprintf("channel webhook %q %s", s, why)
	}
	return ""
}

// httpURLProblem returns why s is not an http or https URL with a host
// ("is not a URL", "must be an http or https URL", "has no host"), or "".
func httpURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Host == "":
		return "has no host"
	}
	return ""
}

// stackChannels are the channels of a stack: those of the system layer,
// then those of the user layer whose names the system's do not take. A
// project layer's are never used.
func stackChannels(layers []*Policy) []Channel {
	var out []Channel
	taken := map[string]bool{}
	for _, l := range layers {
		if l.Layer == LayerProject {
			continue
		}
		for _, c := range l.Channels {
			if taken[c.Name] {
				continue
			}
			taken[c.Name] = true
			c.Layer = l.Layer
			out = append(out, c)
		}
	}
	return out
}

// projectChannels reports a project policy's channels, which are ignored.
func projectChannels(project *Policy) []Diagnostic {
	var out []Diagnostic
	for _, c := range project.Channels {
		out = append(out, Diagnostic{Pos: c.Pos, Severity: SeverityWarning,
			Msg: fmt.Sprintf("channel %q is ignored: a project policy cannot add a channel (it would send the commands run here to a place of the repository's choosing); define channels in your user policy", c.Name)})
	}
	return out
}

// channelsNode writes a channels: section in canonical form (Format).
func channelsNode(cs []Channel) *yaml.Node {
	str := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, c := range cs {
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{plain("name"), str(c.Name)}}
		switch {
		case c.Telegram != nil:
			tg := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
			if c.Telegram.TokenFile != "" {
				tg.Content = append(tg.Content, plain("token_file"), str(c.Telegram.TokenFile))
			} else {
				tg.Content = append(tg.Content, plain("token_env"), str(c.Telegram.TokenEnv))
			}
			tg.Content = append(tg.Content, plain("chat_id"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(c.Telegram.ChatID, 10)})
			if c.Telegram.APIURL != "" {
				tg.Content = append(tg.Content, plain("api_url"), str(c.Telegram.APIURL))
			}
			n.Content = append(n.Content, plain("telegram"), tg)
		case c.Email != nil:
			em := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
			em.Content = append(em.Content, plain("smtp"), str(c.Email.SMTP), plain("from"), str(c.Email.From), plain("to"), str(c.Email.To))
			if c.Email.Username != "" {
				em.Content = append(em.Content, plain("username"), str(c.Email.Username))
			}
			if c.Email.PasswordFile != "" {
				em.Content = append(em.Content, plain("password_file"), str(c.Email.PasswordFile))
			}
			em.Content = append(em.Content, plain("starttls"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(c.Email.StartTLS)})
			n.Content = append(n.Content, plain("email"), em)
		case c.Webhook != "":
			n.Content = append(n.Content, plain("webhook"), str(c.Webhook))
			if c.SecretFile != "" {
				n.Content = append(n.Content, plain("secret_file"), str(c.SecretFile))
			}
		default:
			argv := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, w := range c.Command {
				argv.Content = append(argv.Content, str(w))
			}
			n.Content = append(n.Content, plain("command"), argv)
		}
		n.Content = append(n.Content, plain("timeout"), plain(formatDuration(c.Timeout)))
		list.Content = append(list.Content, n)
	}
	return list
}
