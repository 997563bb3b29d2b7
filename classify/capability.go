package classify

// Capability names one entry of the closed registry (policy.Registry
// describes each); every access a command is classified into carries one.
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
