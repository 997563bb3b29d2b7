package sandbox

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// A command allowed only because its changes are kept does not run when
// they cannot be watched, whichever way it would start.
func TestSecurityRequireWatchRefusesUnwatchedStart(t *testing.T) {
	for _, way := range watchWays {
		t.Run(way.name, func(t *testing.T) {
			st := requireLandlock(t)
			if way.view {
				st = requireView(t, way.helper)
			}
			st.Watch, st.WatchErr = false, "no user notification (test)"
			w := newWorld(t)
			spec := w.watchSpec(t, way)
			spec.RequireWatch = true
			var r recorder
			cmd := exec.Command("sh", "-c", "echo x > made.txt")
			cmd.Dir = w.ws
			_, watch, err := StartWatched(cmd, spec, st, nil, r.handle)
			if err == nil {
				_ = cmd.Wait()
				watch.Close()
				t.Fatal("started a command whose changes cannot be watched")
			}
			if !errors.Is(err, ErrUnenforceable) || cmd.Process != nil {
				t.Errorf("err = %v (want ErrUnenforceable), process %v", err, cmd.Process)
			}
			if exists(filepath.Join(w.ws, "made.txt")) {
				t.Error("made.txt was written")
			}
		})
	}
}

// A thread confined ahead for a spec that did not require the watch
// serves one that does, and still refuses to start the command when the
// thread could not be watched.
func TestSecurityRequireWatchPrepared(t *testing.T) {
	st := requireLandlock(t)
	st.Watch, st.WatchErr = false, "no user notification (test)"
	w := newWorld(t)
	spec := w.watchSpec(t, watchWay{})
	pre := Prepare(spec, st)
	spec.RequireWatch = true
	var r recorder
	cmd := exec.Command("sh", "-c", "echo x > made.txt")
	cmd.Dir = w.ws
	_, watch, err := StartWatched(cmd, spec, st, pre, r.handle)
	if err == nil {
		_ = cmd.Wait()
		watch.Close()
		t.Fatal("started a command whose changes cannot be watched")
	}
	if !errors.Is(err, ErrUnenforceable) || cmd.Process != nil || exists(filepath.Join(w.ws, "made.txt")) {
		t.Errorf("err = %v, process %v, made.txt written %v", err, cmd.Process, exists(filepath.Join(w.ws, "made.txt")))
	}
}
