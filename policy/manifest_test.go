package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
)

// TestManifestBadFixtures parses every malformed manifest under
// testdata/manifest/bad and compares its errors, one per line in file
// order, with the sibling .want file.
func TestManifestBadFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/manifest/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".want") {
			continue
		}
		n++
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, filepath.Ext(f)) + ".want")
			if err != nil {
				t.Fatalf("no expectation: %v", err)
			}
			m, errs := ParseManifest(name, src)
			if m != nil || len(errs) == 0 {
				t.Fatalf("ParseManifest = %+v, %v; want nil and errors", m, errs)
			}
			var got []string
			for _, e := range errs {
				if e.Line < 1 || e.Col < 1 {
					t.Errorf("error without position: %v", e)
				}
				got = append(got, e.Error())
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSuffix(string(want), "\n"); g != w {
				t.Errorf("\n got %s\nwant %s", g, w)
			}
		})
	}
	if n < 15 {
		t.Fatalf("%d fixtures, want at least 15", n)
	}
}

// TestManifestGood: YAML and JSON manifests parse to the same requests,
// with their positions.
func TestManifestGood(t *testing.T) {
	for _, f := range []string{"testdata/manifest/good/notes.yaml", "testdata/manifest/good/notes.json"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, errs := ParseManifest(f, src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		if m.Name != "notes-helper" || m.Version != "1.2.0" || len(m.Capabilities) < 2 {
			t.Fatalf("%s: %+v", f, m)
		}
		r := m.Capabilities[0]
		if r.Capability != classify.FSRead || r.Target != "~/notes/**" || r.Why != "read the notes it summarises" || r.Pos.Line < 2 {
			t.Errorf("%s: first request %+v", f, r)
		}
		if r := m.Capabilities[1]; r.Capability != classify.TimeRead || r.Target != "" {
			t.Errorf("%s: second request %+v", f, r)
		}
	}
}

// admitOne parses a one-capability manifest and admits it.
func admitOne(t *testing.T, extra, capLine string, level Level, check SelfGrantCheck) Admission {
	t.Helper()
	src := "name: ext\n" + extra + "capabilities:\n  - " + capLine + "\n"
	m, errs := ParseManifest("m.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("%q: %v", src, errs)
	}
	as := AdmitManifest(m, level, "/home/u", check)
	if len(as) != 1 {
		t.Fatalf("%d admissions", len(as))
	}
	return as[0]
}

// TestSecurityAdmitManifest is seed 001's admission table: low-risk reads
// are granted, what has effects waits for a person, and ambient,
// all-power (see the bad fixtures), self-granting and Mnemos-replacement
// requests are denied, as is what the level denies.
func TestSecurityAdmitManifest(t *testing.T) {
	// A stand-in for the guard: mnemos's home and ~/.ssh are off limits.
	guard := func(c classify.Capability, target string) (string, bool) {
		for _, p := range []string{"/home/u/.config/mnemos", "/home/u/.ssh"} {
			if MatchTarget(target, p) || strings.HasPrefix(target, p+"/") {
				return "reaches " + p, true
			}
		}
		return "", false
	}
	cases := []struct {
		name    string
		extra   string
		cap     string
		level   Level
		outcome Outcome
		class   string
		target  string
	}{
		// Granted by the core evaluator.
		{"fs:read is a low-risk read", "", "{capability: fs:read, target: ~/notes/**, why: r}", Supervised, Allow, "", "/home/u/notes/**"},
		{"time:read needs no target", "", "{capability: time:read, why: r}", ReadOnly, Allow, "", NoTarget},
		{"parse:local", "", "{capability: parse:local, why: r}", Supervised, Allow, "", NoTarget},
		{"calendar:read", "", "{capability: calendar:read, target: work, why: r}", Supervised, Allow, "", "work"},
		{"mail:read at readonly", "", "{capability: mail:read, target: inbox, why: r}", ReadOnly, Allow, "", "inbox"},
		{"channel:in", "", "{capability: channel:in, target: telegram, why: r}", Supervised, Allow, "", "telegram"},
		// Waits for a person.
		{"fs:write asks", "", "{capability: fs:write, target: ~/notes/out/**, why: w}", Supervised, Ask, "", "/home/u/notes/out/**"},
		{"fs:write asks even at full", "", "{capability: fs:write, target: /srv/out/**, why: w}", Full, Ask, "", "/srv/out/**"},
		{"network asks", "", "{capability: network:http, target: api.example.com, why: w}", Full, Ask, "", "api.example.com"},
		{"subdomain wildcard is a target", "", "{capability: network:http, target: '*.example.com', why: w}", Supervised, Ask, "", "*.example.com"},
		{"channel:out asks", "", "{capability: channel:out, target: telegram, why: w}", Supervised, Ask, "", "telegram"},
		{"llm:online asks", "", "{capability: llm:online, why: w}", Supervised, Ask, "", NoTarget},
		// The level is a ceiling.
		{"readonly denies fs:write", "", "{capability: fs:write, target: ~/notes/**, why: w}", ReadOnly, Deny, DeniedLevel, "/home/u/notes/**"},
		{"readonly denies network", "", "{capability: network:http, target: api.example.com, why: w}", ReadOnly, Deny, DeniedLevel, "api.example.com"},
		// Never a standing grant.
		{"code:exec", "", "{capability: code:exec, target: make test, why: x}", Full, Deny, DeniedPerCommand, "make test"},
		{"mail:send", "", "{capability: mail:send, target: boss@example.com, why: x}", Supervised, Deny, DeniedPerCommand, "boss@example.com"},
		// Ambient.
		{"no target", "", "{capability: fs:read, why: r}", Supervised, Deny, DeniedAmbient, ""},
		{"root", "", "{capability: fs:read, target: /, why: r}", Full, Deny, DeniedAmbient, "/"},
		{"everything", "", "{capability: fs:read, target: /**, why: r}", Full, Deny, DeniedAmbient, "/**"},
		{"star", "", "{capability: fs:write, target: '/*', why: r}", Full, Deny, DeniedAmbient, "/*"},
		{"home", "", "{capability: fs:read, target: '~', why: r}", Full, Deny, DeniedAmbient, "/home/u"},
		{"null target", "", "{capability: fs:read, target: ~, why: r}", Full, Deny, DeniedAmbient, ""},
		{"home tree", "", "{capability: fs:read, target: ~/**, why: r}", Full, Deny, DeniedAmbient, "/home/u/**"},
		{"home entries", "", "{capability: fs:read, target: '~/*', why: r}", Full, Deny, DeniedAmbient, "/home/u/*"},
		{"all homes", "", "{capability: fs:read, target: /home/**, why: r}", Full, Deny, DeniedAmbient, "/home/**"},
		{"bare host wildcard", "", "{capability: network:http, target: '*', why: r}", Full, Deny, DeniedAmbient, "*"},
		{"top-level domain wildcard", "", "{capability: network:http, target: '*.com', why: r}", Full, Deny, DeniedAmbient, "*.com"},
		{"every mailbox", "", "{capability: mail:read, target: all, why: r}", Full, Deny, DeniedAmbient, "all"},
		{"every channel", "", "{capability: channel:out, target: '*', why: r}", Full, Deny, DeniedAmbient, "*"},
		// Self-granting: the checker (the guard, in the gate) decides.
		{"mnemos config", "", "{capability: fs:write, target: ~/.config/mnemos/policy.yaml, why: r}", Full, Deny, DeniedSelfGrant, "/home/u/.config/mnemos/policy.yaml"},
		{"reading ssh keys", "", "{capability: fs:read, target: ~/.ssh/**, why: r}", Full, Deny, DeniedSelfGrant, "/home/u/.ssh/**"},
		// Mnemos-replacement, whatever is asked.
		{"named mnemos", "", "{capability: time:read, why: r}", Full, Deny, DeniedReplacement, NoTarget},
		{"replaces mnemos", "replaces: mnemos\n", "{capability: time:read, why: r}", Full, Deny, DeniedReplacement, NoTarget},
		{"provides a gate", "provides: [notes, gate]\n", "{capability: fs:read, target: ~/notes/**, why: r}", Full, Deny, DeniedReplacement, "/home/u/notes/**"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			extra := c.extra
			var a Admission
			if c.name == "named mnemos" {
				m, errs := ParseManifest("m.yaml", []byte("name: mnemos\ncapabilities:\n  - "+c.cap+"\n"))
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				a = AdmitManifest(m, c.level, "/home/u", guard)[0]
			} else {
				a = admitOne(t, extra, c.cap, c.level, guard)
			}
			if a.Outcome != c.outcome || a.Class != c.class || a.Target != c.target {
				t.Errorf("got %s %q target %q (%s); want %s %q target %q", a.Outcome, a.Class, a.Target, a.Reason, c.outcome, c.class, c.target)
			}
			if a.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

// TestSecurityAdmitCodeExecNeverStanding: at every level, code:exec and
// mail:send are never granted nor left waiting for an approval that
// would record a standing grant.
func TestSecurityAdmitCodeExecNeverStanding(t *testing.T) {
	for _, l := range Levels() {
		for _, c := range []string{"code:exec", "mail:send"} {
			a := admitOne(t, "", "{capability: "+c+", target: make, why: x}", l, nil)
			if a.Outcome != Deny {
				t.Errorf("%s at %s: %s", c, l, a.Outcome)
			}
			if l != ReadOnly && (a.Class != DeniedPerCommand || !strings.Contains(a.Reason, "per-command approval")) {
				t.Errorf("%s at %s: %q %q", c, l, a.Class, a.Reason)
			}
		}
	}
}

// TestSecurityAdmitNeverAboveTable: no admission is more permissive than
// the autonomy table at its level; a denied cell is never granted or
// asked.
func TestSecurityAdmitNeverAboveTable(t *testing.T) {
	for _, l := range Levels() {
		for _, s := range Registry() {
			target := "x"
			switch s.TargetKind {
			case "path_glob":
				target = "/srv/data/**"
			case "host":
				target = "api.example.com"
			}
			a := admitOne(t, "", "{capability: "+string(s.Name)+", target: '"+target+"', why: x}", l, nil)
			if TableCell(l, s) == Denied && a.Outcome != Deny {
				t.Errorf("%s at %s: table denies, admission %s", s.Name, l, a.Outcome)
			}
			if a.Outcome == Allow && TableCell(ReadOnly, s) == Denied {
				t.Errorf("%s at %s granted without a person, but it is not a low-risk read", s.Name, l)
			}
		}
	}
}

func TestAdmissionOutcome(t *testing.T) {
	mk := func(os ...Outcome) []Admission {
		var as []Admission
		for _, o := range os {
			as = append(as, Admission{Outcome: o})
		}
		return as
	}
	for _, c := range []struct {
		in   []Admission
		want Outcome
	}{
		{nil, Deny},
		{mk(Allow, Allow), Allow},
		{mk(Allow, Ask), Ask},
		{mk(Ask, Deny, Allow), Deny},
	} {
		if got := AdmissionOutcome(c.in); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	files, _ := filepath.Glob("testdata/manifest/*/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, errs := ParseManifest("f.yaml", data)
		if (m == nil) == (len(errs) == 0) {
			t.Fatalf("manifest %v with errors %v", m, errs)
		}
		for _, e := range errs {
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("unpositioned error %v", e)
			}
		}
		if m != nil {
			for _, a := range AdmitManifest(m, Full, "/home/u", nil) {
				if a.Outcome == Allow && TableCell(ReadOnly, mustSpec(a.Request.Capability)) == Denied {
					t.Fatalf("granted %s", a.Request.Capability)
				}
			}
		}
	})
}

func mustSpec(c classify.Capability) Spec {
	s, _ := lookupSpec(c)
	return s
}
