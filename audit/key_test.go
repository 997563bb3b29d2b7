package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rechain plays an attacker without the key: after lines[from] was
// changed, it recomputes every later line's prev and the anchor's count
// and last hash, which take no key, and keeps every MAC as it was, since
// it cannot make new ones.
func rechain(t *testing.T, path string, lines [][]byte, from int) {
	t.Helper()
	for i := from + 1; i < len(lines); i++ {
		sum := hashLine(lines[i-1])
		j := bytes.Index(lines[i], []byte(`"prev":"`))
		if j < 0 || j+8+64 > len(lines[i]) {
			continue
		}
		l := bytes.Clone(lines[i])
		copy(l[j+8:], hex.EncodeToString(sum[:]))
		lines[i] = l
	}
	writeLines(t, path, lines)
	raw, err := os.ReadFile(path + ".anchor")
	if err != nil {
		t.Fatal(err)
	}
	var a anchor
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	sum := hashLine(lines[len(lines)-1])
	a.Count, a.LastHash = len(lines), hex.EncodeToString(sum[:])
	if _, err := writeAnchor(path+".anchor", a, false); err != nil {
		t.Fatal(err)
	}
}

// mustFail verifies path and fails the test if the log passes.
func mustFail(t *testing.T, path string, o VerifyOptions, what string) Report {
	t.Helper()
	rep, err := VerifyWith(path, o)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if rep.OK || rep.Problem == "" {
		t.Fatalf("%s: Verify passed: %+v", what, rep)
	}
	return rep
}

func mustPass(t *testing.T, path string, o VerifyOptions) Report {
	t.Helper()
	rep, err := VerifyWith(path, o)
	if err != nil || !rep.OK {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	return rep
}

func TestSecurityFullRewriteWithoutKeyFails(t *testing.T) {
	const n = 8
	tests := []struct {
		name     string
		rewrite  func(t *testing.T, path string, lines [][]byte)
		firstBad int
		problem  string
	}{
		{"unkeyed lines, recomputed hashes and anchor", func(t *testing.T, path string, _ [][]byte) {
			forged := legacyLines(t, 1, emptyHash, n, "forged")
			writeLines(t, path, forged)
			sum := hashLine(forged[n-1])
			if _, err := writeAnchor(path+".anchor", anchor{Count: n, LastHash: hex.EncodeToString(sum[:])}, false); err != nil {
				t.Fatal(err)
			}
		}, 1, "no line is keyed, yet the key"},
		{"new content under the old MACs, recomputed hashes and anchor", func(t *testing.T, path string, lines [][]byte) {
			for i := range lines {
				lines[i] = bytes.Replace(lines[i], []byte(`"echo"`), []byte(`"true"`), 1)
			}
			rechain(t, path, lines, 0)
		}, 1, "line 1 was changed without the key: its MAC does not match, nor does"},
		{"one line changed, every later hash and the anchor recomputed", func(t *testing.T, path string, lines [][]byte) {
			lines[3] = bytes.Replace(lines[3], []byte(`"n":4`), []byte(`"n":7`), 1)
			rechain(t, path, lines, 3)
		}, 4, "line 4 was changed without the key: its MAC does not match"},
		{"last line changed, anchor hash recomputed", func(t *testing.T, path string, lines [][]byte) {
			lines[n-1] = bytes.Replace(lines[n-1], []byte(`"echo"`), []byte(`"rm"`), 1)
			rechain(t, path, lines, n-1)
		}, n, "line 8 was edited: its MAC does not match"},
		{"tail cut, anchor recomputed without the key", func(t *testing.T, path string, lines [][]byte) {
			rechain(t, path, lines[:5], 5)
		}, 0, "the MAC of the anchor"},
		{"anchor stripped of its MAC", func(t *testing.T, path string, lines [][]byte) {
			sum := hashLine(lines[n-1])
			if _, err := writeAnchor(path+".anchor", anchor{Count: n, LastHash: hex.EncodeToString(sum[:])}, false); err != nil {
				t.Fatal(err)
			}
		}, 0, "is not keyed, but the log is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, lines := writeLog(t, t.TempDir(), n, "")
			tt.rewrite(t, path, lines)
			rep := mustFail(t, path, VerifyOptions{}, "rewritten log")
			if rep.FirstBad != tt.firstBad || !strings.Contains(rep.Problem, tt.problem) {
				t.Errorf("Verify = %+v\nwant FirstBad %d, problem containing %q", rep, tt.firstBad, tt.problem)
			}
			// Nor does mnemos seal it.
			if err := Open(path, Options{}).Append(t.Context(), KindRunStarted); !errors.Is(err, ErrIntegrity) {
				t.Errorf("Append after the rewrite = %v, want ErrIntegrity", err)
			}
		})
	}
}

func TestSecurityBitFlipsAreDetected(t *testing.T) {
	const n = 5
	path, lines := writeLog(t, t.TempDir(), n, "")
	anc, err := os.ReadFile(path + ".anchor")
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		writeLines(t, path, lines)
		if err := os.WriteFile(path+".anchor", anc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		line    int // 0-based
		rechain bool
	}{{2, false}, {2, true}, {n - 1, true}} {
		for bit := range 8 * len(lines[c.line]) {
			flipped := make([][]byte, n)
			copy(flipped, lines)
			flipped[c.line] = bytes.Clone(lines[c.line])
			flipped[c.line][bit/8] ^= 1 << (bit % 8)
			if c.rechain {
				rechain(t, path, flipped, c.line)
			} else {
				writeLines(t, path, flipped)
			}
			what := fmt.Sprintf("line %d, bit %d flipped (rechained: %v)", c.line+1, bit, c.rechain)
			if rep := mustFail(t, path, VerifyOptions{}, what); rep.FirstBad != c.line+1 {
				t.Errorf("%s: Verify names line %d: %s", what, rep.FirstBad, rep.Problem)
			}
			restore()
		}
	}

	rep := mustPass(t, path, VerifyOptions{})
	head, ok := rep.Head()
	if !ok {
		t.Fatalf("no head: %+v", rep)
	}
	mustPass(t, path, VerifyOptions{Head: &head})
	text := []byte(head.String())
	for bit := range 8 * len(text) {
		b := bytes.Clone(text)
		b[bit/8] ^= 1 << (bit % 8)
		h, err := ParseHead(string(b))
		if err != nil {
			continue // refused as it is read: detected
		}
		mustFail(t, path, VerifyOptions{Head: &h}, fmt.Sprintf("head %q", b))
	}
}

func TestSecurityDowngradeFails(t *testing.T) {
	dir := t.TempDir()
	path, lines := writeLog(t, dir, 4, "")
	// An unkeyed line after the keyed ones, chained, with an anchor
	// recomputed as mnemos wrote anchors before the key.
	lines = append(lines, forge(5, lines[3]))
	writeLines(t, path, lines)
	sum := hashLine(lines[4])
	if _, err := writeAnchor(path+".anchor", anchor{Count: 5, LastHash: hex.EncodeToString(sum[:])}, false); err != nil {
		t.Fatal(err)
	}
	rep := mustFail(t, path, VerifyOptions{}, "downgraded log")
	if rep.FirstBad != 5 || !strings.Contains(rep.Problem, "line 5 is not keyed, but line 4 before it is") {
		t.Errorf("Verify = %+v", rep)
	}
	if err := Open(path, Options{}).Append(t.Context(), KindRunStarted); !errors.Is(err, ErrIntegrity) {
		t.Errorf("Append after a downgrade = %v, want ErrIntegrity", err)
	}

	// The same after an unkeyed prefix: keyed lines are never followed by
	// unkeyed ones.
	path, _ = writeLegacyLog(t, t.TempDir(), 3, "")
	l := Open(path, Options{})
	for range 2 {
		if err := l.Append(t.Context(), KindRunStarted); err != nil {
			t.Fatal(err)
		}
	}
	lines = readLines(t, path)
	lines = append(lines, forge(6, lines[4]))
	rechain(t, path, lines, 5)
	rep = mustFail(t, path, VerifyOptions{}, "downgraded log after an unkeyed prefix")
	if rep.FirstBad != 6 || !strings.Contains(rep.Problem, "not keyed") {
		t.Errorf("Verify = %+v", rep)
	}
}

func TestSecurityUnkeyedLogIsReportedAsUnkeyed(t *testing.T) {
	dir := t.TempDir()
	path, lines := writeLegacyLog(t, dir, 5, "")
	rep := mustPass(t, path, VerifyOptions{})
	if rep.Keyed != 0 || rep.Unkeyed != 5 || rep.LastMAC != "" {
		t.Errorf("old log: %+v, want 5 unkeyed lines and no MAC", rep)
	}
	if _, ok := rep.Head(); ok {
		t.Error("an unkeyed log has a head")
	}
	// Its unkeyed part stays checked by hash.
	edited := bytes.Replace(lines[1], []byte(`"n":2`), []byte(`"n":3`), 1)
	writeLines(t, path, [][]byte{lines[0], edited, lines[2], lines[3], lines[4]})
	mustFail(t, path, VerifyOptions{}, "old log edited")
	writeLines(t, path, lines)

	// The first append creates the key; the old lines stay unkeyed.
	l := Open(path, Options{})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil {
		t.Fatal(err)
	}
	rep = mustPass(t, path, VerifyOptions{})
	if rep.Keyed != 1 || rep.Unkeyed != 5 || rep.LastMAC == "" {
		t.Errorf("after one append: %+v, want 5 unkeyed lines then 1 keyed", rep)
	}
	// The keyed line pins the unkeyed ones: rewriting one of them means
	// recomputing the keyed line's prev, which its MAC covers.
	all := readLines(t, path)
	all[1] = edited
	rechain(t, path, all, 1)
	rep = mustFail(t, path, VerifyOptions{}, "unkeyed prefix rewritten under a keyed line")
	if rep.FirstBad != 6 || !strings.Contains(rep.Problem, "MAC") {
		t.Errorf("Verify = %+v, want line 6's MAC", rep)
	}
}

func TestSecurityVerifyHead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	appendN := func(n int) {
		for range n {
			if err := l.Append(t.Context(), KindRunStarted); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(4)
	anchor4, err := os.ReadFile(path + ".anchor")
	if err != nil {
		t.Fatal(err)
	}
	appendN(1)
	head, ok := mustPass(t, path, VerifyOptions{}).Head()
	if !ok || head.Count != 5 {
		t.Fatalf("head %+v", head)
	}

	// The log goes on: it still extends the head.
	appendN(3)
	mustPass(t, path, VerifyOptions{Head: &head})
	all := readLines(t, path)

	// Cut back to 4 lines with the anchor kept from then: the anchor
	// beside the log is fooled, the head is not.
	writeLines(t, path, all[:4])
	if err := os.WriteFile(path+".anchor", anchor4, 0o600); err != nil {
		t.Fatal(err)
	}
	mustPass(t, path, VerifyOptions{})
	rep := mustFail(t, path, VerifyOptions{Head: &head}, "cut log")
	if rep.FirstBad != 5 || !strings.Contains(rep.Problem, "the log ends at line 4 but the head records 5 lines") {
		t.Errorf("Verify = %+v", rep)
	}

	// Replaced by another log under the same key, as long as the head.
	other := filepath.Join(dir, "other.jsonl")
	lo := Open(other, Options{})
	defer lo.Close()
	for range 8 {
		if err := lo.Append(t.Context(), KindRunFinished); err != nil {
			t.Fatal(err)
		}
	}
	mustPass(t, other, VerifyOptions{})
	rep = mustFail(t, other, VerifyOptions{Head: &head}, "replaced log")
	if rep.FirstBad != 5 || !strings.Contains(rep.Problem, "line 5 does not carry the head's MAC") {
		t.Errorf("Verify = %+v", rep)
	}
}

func TestSecurityAppendRefusesWithoutKey(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeLog(t, dir, 3, "")
	keyPath := filepath.Join(dir, KeyFile)
	if err := os.Rename(keyPath, keyPath+".lost"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	err := Open(path, Options{}).Append(t.Context(), KindRunStarted)
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "the key "+keyPath+" is missing") {
		t.Fatalf("Append without the key = %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the refused append changed the log")
	}
	if _, err := os.Stat(keyPath); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a new key was made for a keyed log")
	}
	if _, err := Verify(path, ""); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "is missing, but line 1 is keyed") {
		t.Errorf("Verify without the key = %v, want ErrKey", err)
	}

	// A file that is not a key.
	if err := os.WriteFile(keyPath, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Open(path, Options{}).Append(t.Context(), KindRunStarted); err == nil || !strings.Contains(err.Error(), "does not hold a key") {
		t.Errorf("Append with a bad key = %v", err)
	}
	if _, err := Verify(path, ""); !errors.Is(err, ErrKey) {
		t.Errorf("Verify with a bad key = %v, want ErrKey", err)
	}

	// A key it cannot read.
	if err := os.Rename(keyPath+".lost", keyPath); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		return // root reads it anyway
	}
	if err := os.Chmod(keyPath, 0); err != nil {
		t.Fatal(err)
	}
	if err := Open(path, Options{}).Append(t.Context(), KindRunStarted); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Append with an unreadable key = %v", err)
	}
	if _, err := Verify(path, ""); !errors.Is(err, ErrKey) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Verify with an unreadable key = %v", err)
	}
}

func TestAppendReadsTheKeyOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	keyPath := filepath.Join(dir, KeyFile)
	l := Open(path, Options{})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	// The Log keeps the key it read: a key file changed under it is not
	// read again.
	if err := os.WriteFile(keyPath, append(bytes.Repeat([]byte("ab"), KeySize), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	mustFail(t, path, VerifyOptions{}, "log checked with another key")
	if err := os.WriteFile(keyPath, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := mustPass(t, path, VerifyOptions{}); rep.Keyed != 2 {
		t.Errorf("Verify = %+v", rep)
	}
}

func TestKeyCreatedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", KeyFile)
	const racers = 16
	keys := make([][]byte, racers)
	created := make([]bool, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			keys[i], created[i], errs[i] = createKey(path, bytes.NewReader(bytes.Repeat([]byte{byte(i)}, KeySize)))
		})
	}
	wg.Wait()
	n := 0
	for i := range racers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("racer %d uses another key", i)
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d racers created the key, want 1", n)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	raw, _ := os.ReadFile(path)
	if len(raw) != 2*KeySize+1 || raw[len(raw)-1] != '\n' {
		t.Errorf("key file holds %q", raw)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the key's directory holds %d entries, want the key alone", len(entries))
	}
	if _, _, err := createKey(path+".2", strings.NewReader("short")); err == nil {
		t.Error("a short random source made a key")
	}
}

func TestEnsureKey(t *testing.T) {
	// A new log: the key alone, no log yet.
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{})
	if created, err := l.EnsureKey(t.Context()); err != nil || !created {
		t.Fatalf("EnsureKey = %v, %v", created, err)
	}
	if created, err := l.EnsureKey(t.Context()); err != nil || created {
		t.Fatalf("second EnsureKey = %v, %v", created, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Error("EnsureKey created the log")
	}
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	if rep := mustPass(t, path, VerifyOptions{}); rep.Keyed != 1 {
		t.Errorf("Verify = %+v", rep)
	}

	// An old log: the keyed part starts at once.
	path, _ = writeLegacyLog(t, t.TempDir(), 3, "")
	l = Open(path, Options{})
	defer l.Close()
	if created, err := l.EnsureKey(t.Context()); err != nil || !created {
		t.Fatalf("EnsureKey on an old log = %v, %v", created, err)
	}
	rep := mustPass(t, path, VerifyOptions{})
	if rep.Unkeyed != 3 || rep.Keyed != 1 {
		t.Errorf("Verify = %+v, want 3 unkeyed lines and the keyed event", rep)
	}
	recs, err := l.Tail(1)
	if err != nil || len(recs) != 1 || recs[0].Kind != KindAuditKeyed || recs[0].Attrs["unkeyed_lines"] != json.Number("3") {
		t.Fatalf("last record = %+v, %v", recs, err)
	}
	if _, ok := recs[0].Attrs["mac"]; ok {
		t.Error("Attrs carries the MAC")
	}

	// A keyed log whose key is gone gets no new one.
	if err := os.Remove(l.KeyPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}).EnsureKey(t.Context()); !errors.Is(err, ErrIntegrity) {
		t.Errorf("EnsureKey on a keyed log without its key = %v", err)
	}
	if _, err := os.Stat(l.KeyPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Error("EnsureKey made a new key for a keyed log")
	}
}

func TestParseHead(t *testing.T) {
	mac := strings.Repeat("0a", 32)
	for _, tt := range []struct {
		in   string
		want Head
		err  string
	}{
		{"mnemos-audit-head 12 " + mac, Head{12, mac}, ""},
		{"  mnemos-audit-head 12 " + mac + "\n", Head{12, mac}, ""},
		{"12 " + mac, Head{12, mac}, ""},
		{"mnemos-audit-head 012 " + mac, Head{}, "not a positive number"},
		{"mnemos-audit-head 0 " + mac, Head{}, "not a positive number"},
		{"mnemos-audit-head +12 " + mac, Head{}, "not a number"},
		{"mnemos-audit-head 99999999999999999999 " + mac, Head{}, "too large"},
		{"mnemos-audit-head 12 " + strings.ToUpper(mac), Head{}, "lower-case hex"},
		{"mnemos-audit-head 12 " + mac[:62], Head{}, "lower-case hex"},
		{"mnemos-audit-hed 12 " + mac, Head{}, "want mnemos-audit-head COUNT MAC"},
		{"mnemos-audit-head 12", Head{}, "not a number"},
		{"mnemos-audit-head 12 " + mac + " x", Head{}, "want mnemos-audit-head COUNT MAC"},
		{"", Head{}, "want"},
	} {
		h, err := ParseHead(tt.in)
		if tt.err == "" {
			if err != nil || h != tt.want {
				t.Errorf("ParseHead(%q) = %+v, %v", tt.in, h, err)
			}
			if h.String() != "mnemos-audit-head 12 "+mac {
				t.Errorf("String() = %q", h.String())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseHead(%q) error = %v, want %q", tt.in, err, tt.err)
		}
	}
}
