package policy

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// Journal is the journal: section: whether mnemos keeps, before a gated
// command changes or deletes a file of the workspace, what the file held,
// so that `mnemos undo` can bring it back, and how much of it it keeps.
//
//	journal:
//	  enabled: true
//	  quota: 300MiB        # per workspace; the oldest runs are pruned first
//	  keep: 7d             # runs older than this are pruned
//	  max_file: 64MiB      # a larger file is recorded by its digest only
//	  big_deletion: 50     # a deletion of more files than this drops work
//	  exclude: [node_modules, target, .venv, ...]
//
// Contained work is only contained when it can be undone: without the
// journal, the field sandbox is never "contained" (contained.go), and a
// command that drops work (a deletion of more than BigDeletion files or of
// files with uncommitted changes, or a rule marked undoable) asks.
//
// For a stack built by Merge: enabled when no layer turns it off; quota,
// keep and max_file the system layer's when it writes them, else the
// user's (a project cannot choose how much of the user's disk and history
// the journal keeps); big_deletion the smallest written; exclude the list
// of the highest layer that writes one (the system's or user's, else the
// defaults), which each lower layer writing a list can only narrow (a
// project cannot stop the journal from keeping a directory).
type Journal struct {
	// On says whether the journal keeps what gated commands change
	// (enabled:, default true).
	On bool `json:"enabled"`
	// Quota is what the journal may hold for one workspace, in bytes.
	Quota int64 `json:"quota"`
	// Keep is how long a run's record is kept.
	Keep time.Duration `json:"keep"`
	// MaxFile is the largest file whose content is kept; a larger one is
	// recorded by its digest only, and its entry says it cannot be
	// restored.
	MaxFile int64 `json:"max_file"`
	// Exclude are the names of directories, anywhere below the workspace,
	// whose contents are not journaled: build outputs and caches that
	// their tools make again.
	Exclude []string `json:"exclude"`
	// BigDeletion is the number of files above which a deletion drops
	// work: it asks at supervised, and at full runs only when the journal
	// keeps it.
	BigDeletion int `json:"big_deletion"`
	// Pos is where the section starts (zero when the file has none).
	Pos Pos `json:"-"`

	// set records the keys the file wrote, and at their positions.
	set journalKeys
	at  [nJournalKeys]Pos
}

// journalKeys is a set of the journal: section's keys.
type journalKeys uint8

const (
	jOn journalKeys = 1 << iota
	jQuota
	jKeep
	jMaxFile
	jExclude
	jBigDeletion
	nJournalKeys = iota
)

// journalKeyNames are the keys, in the order of the bits above.
var journalKeyNames = [nJournalKeys]string{"enabled", "quota", "keep", "max_file", "exclude", "big_deletion"}

func journalKeyIndex(k journalKeys) int {
	for i := range nJournalKeys {
		if k == 1<<i {
			return i
		}
	}
	panic("journalKeyIndex: not one key")
}

// Wrote reports whether the file wrote key (enabled, quota, keep,
// max_file, exclude or big_deletion).
func (j Journal) Wrote(key string) bool {
	i := slices.Index(journalKeyNames[:], key)
	return i >= 0 && j.set&(1<<i) != 0
}

func (j *Journal) wrote(k journalKeys, pos Pos) {
	j.set |= k
	j.at[journalKeyIndex(k)] = pos
}

func (j Journal) has(k journalKeys) bool { return j.set&k != 0 }

func (j Journal) posOf(k journalKeys) Pos {
	if p := j.at[journalKeyIndex(k)]; p.Line > 0 {
		return p
	}
	return j.Pos
}

// The journal's defaults (JOURNAL.md, issue 21).
const (
	DefaultJournalQuota       = 300 << 20
	DefaultJournalKeep        = 7 * 24 * time.Hour
	DefaultJournalMaxFile     = 64 << 20
	DefaultJournalBigDeletion = 50
)

// DefaultJournalExclude are the directories not journaled by default:
// build outputs, installed dependencies and the language tools' caches,
// which their tools make again.
func DefaultJournalExclude() []string {
	return []string{"node_modules", "target", ".venv", "venv", "__pycache__", "dist", ".next", ".nuxt",
		".gradle", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".parcel-cache", ".turbo"}
}

// DefaultJournal is the journal of a policy that has no journal: section.
func DefaultJournal() Journal {
	return Journal{On: true, Quota: DefaultJournalQuota, Keep: DefaultJournalKeep, MaxFile: DefaultJournalMaxFile,
		Exclude: DefaultJournalExclude(), BigDeletion: DefaultJournalBigDeletion}
}

// Excluded reports whether rel, a slash-separated path relative to the
// workspace, lies in a directory the journal does not keep: one of its
// directory elements (not its last, unless dir says rel is itself a
// directory) is named in Exclude.
func (j Journal) Excluded(rel string, dir bool) bool {
	elems := strings.Split(strings.Trim(rel, "/"), "/")
	if !dir {
		elems = elems[:len(elems)-1]
	}
	for _, e := range elems {
		if slices.Contains(j.Exclude, e) {
			return true
		}
	}
	return false
}

// Narrowed is j made stricter by what by writes, as a lower layer or the
// --policy file may: turned off, a smaller big_deletion, an exclude list
// that keeps only the names both list. Quota, keep and max_file stay j's.
func (j Journal) Narrowed(by Journal) Journal {
	out := j
	out.Exclude = slices.Clone(j.Exclude)
	if by.has(jOn) && !by.On {
		out.On = false
	}
	if by.has(jBigDeletion) && by.BigDeletion < out.BigDeletion {
		out.BigDeletion = by.BigDeletion
	}
	if by.has(jExclude) {
		out.Exclude = slices.DeleteFunc(out.Exclude, func(e string) bool { return !slices.Contains(by.Exclude, e) })
	}
	return out
}

// stackJournal is the journal of a stack (see Journal).
func stackJournal(layers []*Policy) Journal {
	out := DefaultJournal()
	var system, user *Policy
	for _, l := range layers {
		switch l.Layer {
		case LayerSystem:
			system = l
		case LayerUser:
			user = l
		}
	}
	// Quota, keep and max_file: the system's, else the user's.
	for _, k := range []journalKeys{jQuota, jKeep, jMaxFile} {
		var from *Journal
		switch {
		case system != nil && system.Journal.has(k):
			from = &system.Journal
		case user != nil && user.Journal.has(k):
			from = &user.Journal
		default:
			continue
		}
		switch k {
		case jQuota:
			out.Quota = from.Quota
		case jKeep:
			out.Keep = from.Keep
		case jMaxFile:
			out.MaxFile = from.MaxFile
		}
	}
	bigSet, excludeSet := false, false
	for _, l := range layers {
		j := l.Journal
		if j.has(jOn) && !j.On {
			out.On = false
		}
		if j.has(jBigDeletion) && (!bigSet || j.BigDeletion < out.BigDeletion) {
			out.BigDeletion, bigSet = j.BigDeletion, true
		}
		switch {
		case !j.has(jExclude):
		case !excludeSet && l.Layer != LayerProject:
			out.Exclude = slices.Clone(j.Exclude)
		default:
			out.Exclude = slices.DeleteFunc(out.Exclude, func(e string) bool { return !slices.Contains(j.Exclude, e) })
		}
		excludeSet = excludeSet || j.has(jExclude)
	}
	return out
}

// journalLoosening reports what lower writes in its journal: section that
// the layers above (upper) keep it from: turning the journal on where
// they turn it off, a larger big_deletion, a directory they journal
// excluded; and, for a project, quota, keep and max_file, which it
// cannot choose. Against the system policy (system set) only what it
// writes binds.
func journalLoosening(upper, lower *Policy, system bool, what string) []Diagnostic {
	var out []Diagnostic
	warn := func(pos Pos, msg string) {
		out = append(out, Diagnostic{Pos: pos, Severity: SeverityWarning, Msg: msg})
	}
	uj, lj := upper.Journal, lower.Journal
	binds := func(k journalKeys) bool { return !system || uj.has(k) }
	if lj.has(jOn) && lj.On && !uj.On && binds(jOn) {
		warn(lj.posOf(jOn), "journal enabled: true cannot turn on the journal the "+what+" turns off; it stays off")
	}
	if lj.has(jBigDeletion) && lj.BigDeletion > uj.BigDeletion && binds(jBigDeletion) {
		warn(lj.posOf(jBigDeletion), fmt.Sprintf("journal big_deletion %d is larger than %d in the %s; the smaller applies", lj.BigDeletion, uj.BigDeletion, what))
	}
	if lj.has(jExclude) && binds(jExclude) {
		for _, e := range lj.Exclude {
			if !slices.Contains(uj.Exclude, e) {
				warn(lj.posOf(jExclude), fmt.Sprintf("journal exclude %q is not excluded by the %s, which it cannot add to: the journal keeps it", e, what))
			}
		}
	}
	if !system {
		for _, k := range []journalKeys{jQuota, jKeep, jMaxFile} {
			if lj.has(k) {
				warn(lj.posOf(k), fmt.Sprintf("journal %s is ignored: a project policy cannot choose how much the journal keeps; set it in your user policy", journalKeyNames[journalKeyIndex(k)]))
			}
		}
	} else {
		for _, k := range []journalKeys{jQuota, jKeep, jMaxFile} {
			if lj.has(k) && uj.has(k) {
				warn(lj.posOf(k), fmt.Sprintf("journal %s is set by the %s, whose value applies", journalKeyNames[journalKeyIndex(k)], what))
			}
		}
	}
	return out
}

// journal reads the journal: section.
func (d *decoder) journal(key, n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	j := DefaultJournal()
	j.Pos = d.pos(key)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "enabled":
			b, err := d.boolean(v)
			if err != nil {
				return err
			}
			j.On = b
			j.wrote(jOn, d.pos(v))
		case "quota":
			q, err := d.size(v, "quota", 1<<20, 1<<50)
			if err != nil {
				return err
			}
			j.Quota = q
			j.wrote(jQuota, d.pos(v))
		case "max_file":
			m, err := d.size(v, "max_file", 1<<10, 1<<40)
			if err != nil {
				return err
			}
			j.MaxFile = m
			j.wrote(jMaxFile, d.pos(v))
		case "keep":
			s, err := d.str(v)
			if err != nil {
				return err
			}
			dur, perr := parseDuration(s)
			if perr != nil || dur < time.Hour || dur > 365*24*time.Hour {
				return d.errAt(v, fmt.Sprintf("journal keep %q must be a duration between 1h and 365d (e.g. 7d, 48h)", s))
			}
			j.Keep = dur
			j.wrote(jKeep, d.pos(v))
		case "big_deletion":
			b, err := d.integer(v, 1, 1_000_000)
			if err != nil {
				return err
			}
			j.BigDeletion = int(b)
			j.wrote(jBigDeletion, d.pos(v))
		case "exclude":
			ex, err := d.journalExclude(v)
			if err != nil {
				return err
			}
			j.Exclude = ex
			j.wrote(jExclude, d.pos(v))
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in journal (want %s)", k.Value, strings.Join(journalKeyNames[:], ", ")))
		}
	}
	p.Journal = j
	return nil
}

// journalExclude reads a list of directory names.
func (d *decoder) journalExclude(n *yaml.Node) ([]string, *Error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return []string{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "journal exclude must be a list of directory names, e.g. [node_modules, target]")
	}
	out := []string{}
	for _, e := range n.Content {
		s, err := d.strict(e)
		if err != nil {
			return nil, err
		}
		switch {
		case s == "" || s == "." || s == "..":
			return nil, d.errAt(e, fmt.Sprintf("journal exclude %q is not a directory name", s))
		case strings.ContainsAny(s, "/\x00"):
			return nil, d.errAt(e, fmt.Sprintf("journal exclude %q must be a directory name, without \"/\": it excludes every directory of that name below the workspace", s))
		case strings.ContainsAny(s, "*?["):
			return nil, d.errAt(e, fmt.Sprintf("journal exclude %q must be a directory name, not a pattern", s))
		case s == ".git":
			return nil, d.errAt(e, "journal exclude \".git\": the repository is always journaled (a command that damages it is what undo is for)")
		case slices.Contains(out, s):
			return nil, d.errAt(e, fmt.Sprintf("journal exclude %q is listed twice", s))
		}
		out = append(out, s)
	}
	return out, nil
}

// sizeUnits are the suffixes a size may carry.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// size reads a number of bytes: a decimal integer with an optional unit
// (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), from lo to hi.
func (d *decoder) size(n *yaml.Node, key string, lo, hi int64) (int64, *Error) {
	s, err := d.str(n)
	if err != nil {
		return 0, err
	}
	v, ok := parseSize(s)
	if !ok {
		return 0, d.errAt(n, fmt.Sprintf("journal %s %q must be a size such as 300MiB, 2GiB or 500MB", key, s))
	}
	if v < lo || v > hi {
		return 0, d.errAt(n, fmt.Sprintf("journal %s %s is out of range (%s to %s)", key, s, FormatSize(lo), FormatSize(hi)))
	}
	return v, nil
}

// parseSize reads a size as size does.
func parseSize(s string) (int64, bool) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	if !isDecimalInt(num) || strings.HasPrefix(num, "-") {
		return 0, false
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v > math.MaxInt64/mult {
		return 0, false
	}
	return v * mult, true
}

// FormatSize writes a size in the largest binary unit that divides it.
func FormatSize(v int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.mult && v%u.mult == 0 {
			return strconv.FormatInt(v/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(v, 10) + "B"
}

// journalNode writes the keys the journal: section wrote, in canonical
// form (Format).
func journalNode(j Journal) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if j.has(jOn) {
		m.Content = append(m.Content, plain("enabled"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(j.On)})
	}
	if j.has(jQuota) {
		m.Content = append(m.Content, plain("quota"), plain(FormatSize(j.Quota)))
	}
	if j.has(jKeep) {
		m.Content = append(m.Content, plain("keep"), plain(formatDuration(j.Keep)))
	}
	if j.has(jMaxFile) {
		m.Content = append(m.Content, plain("max_file"), plain(FormatSize(j.MaxFile)))
	}
	if j.has(jBigDeletion) {
		m.Content = append(m.Content, plain("big_deletion"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(j.BigDeletion)})
	}
	if j.has(jExclude) {
		l := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, e := range j.Exclude {
			l.Content = append(l.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e, Style: yaml.DoubleQuotedStyle})
		}
		m.Content = append(m.Content, plain("exclude"), l)
	}
	return m
}

// undoes reports whether an undoable rule that matched a command stands
// aside for the journal: the journal is on for the request, and keeps
// everything the command does besides reading: each write names a path
// known before it runs, in the workspace and outside the directories
// the journal excludes, and the command does nothing else but read,
// parse and read the clock (no code run, no network).
func (p *Policy) undoes(r *Rule, in *Input, cl *classify.Classification) bool {
	if !r.Undoable || !in.Journaled || in.Workspace == "" || r.Action == Allow {
		return false
	}
	return JournalKeeps(cl, in.Workspace, p.Journal)
}

// JournalKeeps reports whether the journal j of workspace ws keeps
// everything a classified command changes: it only reads, parses, reads
// the clock and writes, and every write is to a path known before it
// runs, in the workspace, outside the directories j excludes.
func JournalKeeps(cl *classify.Classification, ws string, j Journal) bool {
	if cl == nil {
		return false
	}
	writes := false
	for _, a := range cl.Accesses {
		switch a.Capability {
		case classify.FSRead, classify.ParseLocal, classify.TimeRead:
		case classify.FSWrite:
			if a.Dynamic || a.Target == "" || !classify.Within(ws, a.Target) {
				return false
			}
			rel, err := filepath.Rel(ws, a.Target)
			if err != nil || j.Excluded(filepath.ToSlash(rel), true) {
				return false
			}
			writes = true
		default:
			return false
		}
	}
	return writes
}

// combineUndoable is combine for an undoable rule the journal stands
// for: it asks below level full and allows at full, the level's table
// still denying what it denies.
func combineUndoable(in *Input, cl *classify.Classification, r *Rule, layer Layer, cell Cell) (Outcome, Decided, string) {
	if cell == Denied {
		return Deny, ByTable, "level " + in.Level.String() + " does not permit " + deniedCaps(in.Level, cl)
	}
	if in.Level < Full {
		return Ask, ByRule, reasonLabel(r, layer) + undoableReason(Ask)
	}
	return Allow, ByRule, reasonLabel(r, layer) + undoableReason(Allow)
}

// undoableReason follows an undoable rule's label in a reason.
func undoableReason(o Outcome) string {
	if o == Allow {
		return " lets it run at level full: the journal keeps what it changes, and `mnemos undo --last` brings it back"
	}
	return " asks first: the journal keeps what it changes (`mnemos undo --last` brings it back), and below level full a person looks first"
}
