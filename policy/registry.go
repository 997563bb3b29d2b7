package policy

import (
	"fmt"

	"github.com/mnemos-dev/mnemos/classify"
)

// Capability names one entry of the closed registry. The type and its
// thirteen names live in classify, which gives every access one; the
// registry's functions here (Lookup, Registry, EffectiveOutcome, the
// GrantChecker) take it under this name too, so a caller that only
// consults the registry need not import classify.
type Capability = classify.Capability

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
	Name            classify.Capability `json:"name"`
	Critical        bool                `json:"critical"`
	DefaultApproval Approval            `json:"default_approval"`
	TargetKind      string              `json:"target_kind"`
	Description     string              `json:"description"`
}

// Registry returns the closed capability registry, in canonical order. The
// slice is new on every call; the registry itself cannot be changed.
func Registry() []Spec {
	names := []classify.Capability{classify.FSRead, classify.FSWrite, classify.CodeExec, classify.NetworkHTTP, classify.LLMLocal, classify.LLMOnline,
		classify.MailRead, classify.MailSend, classify.ChannelIn, classify.ChannelOut, classify.TimeRead, classify.ParseLocal, classify.CalendarRead}
	out := make([]Spec, len(names))
	for i, c := range names {
		out[i], _ = lookupSpec(c)
	}
	return out
}

// lookupSpec is the registry itself, as code: it allocates nothing, so the
// decision path can consult it per access.
func lookupSpec(c classify.Capability) (Spec, bool) {
	switch c {
	case classify.FSRead:
		return Spec{classify.FSRead, false, ApprovalPerTarget, "path_glob", "read files from the local filesystem within declared path_globs"}, true
	case classify.FSWrite:
		return Spec{classify.FSWrite, true, ApprovalPerTarget, "path_glob", "write/modify files within path_globs (critical)"}, true
	case classify.CodeExec:
		return Spec{classify.CodeExec, true, ApprovalAlways, "exact", "execute a shell command from a whitelist (e.g. package manager)"}, true
	case classify.NetworkHTTP:
		return Spec{classify.NetworkHTTP, false, ApprovalPerTarget, "host", "HTTP/HTTPS GET/POST to authorised hosts"}, true
	case classify.LLMLocal:
		return Spec{classify.LLMLocal, false, ApprovalNone, "none", "local LLM call (Ollama, llama.cpp), zero cost"}, true
	case classify.LLMOnline:
		return Spec{classify.LLMOnline, false, ApprovalPerTarget, "none", "online LLM call (Anthropic, OpenAI, ...), cost > 0"}, true
	case classify.MailRead:
		return Spec{classify.MailRead, false, ApprovalPerTarget, "exact", "read IMAP messages from an authorised mailbox"}, true
	case classify.MailSend:
		return Spec{classify.MailSend, true, ApprovalAlways, "exact", "SMTP send to recipients (irreversible, high stakes)"}, true
	case classify.ChannelIn:
		return Spec{classify.ChannelIn, false, ApprovalNone, "exact", "receive messages from a channel (Telegram, CLI, voice)"}, true
	case classify.ChannelOut:
		return Spec{classify.ChannelOut, false, ApprovalPerTarget, "exact", "send messages to a specific channel"}, true
	case classify.TimeRead:
		return Spec{classify.TimeRead, false, ApprovalNone, "none", "read current time and timezones"}, true
	case classify.ParseLocal:
		return Spec{classify.ParseLocal, false, ApprovalNone, "none", "local parsing of known formats (PDF, HTML, JSON, CSV)"}, true
	case classify.CalendarRead:
		return Spec{classify.CalendarRead, false, ApprovalPerTarget, "exact", "read events from an authorised calendar"}, true
	}
	return Spec{}, false
}

// Lookup returns the spec of a capability, or an error naming the closed
// registry when the capability is not in it.
func Lookup(c classify.Capability) (Spec, error) {
	if s, ok := lookupSpec(c); ok {
		return s, nil
	}
	return Spec{}, fmt.Errorf("%w: %q", ErrUnknownCapability, string(c))
}
