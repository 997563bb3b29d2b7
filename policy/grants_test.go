package policy

import (
	"context"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestSecurityGrantNeverCoversRemovingItsPath: a write grant on a
// directory tree covers writing and removing inside it, never removing
// the directory itself, moving it away, or anything around it; a grant on
// a file covers writing it, not removing it.
func TestSecurityGrantNeverCoversRemovingItsPath(t *testing.T) {
	p := mustParse(t, "level: supervised\n")
	grants := &fakeGrants{keys: map[GrantKey]bool{
		{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: "/srv/d/**"}:       true,
		{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: "/srv/notes.txt"}:  true,
		{Channel: "cli", Sender: "dev", Capability: classify.FSWrite, Target: "/srv/logs/*.log"}: true,
	}}
	cases := []struct {
		src  string
		want Outcome
	}{
		{"touch /srv/d/new", Allow},
		{"rm /srv/d/old.txt", Allow},
		{"rm -rf /srv/d/build", Allow},
		{"mv /srv/d/a /srv/d/b", Allow},
		{"touch /srv/notes.txt", Allow},
		{"touch /srv/logs/a.log", Allow},
		{"rm -rf /srv/d", Ask},
		{"rm -rf /srv/d/", Ask},
		{"rm -rf /srv/d/..", Ask},
		{"rmdir /srv/d", Ask},
		{"mv /srv/d /srv/e", Ask},
		{"mv /srv/d/a /tmp/elsewhere/a", Ask},
		{"rm /srv/notes.txt", Ask},
		{"shred -u /srv/notes.txt", Ask},
		{"rm /srv/logs/a.log", Ask},
		{"find /srv/d -delete", Ask},
	}
	for _, c := range cases {
		s, err := shellparse.ParseScript(c.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		// No workspace: the floor on deletes outside it does not apply,
		// so the grant alone decides.
		in := Input{Command: s.Commands[0], Place: classify.Place{Dirs: []string{"/w"}, Home: "/home/u"}, Level: Supervised,
			Cwd: "/w", Channel: "cli", Sender: "dev"}
		res, err := p.Evaluate(context.Background(), in, grants)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != c.want {
			t.Errorf("%s: %s (%s), want %s", c.src, res.Outcome, res.Reason, c.want)
		}
	}
}
