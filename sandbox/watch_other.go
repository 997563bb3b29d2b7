//go:build !linux

package sandbox

import "os/exec"

// Watch stands for a watch of changes; there is none off Linux.
type Watch struct{}

// Close returns nothing served.
func (*Watch) Close() WatchStats { return WatchStats{} }

// StartWatched is StartPrepared: changes are watched on Linux only, and
// the note says so.
func StartWatched(cmd *exec.Cmd, spec Spec, st Status, pre *Prepared, _ func(Change) error) (Applied, *Watch, error) {
	a, err := StartPrepared(cmd, spec, st, pre)
	if spec.Watch {
		a.Notes = append(a.Notes, "changes are not watched: "+st.WatchErr)
	}
	return a, nil, err
}
