package main

import "testing"

func TestBuildString(t *testing.T) {
	for _, tc := range []struct {
		b    build
		want string
	}{
		{build{Version: "v1.2.3", Go: "go1.26.8"}, "mnemos v1.2.3 (go1.26.8)"},
		{build{Version: "v0.0.0-20261125212858-bf045ad0a20f+dirty", Commit: "bf045ad0a20ffaef1458de1986a23f7900228476",
			Time: "2026-11-25T21:28:58Z", Modified: true, Go: "go1.26.8"},
			"mnemos v0.0.0-20261125212858-bf045ad0a20f+dirty (commit bf045ad0a20f, 2026-11-25T21:28:58Z, with uncommitted changes; go1.26.8)"},
		{build{Version: "(devel)", Commit: "bf045ad0a20ffaef1458de1986a23f7900228476", Time: "2026-11-25T21:28:58Z", Go: "go1.26.8"},
			"mnemos devel (commit bf045ad0a20f, 2026-11-25T21:28:58Z; go1.26.8)"},
		{build{Version: "(devel)", Go: "go1.26.8"},
			"mnemos devel (no version or commit recorded: built outside a git clone or with -buildvcs=false; go1.26.8)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
