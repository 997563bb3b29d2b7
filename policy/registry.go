package policy

import "fmt"

// Capability names one entry of the closed registry.
type Capability string

// The thirteen canonical capabilities (seed 000, registry v1.1).
const (
	FSRead       Capability = "fs:read"
	FSWrite      Capability = "fs:write"
	CodeExec     Capability = "code:exec"
	NetworkHTTP  Capability = "network:http"
	LLMLocal     Capability = "llm:local"
	LLMOnline    Capability = "llm:online"
	MailRead     Capability = "mail:read"
	MailSend     Capability = "mail:send"
	ChannelIn    Capability = "channel:in"
	ChannelOut   Capability = "channel:out"
	TimeRead     Capability = "time:read"
	ParseLocal   Capability = "parse:local"
	CalendarRead Capability = "calendar:read"
)

// Approval is a capability's default approval mode.
type Approval string

// Default approval modes.
const (
	ApprovalNone      Approval = "none"
	ApprovalPerTarget Approval = "per_target"
	ApprovalAlways    Approval = "always"
)

// Spec describes one capability.
type Spec struct {
	Name            Capability `json:"name"`
	Critical        bool       `json:"critical"`
	DefaultApproval Approval   `json:"default_approval"`
	TargetKind      string     `json:"target_kind"`
	Description     string     `json:"description"`
}

// Registry returns the closed capability registry, in canonical order. The
// slice is new on every call; the registry itself cannot be changed.
func Registry() []Spec {
	return []Spec{
		{FSRead, false, ApprovalPerTarget, "path_glob", "read files from the local filesystem within declared path_globs"},
		{FSWrite, true, ApprovalPerTarget, "path_glob", "write/modify files within path_globs (critical)"},
		{CodeExec, true, ApprovalAlways, "exact", "execute a shell command from a whitelist (e.g. package manager)"},
		{NetworkHTTP, false, ApprovalPerTarget, "host", "HTTP/HTTPS GET/POST to authorised hosts"},
		{LLMLocal, false, ApprovalNone, "none", "local LLM call (Ollama, llama.cpp), zero cost"},
		{LLMOnline, false, ApprovalPerTarget, "none", "online LLM call (Anthropic, OpenAI, ...), cost > 0"},
		{MailRead, false, ApprovalPerTarget, "exact", "read IMAP messages from an authorised mailbox"},
		{MailSend, true, ApprovalAlways, "exact", "SMTP send to recipients (irreversible, high stakes)"},
		{ChannelIn, false, ApprovalNone, "exact", "receive messages from a channel (Telegram, CLI, voice)"},
		{ChannelOut, false, ApprovalPerTarget, "exact", "send messages to a specific channel"},
		{TimeRead, false, ApprovalNone, "none", "read current time and timezones"},
		{ParseLocal, false, ApprovalNone, "none", "local parsing of known formats (PDF, HTML, JSON, CSV)"},
		{CalendarRead, false, ApprovalPerTarget, "exact", "read events from an authorised calendar"},
	}
}

// Lookup returns the spec of a capability, or an error naming the closed
// registry when the capability is not in it.
func Lookup(c Capability) (Spec, error) {
	for _, s := range Registry() {
		if s.Name == c {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("%w: %q", ErrUnknownCapability, string(c))
}
