package gate

import (
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// cmdDirs works out, for the commands that run only after a cd joined to
// them by && has succeeded (shellparse's AfterCd), the directories they
// may start in: that cd's targets, widened by any cd between the two. The
// other commands may start in any directory of the script (Place.Dirs),
// since the guard does not follow control flow: "cd build; rm -rf ." runs
// rm where it started when build is missing, "cd build && rm -rf ." never.
type cmdDirs struct {
	cmds   []shellparse.Command
	place  classify.Place
	home   string
	cdpath bool
	memo   []gateDirs
}

// mayUseCdpath reports whether CDPATH may send a bare "cd NAME" somewhere
// other than NAME below the working directory: the environment sets it,
// or the script names it.
func mayUseCdpath(environ []string, argv []string) bool {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "CDPATH="); ok && v != "" {
			return true
		}
	}
	for _, a := range argv {
		if strings.Contains(a, "CDPATH") {
			return true
		}
	}
	return false
}

// cdpathUnknown marks the place's directories unknown when CDPATH may
// apply to a bare cd target of the script.
func cdpathUnknown(cmds []shellparse.Command, place *classify.Place, home string) {
	for _, c := range cmds {
		if classify.ChangesDir(c) && classify.CdTargetBare(c, home) {
			place.UnknownDir = true
			return
		}
	}
}

// afterCdpath reports a command that comes after a bare cd target CDPATH
// may resolve elsewhere ("CDPATH=~; cd .ssh && cat id_rsa"): where it runs
// is not known, so it is never allowed without asking.
func (d *cmdDirs) afterCdpath(i int) bool {
	if !d.cdpath {
		return false
	}
	for k := 0; k < i; k++ {
		c := d.cmds[k]
		if !classify.ChangesDir(c) {
			continue
		}
		if classify.CdTargetBare(c, d.home) {
			return true
		}
		// The parser writes a target CDPATH set in the script may change
		// as $CDPATH/NAME.
		for _, w := range c.Argv[1:] {
			if w.Dynamic && strings.Contains(w.Value, "CDPATH") {
				return true
			}
		}
	}
	return false
}

// of returns the directories command i may start in, and whether they are
// narrower than the place's.
func (d *cmdDirs) of(i int) ([]string, bool) {
	c := d.cmds[i]
	k := c.AfterCd - 1
	if k < 0 && d.startsWhereScriptStarts(i) {
		return d.place.Dirs[:1], len(d.place.Dirs) > 1
	}
	if k < 0 || k >= i || !classify.ChangesDir(d.cmds[k]) {
		return d.place.Dirs, false
	}
	dirs, ok := d.afterGate(k)
	for j := k + 1; ok && j < i; j++ {
		if classify.ChangesDir(d.cmds[j]) {
			var next []string
			if next, ok = d.after(j, dirs); ok {
				dirs = slices.Clone(dirs)
				for _, n := range next {
					if !slices.Contains(dirs, n) {
						dirs = append(dirs, n)
					}
				}
			}
		}
	}
	if !ok {
		return d.place.Dirs, false
	}
	return dirs, true
}

// afterGate returns, once per cd, where the cd at index k leads from the
// directories it may itself start in.
func (d *cmdDirs) afterGate(k int) ([]string, bool) {
	for _, m := range d.memo {
		if m.k == k {
			return m.dirs, m.ok
		}
	}
	base, _ := d.of(k)
	dirs, ok := d.after(k, base)
	d.memo = append(d.memo, gateDirs{k: k, dirs: dirs, ok: ok})
	return dirs, ok
}

type gateDirs struct {
	k    int
	dirs []string
	ok   bool
}

// after returns where the cd at index k moves from dirs, when known.
func (d *cmdDirs) after(k int, dirs []string) ([]string, bool) {
	c := d.cmds[k]
	if d.cdpath && classify.CdTargetBare(c, d.home) {
		return nil, false
	}
	return classify.CdTargets(c, dirs, d.home)
}

// checker returns the guard for command i and the directories it may
// start in: the script's, or, narrow, those after the cd it depends on.
func (d *cmdDirs) checker(i int, all vaglio.DirChecker, p *vaglio.Prepared) (vaglio.DirChecker, []string, bool) {
	if d.cmds[i].AfterCd == 0 {
		return all, d.place.Dirs, false
	}
	dirs, narrow := d.of(i)
	if !narrow {
		return all, d.place.Dirs, false
	}
	return p.ForDirs(dirs), dirs, true
}

// startsWhereScriptStarts reports a command that runs, once, in the
// directory the script started in: no command before it changes
// directory, and it sits in no loop, function, trap, substitution or
// background job (which run again, or later, or elsewhere) — only in
// lists and conditionals of the script itself ("cd tests && make && cd ..
// && grep -rn TODO ." then knows where its first cd starts). Directory
// changes the parser cannot follow (CDPATH, a cd to a computed target)
// keep the place's directories.
func (d *cmdDirs) startsWhereScriptStarts(i int) bool {
	if d.place.UnknownDir || d.cdpath || len(d.place.Dirs) == 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if classify.ChangesDir(d.cmds[j]) {
			return false
		}
	}
	for _, ctx := range d.cmds[i].Context {
		switch ctx {
		case "&&", "||", ";", "if", "bash -c", "sh -c", "dash -c", "zsh -c", "ksh -c":
		default:
			return false
		}
	}
	return true
}
