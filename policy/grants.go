package policy

import (
	"context"
	"time"
)

// GrantKey is the four-tuple a grant is identified by (seed 000, ch. 4).
type GrantKey struct {
	Channel    string     `json:"channel"`
	Sender     string     `json:"sender"`
	Capability Capability `json:"capability"`
	// Target is a path glob ("/home/u/proj/**"), a host, or an exact value,
	// depending on the capability's target kind.
	Target string `json:"target"`
}

// Grant is a recorded territory concession.
type Grant struct {
	ID int64 `json:"id"`
	GrantKey
	GrantedAt time.Time  `json:"granted_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	GrantedBy string     `json:"granted_by,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// Session, when set, limits the grant to one agent session.
	Session string `json:"session,omitempty"`
	// Approval is the approval request the grant came from, if any.
	Approval string `json:"approval,omitempty"`
}

// GrantChecker answers whether an active grant covers a concrete target.
// Implementations compare expiry at query time. The policy package never
// opens a database itself: it is handed a checker, and consults it only
// when the table says approval_required.
type GrantChecker interface {
	// CoveringGrant returns the active grant whose target matches target
	// for (channel, sender, capability) and, when the grant is limited to a
	// session, the given session; ok is false when none does.
	CoveringGrant(ctx context.Context, channel, sender string, c Capability, target, session string, now time.Time) (g Grant, ok bool, err error)
}
