package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestOpenIsLazy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l := Open(filepath.Join(dir, "audit.jsonl"), Options{})
	recs, err := l.Tail(10)
	if err != nil || recs != nil {
		t.Fatalf("Tail on a missing log = %v, %v", recs, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open created something: %v", err)
	}
}

func TestAppendCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mnemos")
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{Sync: true})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{dir: fs.ModeDir | 0o700, path: 0o600, path + ".anchor": 0o600, filepath.Join(dir, KeyFile): 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if l.Path() != path || l.AnchorPath() != path+".anchor" || l.KeyPath() != filepath.Join(dir, KeyFile) {
		t.Errorf("paths %q %q %q", l.Path(), l.AnchorPath(), l.KeyPath())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("directory holds %d entries, want the log, its anchor and its key", len(entries))
	}
}

func TestAppendLineShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	rome := time.FixedZone("CET", 3600)
	l := Open(path, Options{Clock: func() time.Time { return time.Date(2026, 3, 1, 11, 0, 0, 5e8, rome) }, Rand: fixedKey()})
	defer l.Close()
	err := l.Append(t.Context(), KindRunFinished,
		slog.Int("exit", 0),
		slog.Duration("duration", 1500*time.Millisecond),
		slog.Group("sandbox", slog.Bool("enforced", true), slog.Int("abi", 7)),
		slog.Group("empty"),
		slog.Any("argv", []string{"go", "test"}),
		slog.Float64("score", 0.25),
		slog.Any("nothing", nil),
		slog.String("note", "<&> \"q\" \n é"),
	)
	if err != nil {
		t.Fatal(err)
	}
	signed := `{"time":"2026-03-01T10:00:00.5Z","level":"INFO","msg":"run.finished","seq":1,"prev":"` + emptyHash + `",` +
		`"exit":0,"duration":1500000000,"sandbox":{"enforced":true,"abi":7},"argv":["go","test"],"score":0.25,"nothing":null,` +
		`"note":"<&> \"q\" \n é"`
	h := hmac.New(sha256.New, bytes.Repeat([]byte{'k'}, KeySize))
	h.Write([]byte("mnemos-audit-line v1\n" + signed))
	want := signed + `,"mac":"` + hex.EncodeToString(h.Sum(nil)) + `"}`
	lines := readLines(t, path)
	if len(lines) != 1 || string(lines[0]) != want {
		t.Fatalf("line\n got %s\nwant %s", lines[0], want)
	}
	if !json.Valid(lines[0]) {
		t.Error("line is not valid JSON")
	}
}

// fixedKey is a key source that always gives the same key, for output a
// test can spell out.
func fixedKey() io.Reader { return bytes.NewReader(bytes.Repeat([]byte{'k'}, KeySize)) }

func TestAppendChainsLines(t *testing.T) {
	path, lines := writeLog(t, t.TempDir(), 3, "")
	recs, err := Open(path, Options{}).Tail(0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("Tail = %v, %v", recs, err)
	}
	for i, r := range recs {
		if r.Seq != i+1 || r.Kind != KindPolicyDecision || string(r.Raw) != string(lines[i]) {
			t.Errorf("record %d = %+v", i, r)
		}
		want := emptyHash
		if i > 0 {
			sum := hashLine(lines[i-1])
			want = fmt.Sprintf("%x", sum)
		}
		if !strings.Contains(string(r.Raw), `"prev":"`+want+`"`) {
			t.Errorf("line %d does not carry the hash of the line before", i+1)
		}
	}
}

func TestAppendRejects(t *testing.T) {
	tests := []struct {
		name  string
		kind  string
		attrs []slog.Attr
		want  string
	}{
		{"reserved level", KindPolicyDecision, []slog.Attr{slog.String("level", "supervised")}, `"level" is reserved`},
		{"reserved seq", KindPolicyDecision, []slog.Attr{slog.Int("seq", 3)}, `"seq" is reserved`},
		{"reserved through inline group", KindPolicyDecision, []slog.Attr{slog.Group("", slog.String("msg", "x"))}, `"msg" is reserved`},
		{"duplicate key", KindPolicyDecision, []slog.Attr{slog.Int("a", 1), slog.Int("a", 2)}, `duplicate attribute key "a"`},
		{"duplicate in group", KindPolicyDecision, []slog.Attr{slog.Group("g", slog.Int("a", 1), slog.Int("a", 2))}, `duplicate`},
		{"empty key", KindPolicyDecision, []slog.Attr{slog.Int("", 1)}, "empty key"},
		{"unencodable", KindPolicyDecision, []slog.Attr{slog.Any("ch", make(chan int))}, "unsupported type"},
		{"no kind", "", nil, "bad event kind"},
		{"kind without area", "decision", nil, "want area.event"},
		{"kind with space", "policy decision", nil, "bad event kind"},
		{"kind upper case", "Policy.Decision", nil, "bad event kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			err := Open(path, Options{}).Append(t.Context(), tt.kind, tt.attrs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Append error = %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused event created the log")
			}
		})
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if err := Open(filepath.Join(t.TempDir(), "a"), Options{}).Append(t.Context(), KindRunStarted, slog.Any("c", cyclic)); err == nil {
		t.Error("cyclic map accepted")
	}
}

func TestAppendAcceptsKinds(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "audit.jsonl"), Options{})
	defer l.Close()
	for _, k := range []string{KindPolicyDecision, KindApprovalRequested, KindApprovalApproved, KindApprovalDenied,
		KindApprovalExpired, KindGrantRecorded, KindGrantRevoked, KindRunStarted, KindRunFinished, KindRateLimited,
		KindChannelDelivered, KindChannelFailed,
		KindExtensionPrefix + "admitted", "policy.rule_added", "extension.grant-requested"} {
		if err := l.Append(t.Context(), k); err != nil {
			t.Errorf("Append(%q) = %v", k, err)
		}
	}
}

func TestAppendCutsLongValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	long := strings.Repeat("é", MaxValue) // two bytes each
	if err := l.Append(t.Context(), KindRunStarted, slog.String("script", long)); err != nil {
		t.Fatal(err)
	}
	recs, err := l.Tail(1)
	if err != nil {
		t.Fatal(err)
	}
	got := recs[0].Attrs["script"].(string)
	if !strings.HasSuffix(got, "…["+strconv.Itoa(MaxValue)+" bytes cut]") || len(got) > MaxValue+32 {
		t.Errorf("long value written as %d bytes ending %q", len(got), got[len(got)-24:])
	}
	many := make([]slog.Attr, 20)
	for i := range many {
		many[i] = slog.String(fmt.Sprint("k", i), long)
	}
	if err := l.Append(t.Context(), KindRunStarted, many...); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("oversized event: %v", err)
	}
	if rep, err := Verify(path, ""); err != nil || !rep.OK || rep.Lines != 1 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{Clock: fixedClock()})
	defer l.Close()
	// Lines longer than Tail's first read window.
	pad := strings.Repeat("x", 40<<10)
	for i := range 5 {
		if err := l.Append(t.Context(), KindRunStarted, slog.Int("i", i+1), slog.String("pad", pad)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ n, first, count int }{{2, 4, 2}, {1, 5, 1}, {0, 1, 5}, {-1, 1, 5}, {9, 1, 5}} {
		recs, err := l.Tail(tt.n)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != tt.count || recs[0].Seq != tt.first {
			t.Fatalf("Tail(%d): %d records from seq %d, want %d from %d", tt.n, len(recs), recs[0].Seq, tt.count, tt.first)
		}
		for j, r := range recs {
			if r.Attrs["i"] != json.Number(strconv.Itoa(tt.first+j)) || r.Kind != KindRunStarted || r.Time.IsZero() {
				t.Errorf("Tail(%d)[%d] = seq %d kind %q attrs[i] %v", tt.n, j, r.Seq, r.Kind, r.Attrs["i"])
			}
			if _, ok := r.Attrs["prev"]; ok {
				t.Error("Attrs carries the header")
			}
		}
	}
}

func TestSecurityAppendNeverWritesSecrets(t *testing.T) {
	const pw = "hunter2"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	type login struct {
		User     string   `json:"user"`
		Password string   `json:"password"`
		Argv     []string `json:"argv"`
	}
	attrs := []slog.Attr{
		slog.String("cmd", "mysql --password="+pw+" db"),
		slog.String("script", "export GITHUB_TOKEN="+ghToken+"\ncurl -H 'Authorization: Bearer "+pw+"' https://x"),
		slog.Any("argv", []string{"mysql", "--password", pw, "db"}),
		slog.Any("env", map[string]string{"DB_PASSWORD": pw, "HOME": "/home/u", "GH": ghToken}),
		slog.Group("request",
			slog.String("password", pw),
			slog.Any("headers", map[string]any{"Authorization": "Basic " + pw, "X-Api-Key": pw})),
		slog.Any("login", login{User: "bob", Password: pw, Argv: []string{"login", "--token", pw}}),
		slog.Any("ptr", &struct{ Token string }{pw}),
		slog.Any("err", errors.New("clone https://bob:"+pw+"@git.example failed")),
		slog.Any("bytes", []byte("token="+pw)),
		slog.Any("raw", json.RawMessage(`{"nested":{"api_key":"`+pw+`"}}`)),
		slog.Any("valuer", secretValuer{}),
		slog.Any("list", []any{"--api-key", pw, 3, map[string]any{"secret": pw}}),
		slog.String("client_secret", pw),
		slog.Any("aws", awsID),
	}
	if err := l.Append(t.Context(), KindPolicyDecision, attrs...); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{pw, ghToken, awsID} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("%q reached the log:\n%s", secret, raw)
		}
	}
	for _, kept := range []string{`"user":"bob"`, `"HOME":"/home/u"`, `"--password"`, `"mysql"`} {
		if !strings.Contains(string(raw), kept) {
			t.Errorf("%s lost from the log:\n%s", kept, raw)
		}
	}
}

type secretValuer struct{}

func (secretValuer) LogValue() slog.Value { return slog.StringValue("secret=hunter2") }

func TestSecurityAppendRefusesToSealTamperedLog(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, path string, lines [][]byte)
	}{
		{"tail cut", func(t *testing.T, path string, l [][]byte) { writeLines(t, path, l[:3]) }},
		{"log emptied", func(t *testing.T, path string, l [][]byte) { writeLines(t, path, nil) }},
		{"log deleted", func(t *testing.T, path string, l [][]byte) { _ = os.Remove(path) }},
		{"anchor deleted", func(t *testing.T, path string, l [][]byte) { _ = os.Remove(path + ".anchor") }},
		{"anchor garbled", func(t *testing.T, path string, l [][]byte) { _ = os.WriteFile(path+".anchor", []byte("x"), 0o600) }},
		{"last line edited", func(t *testing.T, path string, l [][]byte) {
			l[4] = []byte(strings.Replace(string(l[4]), `"n":5`, `"n":6`, 1))
			writeLines(t, path, l)
		}},
		{"rewritten", func(t *testing.T, path string, l [][]byte) {
			_, other := writeLog(t, t.TempDir(), 5, "forged")
			writeLines(t, path, other)
		}},
		{"incomplete last line", func(t *testing.T, path string, l [][]byte) {
			writeLines(t, path, l)
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			_, _ = f.WriteString(`{"time":`)
			_ = f.Close()
		}},
		{"garbage last line", func(t *testing.T, path string, l [][]byte) { writeLines(t, path, append(l, []byte("garbage"))) }},
		{"tail cut, anchor recomputed without the key", func(t *testing.T, path string, l [][]byte) { rechain(t, path, l[:3], 3) }},
		{"anchor stripped of its MAC", func(t *testing.T, path string, l [][]byte) {
			sum := hashLine(l[4])
			_, _ = writeAnchor(path+".anchor", anchor{Count: 5, LastHash: hex.EncodeToString(sum[:])}, false)
		}},
		{"unkeyed line added", func(t *testing.T, path string, l [][]byte) { rechain(t, path, append(l, forge(6, l[4])), 5) }},
		{"unkeyed line added after an interrupted append", func(t *testing.T, path string, l [][]byte) {
			writeLines(t, path, append(l, forge(6, l[4])))
		}},
		{"keyed line forged after an interrupted append", func(t *testing.T, path string, l [][]byte) {
			forged := slices.Clone(l[4])
			forged = bytes.Replace(forged, []byte(`"seq":5`), []byte(`"seq":6`), 1)
			sum := hashLine(l[4])
			forged = bytes.Replace(forged, forged[bytes.Index(forged, []byte(`"prev":"`))+8:][:64], []byte(hex.EncodeToString(sum[:])), 1)
			writeLines(t, path, append(l, forged))
		}},
		{"key removed", func(t *testing.T, path string, l [][]byte) { _ = os.Remove(KeyPath(path)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, lines := writeLog(t, t.TempDir(), 5, "")
			tt.tamper(t, path, lines)
			before, _ := os.ReadFile(path)
			beforeAnchor, _ := os.ReadFile(path + ".anchor")
			err := Open(path, Options{}).Append(t.Context(), KindRunStarted)
			if !errors.Is(err, ErrIntegrity) {
				t.Fatalf("Append after tampering = %v, want ErrIntegrity", err)
			}
			after, _ := os.ReadFile(path)
			afterAnchor, _ := os.ReadFile(path + ".anchor")
			if string(before) != string(after) || string(beforeAnchor) != string(afterAnchor) {
				t.Error("a refused append changed the log or its anchor")
			}
		})
	}
}

func TestAppendRecoversFromInterruptedAppend(t *testing.T) {
	path, _ := writeLog(t, t.TempDir(), 4, "")
	old, err := os.ReadFile(path + ".anchor")
	if err != nil {
		t.Fatal(err)
	}
	l := Open(path, Options{})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	// As if the process died between writing the line and the anchor.
	if err := os.WriteFile(path+".anchor", old, 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, _ := Verify(path, ""); rep.OK || rep.FirstBad != 5 || !strings.Contains(rep.Problem, "interrupted") {
		t.Fatalf("Verify = %+v, want line 5 past the anchor", rep)
	}
	if err := l.Append(t.Context(), KindRunFinished); err != nil {
		t.Fatalf("Append after an interrupted append = %v", err)
	}
	if rep, err := Verify(path, ""); err != nil || !rep.OK || rep.Lines != 6 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestAppendRollsBackWhenAnchorFails(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /proc to make the anchor unwritable")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	// Nothing can create files in /proc, not even root.
	l := Open(path, Options{Anchor: "/proc/self/audit-test.anchor"})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err == nil {
		t.Fatal("Append succeeded without an anchor")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 0 {
		t.Fatalf("the log kept a line whose anchor failed: %v, %v", fi, err)
	}
}

func TestAppendFollowsReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	for range 2 {
		if err := l.Append(t.Context(), KindRunStarted); err != nil {
			t.Fatal(err)
		}
	}
	// Rotated away, with its anchor, while l holds the old file open.
	old := filepath.Join(dir, "old.jsonl")
	if err := os.Rename(path, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".anchor", old+".anchor"); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	for p, lines := range map[string]int{old: 2, path: 1} {
		if rep, err := Verify(p, ""); err != nil || !rep.OK || rep.Lines != lines {
			t.Errorf("Verify(%s) = %+v, %v; want %d lines", filepath.Base(p), rep, err, lines)
		}
	}
}

func TestAppendHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := Open(path, Options{})
	defer l.Close()
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Append(ctx, KindRunStarted); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context = %v", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	// Another holder keeps the lock: Append gives up at its deadline.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(context.Background(), f, true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	if err := l.Append(ctx, KindRunStarted); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append behind a held lock = %v", err)
	}
	if err := unlockFile(f); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(t.Context(), KindRunStarted); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(path, ""); err != nil || !rep.OK || rep.Lines != 2 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// checkConcurrentLog verifies a log written by several writers: a sound
// chain, seq 1..total, and each writer's events once each.
func checkConcurrentLog(t *testing.T, path string, total int) {
	t.Helper()
	rep, err := Verify(path, "")
	if err != nil || !rep.OK || rep.Lines != total {
		t.Fatalf("Verify = %+v, %v; want OK with %d lines", rep, err, total)
	}
	recs, err := Open(path, Options{}).Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if r.Seq != i+1 {
			t.Fatalf("record %d has seq %d", i+1, r.Seq)
		}
		id := fmt.Sprint(r.Attrs["writer"], "/", r.Attrs["i"])
		if seen[id] {
			t.Fatalf("event %s written twice", id)
		}
		seen[id] = true
	}
	if len(seen) != total {
		t.Fatalf("%d distinct events, want %d", len(seen), total)
	}
}

func TestConcurrentAppendGoroutines(t *testing.T) {
	const writers, each = 8, 25
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	shared := Open(path, Options{})
	defer shared.Close()
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		// Half share one Log; half hold their own, so the file lock (not
		// the mutex) is what keeps them apart. Odd writers wait on the
		// lock blocking, even ones poll it under a cancellable context.
		l := shared
		if w%2 == 1 {
			l = Open(path, Options{})
			defer l.Close()
		}
		ctx := context.Background()
		if w%4 < 2 {
			ctx = t.Context()
		}
		wg.Go(func() {
			for i := range each {
				errs <- l.Append(ctx, KindRunStarted, slog.Int("writer", w), slog.Int("i", i))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkConcurrentLog(t, path, writers*each)
}

const helperEnv = "AUDIT_TEST_HELPER_LOG"

// TestHelperAppender is the child process of TestConcurrentAppendProcesses.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("child process of TestConcurrentAppendProcesses")
	}
	writer, _ := strconv.Atoi(os.Getenv(helperEnv + "_WRITER"))
	n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
	l := Open(path, Options{})
	defer l.Close()
	for i := range n {
		if err := l.Append(context.Background(), KindRunStarted, slog.Int("writer", writer), slog.Int("i", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const procs, each = 4, 50
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+path,
			fmt.Sprintf("%s_WRITER=%d", helperEnv, p), fmt.Sprintf("%s_N=%d", helperEnv, each))
		cmds[p] = cmd
	}
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for p, cmd := range cmds {
		wg.Go(func() { outs[p], errs[p] = cmd.CombinedOutput() })
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("writer %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	checkConcurrentLog(t, path, procs*each)
}
