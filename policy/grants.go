package policy

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// GrantKey is the four-tuple a grant is identified by (seed 000, ch. 4).
type GrantKey struct {
	Channel    string              `json:"channel"`
	Sender     string              `json:"sender"`
	Capability classify.Capability `json:"capability"`
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
	CoveringGrant(ctx context.Context, channel, sender string, c classify.Capability, target, session string, now time.Time) (g Grant, ok bool, err error)
}

// A grant on a path covers writing it and, for a directory tree
// (DIR/**), writing inside it. It never covers removing the path it
// names, or moving it away, or anything around it: `rm -rf DIR`,
// `mv DIR elsewhere` and `rm DIR/..` are not writes inside DIR. A
// command that removes or moves its targets (rm, rmdir, unlink, shred,
// find -delete, mv) is covered only by a grant on a directory tree that
// holds each target below its top: the grant is looked up for the
// directory the target is removed from (removalTarget), and must be a
// tree (coversRemoval).

// removesTargets reports a command whose fs:write targets are removed or
// moved away.
func removesTargets(cl *classify.Classification) bool {
	return cl.Verb == "delete" || cl.Verb == "move"
}

// removalTarget is what a grant must cover for a command to remove
// target: the directory it is removed from.
func removalTarget(target string) string {
	if !path.IsAbs(target) {
		return target
	}
	return path.Dir(path.Clean(target))
}

// coversRemoval reports a grant pattern that may cover a removal: a
// directory tree.
func coversRemoval(pattern string) bool {
	return strings.HasSuffix(pattern, "/**")
}
