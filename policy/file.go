package policy

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// Error is a policy file that cannot be used. It carries the position so a
// person can fix it: FILE:LINE:COL: message.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Pos is where a rule was written.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Rule is one allow, ask or deny rule. Every matcher that is set must
// hold: the argv prefix, the capability and workspace shorthands, and each
// condition.
type Rule struct {
	Name string `json:"name"`
	// Description is free text for people; it changes nothing.
	Description string  `json:"description,omitempty"`
	Action      Outcome `json:"action"`
	Priority    int     `json:"priority"`
	// ArgvPrefix matches a command whose static words start with these. The
	// first word matches the program's base name unless it holds a "/".
	ArgvPrefix []string `json:"argv_prefix,omitempty"`
	// Pin, set on a rule remembered on approval (command: {argv_prefix:
	// [...], pin: sha256:...}), is the digest of what the approved command
	// ran besides its words: the program PATH found, the script it ran,
	// the environment variables that change what runs. The rule matches a
	// command only while its digest (Input.Pins) is the same; a command
	// whose digest cannot be computed never matches.
	Pin string `json:"pin,omitempty"`
	// Capability matches a command all of whose approval-bearing accesses
	// use this capability.
	Capability classify.Capability `json:"capability,omitempty"`
	// InWorkspace matches a command all of whose targets are known and lie
	// inside the workspace.
	InWorkspace bool `json:"in_workspace,omitempty"`
	// Conditions are seed 004's field tests; all must hold (see doc.go for
	// how they quantify over a command's accesses).
	Conditions []Condition `json:"conditions,omitempty"`
	// Match and NotMatch are example commands checked when the policy
	// loads: the rule must match some command of each Match example and no
	// command of any NotMatch example.
	Match    []Example `json:"match,omitempty"`
	NotMatch []Example `json:"not_match,omitempty"`
	// Scope is seed 004's scope_template: the limits given to the ticket or
	// grant created when a request this rule asked about is approved.
	Scope *ScopeTemplate `json:"scope_template,omitempty"`
	// Sandbox, when set, changes the sandbox of a request this rule
	// matched a command of (see SandboxFor).
	Sandbox *SandboxConfig `json:"sandbox,omitempty"`
	// Undoable, on an ask or deny rule, says that what the command drops
	// is what the journal keeps: when the journal is on for the request
	// (Input.Journaled) and keeps everything the command writes, the
	// rule asks below level full and lets the command run at full, since
	// `mnemos undo` brings back what it changed (Result.Undoable).
	Undoable bool `json:"undoable,omitempty"`
	Pos      Pos  `json:"pos"`

	// profile is the name of the profile the rule belongs to ("" for the
	// file's own rules).
	profile string
	// reasons are the rule's reasons, built by Parse (see Rule.reason).
	reasons *ruleReasons
}

// Example is a command written in a rule's match or not_match list, with
// the request it stands for.
type Example struct {
	Command string `json:"command"`
	// Level, Channel, Sender, Cwd and Reason default to the policy's level,
	// cli, user, ExampleCwd and none.
	Level   *Level `json:"level,omitempty"`
	Channel string `json:"channel,omitempty"`
	Sender  string `json:"sender,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Pos     Pos    `json:"pos"`
}

// ScopeTemplate is seed 004's scope_template. TTL and MaxUses bound the
// ticket or grant an approval creates; other keys are kept in Extra.
type ScopeTemplate struct {
	TTL     time.Duration  `json:"ttl,omitempty"`
	MaxUses int            `json:"max_uses,omitempty"`
	Extra   map[string]any `json:"extra,omitempty"`
}

// Policy is a loaded policy file, or a stack of them built by Merge.
type Policy struct {
	// Source is the file the policy came from, or "built-in default".
	Source string
	// Level is the autonomy level the policy sets.
	Level Level
	// Shell is defaults.shell: what a command classified code:exec gets when
	// no rule matches (ask by default; allow acts as an allow rule).
	Shell Outcome
	// Rules in evaluation order: priority descending, file order kept.
	// Parse indexes them; change a policy by parsing a new one, never by
	// reordering or replacing rules in place.
	Rules []Rule
	// ApprovalTTL is how long a pending approval waits (default 600 s).
	ApprovalTTL time.Duration
	// JudgeThreshold is vaglio's judge threshold (default 0.30).
	JudgeThreshold float64
	// Judge is which judge vaglio's phase 2 uses (the zero value: the
	// rule-based one). For a stack built by Merge, the system or user
	// layer's choice.
	Judge JudgeModel
	// Sandbox is the sandbox: section: what the sandbox of every command
	// adds to or removes from what the decision grants.
	Sandbox SandboxConfig
	// RateLimits is the rate_limits: section, in file order, at most one
	// per capability (see RateLimitFor). For a stack built by Merge, the
	// layers' sections combined, for display.
	RateLimits []RateLimit
	// Costs is the costs: section: estimated cost per call of hosted
	// models (costs.go). For a stack built by Merge, the layers' entries,
	// for display; EstimateCost takes the highest of the layers'.
	Costs []Cost
	// Channels is the channels: section: where the cards of new pending
	// approvals are delivered. For a stack built by Merge, those of the
	// system and user layers only.
	Channels []Channel
	// Profiles give some identities (channel, sender) their own level,
	// rate limits and rules, in file order; the first that matches an
	// identity applies.
	Profiles []Profile
	// Layer is where the policy sits in a stack built by Merge; "" for a
	// policy read from one file and used alone.
	Layer Layer
	// HookHold is hook.hold: how long `mnemos hook` waits for a person to
	// answer, from another channel, an approval it parked for an agent
	// that cannot ask its person (0: it blocks at once). For a stack built
	// by Merge, the system layer's if it sets one, else the user's: a
	// project cannot make an agent's hook wait.
	HookHold time.Duration
	// State is the state: section (state.go): where approvals and grants
	// are kept. For a stack built by Merge, the system layer's, else the
	// user's; never a project's.
	State State
	// Journal is the journal: section (journal.go): whether the journal
	// keeps what gated commands change in the workspace, and how much.
	// For a stack built by Merge, the layers' sections combined.
	Journal Journal

	// index finds the rules that can match a program name; built by Parse.
	index *ruleIndex
	// set records which settings the file wrote, and where.
	set settings
	at  [nSettings]Pos
	// layers are the policies of a stack built by Merge, system first, and
	// upperShell the defaults.shell of its system and user layers.
	layers     []*Policy
	upperShell Outcome
}

// settings is a set of top-level settings a policy file wrote.
type settings uint8

// The settings a layer may write or leave to the layers above.
const (
	setLevel settings = 1 << iota
	setShell
	setTTL
	setThreshold
)

// nSettings is the number of settings tracked in Policy.at.
const nSettings = 4

func settingIndex(s settings) int {
	switch s {
	case setLevel:
		return 0
	case setShell:
		return 1
	case setTTL:
		return 2
	}
	return 3
}

// wrote records that the file set s at pos.
func (p *Policy) wrote(s settings, pos Pos) {
	p.set |= s
	p.at[settingIndex(s)] = pos
}

// has reports whether the file wrote s.
func (p *Policy) has(s settings) bool { return p.set&s != 0 }

// posOf is where the file wrote s.
func (p *Policy) posOf(s settings) Pos { return p.at[settingIndex(s)] }

// DefaultApprovalTTL is seed 002's ten minutes.
const DefaultApprovalTTL = 600 * time.Second

// DefaultJudgeThreshold is seed 003's rule-based threshold.
const DefaultJudgeThreshold = 0.30

// Default priorities of the list forms: denials first, then questions, then
// permissions, so a broad allow never shadows a narrower deny by accident.
const (
	denyPriority  = 200
	askPriority   = 100
	allowPriority = 0
)

// Load reads and validates a policy file. A missing or invalid file is an
// error; it never loads as permissive.
func Load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", errors.Unwrap(err))}
	}
	return Parse(file, data)
}
