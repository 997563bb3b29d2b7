package classify

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// This file classifies the programs of the registry's service
// capabilities: model runners and clients (llm:local, llm:online),
// mailboxes (mail:read), calendars (calendar:read) and chat channels
// (channel:out, channel:in), and the requests curl and friends make to
// those services' hosts. Anything a program does beyond the service call
// (a configuration file that names commands, a subcommand that changes
// state, an agent that acts with its own tools) stays code:exec.

// operands are a program's non-option words, in order.
func operands(name string, spec toolSpec, args []shellparse.Word) []shellparse.Word {
	return pathArgsOf(name, spec, args, nil)
}

// classifyService adds the accesses of a program of the kinds llmlocal,
// llmonline, mailread, calendar and chat.
func (c *Classification) classifyService(cmd shellparse.Command, pl Place, name string, spec toolSpec) {
	args := cmd.Argv[1:]
	runs := func() {
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb, c.Reversibility = "run", "partial"
	}
	c.optionAccesses(cmd, pl, name, spec)
	ops := operands(name, spec, args)
	sub := ""
	if len(ops) > 0 && !ops[0].Dynamic {
		sub = ops[0].Value
	}
	switch spec.kind {
	case kindLLMLocal:
		c.Verb, c.Reversibility = "run a local model", "reversible"
		local := Access{Capability: LLMLocal}
		switch name {
		case "ollama":
			switch sub {
			case "run":
				c.Accesses = append(c.Accesses, local)
			case "pull":
				c.Accesses = append(c.Accesses, local, Access{Capability: NetworkHTTP, Target: "registry.ollama.ai"})
				c.Verb = "download a model"
			default:
				runs() // serve, create, rm, push, cp, stop, ...
			}
		case "lms":
			switch sub {
			case "chat", "ls", "ps", "status", "version":
				c.Accesses = append(c.Accesses, local)
			case "get":
				c.Accesses = append(c.Accesses, local, Access{Capability: NetworkHTTP, Dynamic: true})
				c.Verb = "download a model"
			default:
				runs() // load, unload, server, import, ...
			}
		case "llama-cli", "llamafile":
			c.Accesses = append(c.Accesses, local)
			if u, ok := optionValue(args, "-mu", "--model-url"); ok {
				c.Accesses = append(c.Accesses, netAccess(u))
			}
			if hasFlag(args, "-hf", "--hf-repo", "-hfr", "--hf-repo-draft") || hasOptionPrefix(args, "--hf-repo=") {
				c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: "huggingface.co"})
			}
			if hasFlag(args, "--server", "--www-root") {
				runs()
			}
		case "mlx_lm.generate":
			c.Accesses = append(c.Accesses, local)
			if hasSwitch(args, spec, "--trust-remote-code") {
				runs() // the model's repository ships code that runs
			}
		default:
			runs()
		}
	case kindLLMOnline:
		c.Verb, c.Reversibility = "call an online model", "reversible"
		online := func(host, model string) {
			a := Access{Capability: LLMOnline, Target: host, Model: model}
			if host == "" {
				a.Dynamic = true
			}
			c.Accesses = append(c.Accesses, a)
		}
		model := ""
		if m, ok := optionValue(args, "--model"); ok && !m.Dynamic {
			model = m.Value
		}
		switch name {
		case "claude", "codex", "gemini", "aider":
			// Agents: each acts on the machine with its own tools, set up
			// outside the command line.
			if name != "aider" {
				if m, ok := optionValue(args, "-m"); ok && !m.Dynamic && name != "claude" {
					model = m.Value
				}
			}
			host := map[string]string{"claude": "api.anthropic.com", "codex": "api.openai.com", "gemini": "generativelanguage.googleapis.com"}[name]
			if name == "aider" {
				host = providerOf(model)
			}
			online(host, model)
			runs()
			c.Verb = "run a model agent"
		case "llm":
			if m, ok := optionValue(args, "-m"); ok && !m.Dynamic {
				model = m.Value
			}
			sub = llmSubcommand(args, spec)
			switch {
			case sub == "prompt" || sub == "chat" || sub == "" || strings.ContainsAny(sub, " \t\n?.,!'\""):
				online(providerOf(model), model)
				if hasSwitch(args, spec, "-T", "--tool", "--functions", "--td", "--tools-debug", "--ta", "--tools-approve") ||
					hasOptionPrefix(args, "--tool=", "--functions=") {
					runs() // tools are code the model's answer calls
				}
			default:
				// keys, logs, install, cmd and any plugin's command.
				runs()
			}
		case "openai":
			// openai [-b BASE] api chat.completions.create -m MODEL ...
			if m, ok := optionValue(args, "-m"); ok && !m.Dynamic {
				model = m.Value
			}
			if len(ops) >= 2 && sub == "api" && (ops[1].Value == "chat.completions.create" || ops[1].Value == "completions.create") {
				host := "api.openai.com"
				if b, ok := optionValue(args, "-b", "--api-base"); ok {
					host = hostOfURL(b)
				}
				online(host, model)
			} else {
				runs()
			}
		default:
			runs()
		}
	case kindMailRead:
		c.Verb, c.Reversibility = "read mail", "reversible"
		account := ""
		if a, ok := optionValue(args, "-a", "--account"); ok && !a.Dynamic {
			account = a.Value
		}
		read := Access{Capability: MailRead, Target: account, Dynamic: account == ""}
		switch name {
		case "himalaya":
			verb := sub
			if len(ops) > 1 && (sub == "envelope" || sub == "message" || sub == "folder" || sub == "account" || sub == "template") {
				verb = sub + " " + ops[1].Value
			}
			switch verb {
			case "list", "read", "search", "envelope list", "envelope thread", "message read", "message thread", "folder list", "account list":
				c.Accesses = append(c.Accesses, read)
			case "send", "write", "reply", "forward", "message send", "message write", "message reply", "message forward", "template send":
				c.Accesses = append(c.Accesses, Access{Capability: MailSend, Dynamic: true})
				c.Verb, c.Reversibility = "send mail", "irreversible"
			default:
				runs() // delete, move, copy, flag, expunge, download, ...
			}
		case "fetchmail", "mbsync", "offlineimap":
			// They store what they fetch where their configuration says.
			// The first operand names the server (fetchmail) or the
			// channel or group (mbsync, offlineimap).
			if len(ops) > 0 && !ops[0].Dynamic {
				read.Target, read.Dynamic = ops[0].Value, false
			}
			c.Accesses = append(c.Accesses, read)
		default:
			runs()
		}
	case kindCalendar:
		c.Verb, c.Reversibility = "read a calendar", "reversible"
		cal := ""
		for _, o := range []string{"--calendar", "-a", "--include-calendar"} {
			if v, ok := optionValue(args, o); ok && !v.Dynamic && name != "calcurse" {
				cal = v.Value
				break
			}
		}
		read := Access{Capability: CalendarRead, Target: cal, Dynamic: cal == ""}
		switch name {
		case "gcalcli":
			switch sub {
			case "list", "search", "agenda", "updates", "conflicts", "calw", "calm":
				c.Accesses = append(c.Accesses, read)
			default:
				runs() // add, quick, edit, delete, import, remind (runs a command), init
			}
		case "khal":
			switch sub {
			case "list", "calendar", "at", "search", "printcalendars", "printformats", "printics":
				c.Accesses = append(c.Accesses, read)
			default:
				runs() // new, edit, import, interactive
			}
		case "calcurse":
			// Without a reading mode, calcurse is its interactive editor.
			reads := hasSwitch(args, spec, "-a", "--appointment", "-d", "--day", "-n", "--next", "-r", "--range",
				"-s", "--startday", "-t", "--todo", "-Q", "--query", "-G", "--grep", "--status", "-x", "--export")
			writes := hasSwitch(args, spec, "-i", "--import", "-P", "--purge", "-g", "--gc", "--daemon", "--dump-imported", "--list-imported")
			if reads && !writes && len(ops) == 0 {
				c.Accesses = append(c.Accesses, read)
			} else {
				runs()
			}
		default:
			runs()
		}
	case kindChat:
		c.Verb, c.Reversibility = "send a message", "irreversible"
		switch name {
		case "telegram-send":
			if hasSwitch(args, spec, "--configure", "--configure-channel", "--configure-group", "--showids") {
				runs()
				break
			}
			c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Target: "telegram"})
		case "slack-cli":
			if d, ok := optionValue(args, "-d", "--dst"); ok {
				c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Target: "slack:" + d.Value, Dynamic: d.Dynamic})
			}
			if s, ok := optionValue(args, "-s", "--src"); ok {
				c.Accesses = append(c.Accesses, Access{Capability: ChannelIn, Target: "slack:" + s.Value, Dynamic: s.Dynamic})
			}
			if !HasCap(c, ChannelOut) && !HasCap(c, ChannelIn) {
				c.Accesses = append(c.Accesses, Access{Capability: ChannelIn, Target: "slack"})
			}
		case "signal-cli":
			c.signalCLI(cmd, pl, ops, runs)
		default:
			runs()
		}
	}
}

// signalCLI classifies signal-cli [GLOBAL OPTIONS] SUBCOMMAND [OPTIONS]:
// send goes to its recipients, receive reads the account's messages, any
// other subcommand (register, link, updateProfile, ...) changes the
// account.
func (c *Classification) signalCLI(cmd shellparse.Command, pl Place, ops []shellparse.Word, runs func()) {
	if len(ops) == 0 || ops[0].Dynamic {
		runs()
		return
	}
	switch ops[0].Value {
	case "send":
	case "receive":
		c.Verb, c.Reversibility = "read messages", "reversible"
		c.Accesses = append(c.Accesses, Access{Capability: ChannelIn, Target: "signal"})
		return
	default:
		runs()
		return
	}
	// The words after send: -m TEXT, -a FILE..., -g GROUP, recipients.
	args := cmd.Argv[1:]
	at := slices.IndexFunc(args, func(w shellparse.Word) bool { return w.Value == "send" && !w.Dynamic })
	rest := args[at+1:]
	n := 0
	for i := 0; i < len(rest); i++ {
		v := rest[i].Value
		switch {
		case v == "-a" || v == "--attachment":
			for i+1 < len(rest) && !strings.HasPrefix(rest[i+1].Value, "-") {
				i++
				c.add(pl, FSRead, rest[i])
			}
		case v == "-g" || v == "--group-id":
			if i+1 < len(rest) {
				i++
				c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Target: "signal:group:" + rest[i].Value, Dynamic: rest[i].Dynamic})
				n++
			}
		case v == "-m" || v == "--message" || v == "--mention" || v == "--quote-timestamp" || v == "--quote-author" ||
			v == "--quote-message" || v == "--sticker" || v == "--text-style" || v == "--preview-url" ||
			v == "--preview-title" || v == "--preview-description" || v == "--edit-timestamp" || v == "-u" || v == "--username":
			i++
		case v == "--message-from-stdin" || v == "--note-to-self" || v == "-e" || v == "--end-session":
			if v == "--note-to-self" {
				c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Target: "signal:self"})
				n++
			}
		case strings.HasPrefix(v, "-"):
			// An option not read here may take a value: the recipients
			// are not known.
			c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Dynamic: true})
			n++
		default:
			c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Target: "signal:" + v, Dynamic: rest[i].Dynamic})
			n++
		}
	}
	if n == 0 {
		c.Accesses = append(c.Accesses, Access{Capability: ChannelOut, Dynamic: true})
	}
}

// llmSubcommand is llm's first operand, reading -o/--option and
// -p/--param as taking two values.
func llmSubcommand(args []shellparse.Word, spec toolSpec) string {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			if i+1 < len(args) {
				return args[i+1].Value
			}
			return ""
		case v == "-o" || v == "--option" || v == "-p" || v == "--param":
			i += 2
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if _, _, eq := strings.Cut(v, "="); !eq && spec.takes(v) {
				i++
			}
		default:
			if args[i].Dynamic {
				return " " // a prompt computed at run time
			}
			return v
		}
	}
	return ""
}

// netAccess is network:http to a URL's host.
func netAccess(w shellparse.Word) Access {
	if h := hostOfURL(w); h != "" {
		return Access{Capability: NetworkHTTP, Target: h}
	}
	return Access{Capability: NetworkHTTP, Dynamic: true}
}

func hostOfURL(w shellparse.Word) string {
	if w.Dynamic {
		return ""
	}
	if u, err := url.Parse(w.Value); err == nil {
		return u.Hostname()
	}
	return ""
}

// llmAPIHosts are the hosts of hosted models' APIs: a request to one is
// llm:online with the host as target.
var llmAPIHosts = []string{
	"api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com",
	"api.mistral.ai", "api.groq.com", "openrouter.ai", "api.together.xyz",
	"api.deepseek.com", "api.cohere.com", "api.cohere.ai", "api.x.ai",
	"api.perplexity.ai", "api.fireworks.ai",
}

// providerKeys are the variables each model provider's own clients and
// documentation keep its API key in: sent to that provider's host, and
// only there, such a key is the call's credential, not a leak.
func providerKeys(host string) []string {
	switch host {
	case "api.openai.com":
		return []string{"OPENAI_API_KEY"}
	case "api.anthropic.com":
		return []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
	case "generativelanguage.googleapis.com":
		return []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	case "api.mistral.ai":
		return []string{"MISTRAL_API_KEY"}
	case "api.groq.com":
		return []string{"GROQ_API_KEY"}
	case "openrouter.ai":
		return []string{"OPENROUTER_API_KEY"}
	case "api.together.xyz":
		return []string{"TOGETHER_API_KEY"}
	case "api.deepseek.com":
		return []string{"DEEPSEEK_API_KEY"}
	case "api.cohere.com", "api.cohere.ai":
		return []string{"COHERE_API_KEY", "CO_API_KEY"}
	case "api.x.ai":
		return []string{"XAI_API_KEY"}
	case "api.perplexity.ai":
		return []string{"PERPLEXITY_API_KEY", "PPLX_API_KEY"}
	case "api.fireworks.ai":
		return []string{"FIREWORKS_API_KEY"}
	}
	return nil
}

// ownKeys are the provider keys that go only to their own provider: every
// access of the command that leaves the machine is llm:online to hosts
// whose provider keeps its key in that variable. nil otherwise.
func (c *Classification) ownKeys() []string {
	var own []string
	first := true
	for _, a := range c.Accesses {
		switch a.Capability {
		case LLMOnline:
		case NetworkHTTP, MailRead, MailSend, ChannelIn, ChannelOut:
			return nil
		default:
			continue
		}
		if a.Dynamic {
			return nil
		}
		keys := providerKeys(a.Target)
		if first {
			own, first = keys, false
			continue
		}
		own = slices.DeleteFunc(slices.Clone(own), func(k string) bool { return !slices.Contains(keys, k) })
	}
	return own
}

// providerOf is the API host of a model name as clients spell it
// (claude-…, gpt-…, provider/model), or "" when it is not known.
func providerOf(model string) string {
	m := strings.ToLower(model)
	if p, rest, ok := strings.Cut(m, "/"); ok {
		switch p {
		case "anthropic":
			return "api.anthropic.com"
		case "openai":
			return "api.openai.com"
		case "gemini", "google":
			return "generativelanguage.googleapis.com"
		case "mistral":
			return "api.mistral.ai"
		case "groq":
			return "api.groq.com"
		case "openrouter":
			return "openrouter.ai"
		case "together_ai", "together":
			return "api.together.xyz"
		case "deepseek":
			return "api.deepseek.com"
		case "xai":
			return "api.x.ai"
		}
		m = rest
	}
	prefixes := []struct{ p, host string }{
		{"claude", "api.anthropic.com"}, {"sonnet", "api.anthropic.com"}, {"opus", "api.anthropic.com"}, {"haiku", "api.anthropic.com"},
		{"gpt-", "api.openai.com"}, {"chatgpt", "api.openai.com"}, {"o1", "api.openai.com"}, {"o3", "api.openai.com"}, {"o4", "api.openai.com"}, {"4o", "api.openai.com"},
		{"gemini", "generativelanguage.googleapis.com"},
		{"mistral", "api.mistral.ai"}, {"codestral", "api.mistral.ai"}, {"open-mistral", "api.mistral.ai"},
		{"deepseek", "api.deepseek.com"}, {"grok", "api.x.ai"},
	}
	for _, x := range prefixes {
		if strings.HasPrefix(m, x.p) {
			return x.host
		}
	}
	return ""
}

// serviceRequests turns curl's, wget's and other HTTP clients' accesses to
// service hosts into the service's capability: a model API is llm:online
// (with the model the JSON body or the URL names), a chat API's message
// endpoint channel:out, an IMAP or POP URL mail:read, an SMTP URL
// mail:send to its --mail-rcpt recipients.
func (c *Classification) serviceRequests(name string, spec toolSpec, args []shellparse.Word) {
	var urls []shellparse.Word
	for _, w := range pathArgsOf(name, spec, args, nil) {
		if !w.Dynamic && strings.Contains(w.Value, "://") {
			urls = append(urls, w)
		} else if !w.Dynamic && (name == "http" || name == "https" || name == "xh") && strings.Contains(w.Value, ".") && !strings.Contains(w.Value, "=") {
			urls = append(urls, shellparse.Word{Value: "https://" + w.Value})
		}
	}
	// A header whose only expansions are the provider's own key, when
	// every URL is that provider's, carries the call's credential: it
	// sends the request nowhere else.
	var own []string
	for i, w := range urls {
		u, err := url.Parse(w.Value)
		if err != nil {
			own = nil
			break
		}
		keys := providerKeys(u.Hostname())
		if i == 0 {
			own = keys
		} else {
			own = slices.DeleteFunc(slices.Clone(own), func(k string) bool { return !slices.Contains(keys, k) })
		}
	}
	if len(urls) == 0 || reroutes(name, args, own) {
		// A request sent somewhere else than its URL's host (a proxy,
		// --connect-to, --resolve) is plain network to wherever it goes:
		// the provider's capability would let a key go to that place.
		return
	}
	model := ""
	if name == "curl" {
		for _, d := range optionValues(args, spec, []string{"-d", "--data", "--data-raw", "--data-binary", "--json"}) {
			if m := jsonModel(d); m != "" {
				model = m
			}
		}
	} else {
		for _, w := range args {
			// httpie and xh: model=NAME or model:="NAME".
			if v, ok := strings.CutPrefix(w.Value, "model="); ok && !w.Dynamic {
				model = v
			}
		}
	}
	for _, w := range urls {
		u, err := url.Parse(w.Value)
		if err != nil {
			continue
		}
		host := u.Hostname()
		var repl *Access
		switch scheme := strings.ToLower(u.Scheme); {
		case scheme == "imap" || scheme == "imaps" || scheme == "pop3" || scheme == "pop3s":
			repl = &Access{Capability: MailRead, Target: host}
			c.Verb, c.Reversibility = "read mail", "reversible"
		case scheme == "smtp" || scheme == "smtps":
			rcpts := optionValues(args, spec, []string{"--mail-rcpt"})
			c.Verb, c.Reversibility = "send mail", "irreversible"
			for _, r := range rcpts {
				c.Accesses = append(c.Accesses, Access{Capability: MailSend, Target: r.Value, Dynamic: r.Dynamic})
			}
			repl = &Access{Capability: MailSend, Dynamic: true}
			if len(rcpts) > 0 {
				repl = nil
			}
		case slices.Contains(llmAPIHosts, host):
			m := model
			if host == "generativelanguage.googleapis.com" {
				// .../models/gemini-1.5-pro:generateContent
				if _, after, ok := strings.Cut(u.Path, "/models/"); ok {
					m, _, _ = strings.Cut(after, ":")
				}
			}
			repl = &Access{Capability: LLMOnline, Target: host, Model: m}
			c.Verb, c.Reversibility = "call an online model", "reversible"
		case host == "hooks.slack.com" || host == "slack.com" && strings.HasPrefix(u.Path, "/api/chat."):
			repl = &Access{Capability: ChannelOut, Target: host}
			c.Verb, c.Reversibility = "send a message", "irreversible"
		case (host == "discord.com" || host == "discordapp.com") && strings.HasPrefix(u.Path, "/api/webhooks/"):
			repl = &Access{Capability: ChannelOut, Target: host}
			c.Verb, c.Reversibility = "send a message", "irreversible"
		case host == "api.telegram.org" && strings.HasPrefix(u.Path, "/bot"):
			method := path2(u.Path)
			switch {
			case strings.HasPrefix(method, "send"):
				repl = &Access{Capability: ChannelOut, Target: host}
				c.Verb, c.Reversibility = "send a message", "irreversible"
			case method == "getUpdates":
				repl = &Access{Capability: ChannelIn, Target: host}
			}
		}
		if repl == nil {
			if strings.HasPrefix(strings.ToLower(u.Scheme), "smtp") {
				c.dropNet(host)
			}
			continue
		}
		c.dropNet(host)
		c.Accesses = append(c.Accesses, *repl)
	}
}

// reroutes reports an HTTP client told to connect elsewhere than the
// URL's host, or to read options from a file: curl's --connect-to,
// --resolve, --proxy and --preproxy, the SOCKS options, --doh-url and
// --config; wget's -e/--execute (which can set a proxy) and --config.
//
// A word not known before it runs may be any of these, except a header
// whose only expansions are variables of own ("Authorization: Bearer
// $OPENAI_API_KEY").
func reroutes(name string, args []shellparse.Word, own []string) bool {
	for i, w := range args {
		opt, _, _ := strings.Cut(w.Value, "=")
		switch {
		case w.Dynamic && len(own) > 0 && headerValue(name, args, i) && onlyRefsTo(w.Value, own):
			continue
		case w.Dynamic:
			return true
		case name == "curl" && (opt == "-x" || opt == "-K" || strings.HasPrefix(opt, "-x") && !strings.HasPrefix(opt, "--") ||
			slices.Contains([]string{"--connect-to", "--resolve", "--proxy", "--preproxy", "--socks4", "--socks4a",
				"--socks5", "--socks5-hostname", "--proxy1.0", "--doh-url", "--config"}, opt)):
			return true
		case name == "wget" && (opt == "-e" || opt == "--execute" || opt == "--config"):
			return true
		}
	}
	return false
}

// headerValue reports an argument that is the value of curl's -H or
// --header, or wget's --header, alone or in the option's word.
func headerValue(name string, args []shellparse.Word, i int) bool {
	v := args[i].Value
	if strings.HasPrefix(v, "--header=") || name == "curl" && strings.HasPrefix(v, "-H") {
		return true
	}
	if i == 0 || args[i-1].Dynamic {
		return false
	}
	p := args[i-1].Value
	return p == "--header" || name == "curl" && len(p) > 1 && p[0] == '-' && p[1] != '-' && p[len(p)-1] == 'H'
}

// onlyRefsTo reports a word's source text whose every expansion is $NAME
// or ${NAME} with NAME one of names: no command substitution, no other
// variable, no parameter operator.
func onlyRefsTo(s string, names []string) bool {
	if strings.ContainsAny(s, "`\\") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		brace := j < len(s) && s[j] == '{'
		if brace {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || 'A' <= s[k] && s[k] <= 'Z' || 'a' <= s[k] && s[k] <= 'z' || k > j && '0' <= s[k] && s[k] <= '9') {
			k++
		}
		if k == j || !slices.Contains(names, s[j:k]) {
			return false
		}
		if brace {
			if k >= len(s) || s[k] != '}' {
				return false
			}
			k++
		}
		i = k - 1
	}
	return true
}

// dropNet removes network:http to host, which a service access replaces.
func (c *Classification) dropNet(host string) {
	c.Accesses = slices.DeleteFunc(c.Accesses, func(a Access) bool {
		return a.Capability == NetworkHTTP && a.Target == host && !a.Dynamic
	})
}

// path2 is the last element of a URL path.
func path2(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// jsonModel is the "model" of a literal JSON body, or "".
func jsonModel(w shellparse.Word) string {
	if w.Dynamic || !strings.HasPrefix(strings.TrimSpace(w.Value), "{") {
		return ""
	}
	var body struct {
		Model any `json:"model"`
	}
	if err := json.Unmarshal([]byte(w.Value), &body); err != nil {
		return ""
	}
	if s, ok := body.Model.(string); ok {
		return s
	}
	return ""
}
