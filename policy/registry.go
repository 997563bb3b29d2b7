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
	names := []Capability{FSRead, FSWrite, CodeExec, NetworkHTTP, LLMLocal, LLMOnline,
		MailRead, MailSend, ChannelIn, ChannelOut, TimeRead, ParseLocal, CalendarRead}
	out := make([]Spec, len(names))
	for i, c := range names {
		out[i], _ = lookupSpec(c)
	}
	return out
}

// lookupSpec is the registry itself, as code: it allocates nothing, so the
// decision path can consult it per access.
func lookupSpec(c Capability) (Spec, bool) {
	switch c {
	case FSRead:
		return Spec{FSRead, false, ApprovalPerTarget, "path_glob", "read files from the local filesystem within declared path_globs"}, true
	case FSWrite:
		return Spec{FSWrite, true, ApprovalPerTarget, "path_glob", "write/modify files within path_globs (critical)"}, true
	case CodeExec:
		return Spec{CodeExec, true, ApprovalAlways, "exact", "execute a shell command from a whitelist (e.g. package manager)"}, true
	case NetworkHTTP:
		return Spec{NetworkHTTP, false, ApprovalPerTarget, "host", "HTTP/HTTPS GET/POST to authorised hosts"}, true
	case LLMLocal:
		return Spec{LLMLocal, false, ApprovalNone, "none", "local LLM call (Ollama, llama.cpp), zero cost"}, true
	case LLMOnline:
		return Spec{LLMOnline, false, ApprovalPerTarget, "none", "online LLM call (Anthropic, OpenAI, ...), cost > 0"}, true
	case MailRead:
		return Spec{MailRead, false, ApprovalPerTarget, "exact", "read IMAP messages from an authorised mailbox"}, true
	case MailSend:
		return Spec{MailSend, true, ApprovalAlways, "exact", "SMTP send to recipients (irreversible, high stakes)"}, true
	case ChannelIn:
		return Spec{ChannelIn, false, ApprovalNone, "exact", "receive messages from a channel (Telegram, CLI, voice)"}, true
	case ChannelOut:
		return Spec{ChannelOut, false, ApprovalPerTarget, "exact", "send messages to a specific channel"}, true
	case TimeRead:
		return Spec{TimeRead, false, ApprovalNone, "none", "read current time and timezones"}, true
	case ParseLocal:
		return Spec{ParseLocal, false, ApprovalNone, "none", "local parsing of known formats (PDF, HTML, JSON, CSV)"}, true
	case CalendarRead:
		return Spec{CalendarRead, false, ApprovalPerTarget, "exact", "read events from an authorised calendar"}, true
	}
	return Spec{}, false
}

// Lookup returns the spec of a capability, or an error naming the closed
// registry when the capability is not in it.
func Lookup(c Capability) (Spec, error) {
	if s, ok := lookupSpec(c); ok {
		return s, nil
	}
	return Spec{}, fmt.Errorf("%w: %q", ErrUnknownCapability, string(c))
}
