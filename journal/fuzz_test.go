package journal

import (
	"path/filepath"
	"testing"
)

// FuzzParseLog: a log of any content is read without panicking, and what
// it yields never names a path outside its workspace.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte(`{"t":"run","v":1,"id":"x","ws":"/w","start":1}` + "\n" +
		`{"t":"e","at":2,"k":"rename","p":"a","p2":"b/c","a":{"t":"file","k":"meta"},"b":{"t":"absent"}}` + "\n" +
		`{"t":"after","p":"b/c","s":{"t":"file"}}` + "\n" + `{"t":"end","at":3,"entries":1}` + "\n" + `{"t":"e","at":4,"k`))
	f.Add([]byte(`{"t":"run","v":1,"id":"x","ws":"/w"}` + "\n" + `{"t":"e","p":"../x"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lg, err := parseLog("x", data)
		if err != nil {
			return
		}
		for _, e := range lg.Entries {
			for _, p := range []string{e.P, e.P2} {
				if p != "" && !filepath.IsLocal(p) && !(filepath.IsAbs(p) && filepath.Clean(p) == p) {
					t.Fatalf("entry names %q", p)
				}
			}
		}
		for p := range lg.After {
			if !filepath.IsLocal(p) {
				t.Fatalf("state names %q", p)
			}
		}
		_ = netChanges(lg)
	})
}
