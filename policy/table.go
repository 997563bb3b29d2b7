package policy

import (
	"fmt"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
)

// Level is an autonomy level.
type Level int

// Autonomy levels, from most to least restrictive.
const (
	ReadOnly Level = iota
	Supervised
	Full
)

// Levels lists the levels in table order.
func Levels() []Level { return []Level{ReadOnly, Supervised, Full} }

func (l Level) String() string {
	switch l {
	case ReadOnly:
		return "readonly"
	case Supervised:
		return "supervised"
	case Full:
		return "full"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// Title is the level's name as seed 000 writes it (ReadOnly, Supervised, Full).
func (l Level) Title() string {
	switch l {
	case ReadOnly:
		return "ReadOnly"
	case Supervised:
		return "Supervised"
	case Full:
		return "Full"
	}
	return l.String()
}

// ParseLevel accepts readonly, supervised and full in any case, with or
// without a separator ("read-only", "ReadOnly").
func ParseLevel(s string) (Level, error) {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s))
	switch n {
	case "readonly":
		return ReadOnly, nil
	case "supervised":
		return Supervised, nil
	case "full":
		return Full, nil
	}
	return 0, fmt.Errorf("unknown level %q (want readonly, supervised or full)", s)
}

// Cell is one outcome of the autonomy × capability table.
type Cell string

// Table cells.
const (
	Allowed          Cell = "allowed"
	ApprovalRequired Cell = "approval_required"
	Denied           Cell = "denied"
)

// TableCell applies seed 000's three generating rules to one capability at
// one level. The table is derived, never written by hand:
//
//   - ReadOnly: capabilities with default approval none are allowed; read
//     capabilities (not critical, per_target, whose name ends in ":read")
//     need approval; everything else is denied.
//   - Supervised: default approval none is allowed; everything else needs
//     approval.
//   - Full: default approval always needs approval; everything else is
//     allowed.
func TableCell(level Level, s Spec) Cell {
	switch level {
	case ReadOnly:
		switch {
		case s.DefaultApproval == ApprovalNone:
			return Allowed
		case !s.Critical && s.DefaultApproval == ApprovalPerTarget && strings.HasSuffix(string(s.Name), ":read"):
			return ApprovalRequired
		default:
			return Denied
		}
	case Supervised:
		if s.DefaultApproval == ApprovalNone {
			return Allowed
		}
		return ApprovalRequired
	case Full:
		if s.DefaultApproval == ApprovalAlways {
			return ApprovalRequired
		}
		return Allowed
	}
	// An unknown level is never permissive.
	return Denied
}

// Table returns the cell for a capability at a level; an unknown capability
// is denied.
func Table(level Level, c classify.Capability) Cell {
	s, ok := lookupSpec(c)
	if !ok {
		return Denied
	}
	return TableCell(level, s)
}
