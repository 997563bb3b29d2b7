package vaglio

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/shellparse"
)

func testNow() time.Time { return time.Date(2026, 4, 27, 21, 30, 0, 0, time.UTC) }

func readLog(t *testing.T, name string) []map[string]any {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestAppendLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vaglio")
	c := cmd("rm -rf --one-file-system ./build")
	v := Judge{}.Judge(Input{Intent: "clean the build", Command: c, Critical: true})
	rec := NewLogRecord(c, v, "clean the build", []string{"level", "capability"})
	if err := AppendLog(dir, rec, testNow()); err != nil {
		t.Fatal(err)
	}
	h, _ := testGuard().Check(cmd("cat /etc/shadow"), "/")
	if err := AppendLog(dir, NewLogRecord(cmd("cat /etc/shadow"), h.Verdict(), "", nil), testNow().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "2026-04.jsonl")
	for p, want := range map[string]os.FileMode{dir: 0o700, name: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	lines := readLog(t, name)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	first := lines[0]
	for _, k := range []string{"approved", "reason", "ts", "judge_kind", "score", "blocked_by", "intent", "executor", "args_keys", "context_keys"} {
		if _, ok := first[k]; !ok {
			t.Errorf("record lacks %q: %v", k, first)
		}
	}
	if first["executor"] != "rm" || first["approved"] != true || first["ts"] != "2026-04-27T21:30:00Z" ||
		first["reason"] != "approved: score 0.70" || first["intent"] != "clean the build" {
		t.Errorf("first record %v", first)
	}
	if got := first["args_keys"]; !reflect.DeepEqual(got, []any{"-r", "-f", "--one-file-system"}) {
		t.Errorf("args_keys %v", got)
	}
	second := lines[1]
	if second["blocked_by"] != "guard" || second["reason"] != "guard: forbidden-path /etc/shadow" || second["score"] != 0.0 {
		t.Errorf("second record %v", second)
	}

	// A new month is a new file.
	if err := AppendLog(dir, rec, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-05.jsonl")); err != nil {
		t.Error(err)
	}
}

func TestAppendLogFailsWithoutHarm(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendLog(file, LogRecord{}, testNow()); err == nil {
		t.Fatal("no error writing under a file")
	}
}

// TestSecurityLogNeverRecordsArgumentValues is seed 003's
// args_keys_loggate_non_values: a secret anywhere in the command (argument,
// option value, glued short option, path, redirect, assignment) or repeated
// in the intent never reaches the log; the option names do.
func TestSecurityLogNeverRecordsArgumentValues(t *testing.T) {
	const secret = "PASSWORD_segreto_4f9a1c"
	c := cmd("mysql -p" + secret + " --password=" + secret + " -u root --host db " + secret + " /home/u/.ssh/" + secret)
	c = redir(c, ">", "/tmp/"+secret)
	c = assign(c, "MYSQL_PWD="+secret)
	c.Argv = append(c.Argv, shellparse.Word{Value: "$" + secret, Dynamic: true})
	intents := []string{
		"log in with " + secret,
		"use password=" + secret,
		"password: hunter2isnotit then " + secret,
	}
	dir := t.TempDir()
	g := testGuard()
	for _, intent := range intents {
		h, hit := g.Check(c, "/home/u")
		if !hit {
			t.Fatal("no guard hit")
		}
		if !strings.Contains(h.Reason, secret) {
			t.Fatal("the hit shown to the user should name the word; the log must not")
		}
		for _, v := range []Verdict{h.Verdict(), Judge{}.Judge(Input{Intent: intent, Command: c}), Judge{Threshold: 1}.Judge(Input{Intent: intent, Command: c})} {
			if err := AppendLog(dir, NewLogRecord(c, v, intent, []string{"level"}), testNow()); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "2026-04.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"segreto", "4f9a1c", "hunter2", "root", "/home/u", "/tmp"} {
		if strings.Contains(string(data), bad) {
			t.Errorf("log holds %q:\n%s", bad, data)
		}
	}
	for _, want := range []string{`"-p"`, `"--password"`, `"-u"`, `"--host"`, `"executor":"mysql"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log lacks %s:\n%s", want, data)
		}
	}
}

func TestOptionKeys(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"rm -rf x", []string{"-r", "-f"}},
		{"rm -r -f -r x", []string{"-r", "-f"}},
		{"curl --header=X-Token:abc -X POST", []string{"--header", "-X"}},
		{"mysql -psecretvalue", []string{"-p"}},
		{"head -5 x", []string{}},
		{"ls -- -rf", []string{}},
		{"x --a_b=1 --ok-name", []string{"--ok-name"}},
		{"x", []string{}},
		{"x - /tmp/-r", []string{}},
	} {
		if got := optionKeys(words(tc.line)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestRedactIntent(t *testing.T) {
	c := cmd("deploy --token=abcd1234 prod-eu")
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"deploy to prod-eu", "[arg] to [arg]"},
		{"use token abcd1234 now", "use token [arg] now"},
		{"with api_key=zzz and password: hunter2", "with api_key=[redacted] and password: [redacted]"},
		{"send Authorization: Bearer eyJhbGciOi", "send Authorization: Bearer [redacted]"},
		{"key sk-live-0123456789abcdefghij ok", "key [redacted] ok"},
		{"line\x1bone\ttwo", "line one two"},
	} {
		if got := RedactIntent(tc.in, c); got != tc.want {
			t.Errorf("RedactIntent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	glued := cmd("mysql -pS3cretValue 'commit message words'")
	if got := RedactIntent("the password is S3cretValue. Message words!", glued); got != "the password is [arg]. Message [arg]!" {
		t.Errorf("glued option value: %q", got)
	}
	long := strings.Repeat("è", 500)
	got := RedactIntent(long, shellparse.Command{})
	if utf8.RuneCountInString(got) != MaxLogIntent+1 || !utf8.ValidString(got) {
		t.Errorf("long intent cut to %d runes", utf8.RuneCountInString(got))
	}
}

// TestReadLog: the last n records across months, oldest first; a line cut
// short is skipped and counted; a missing directory is an empty log.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	months := []time.Time{time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC), testNow(), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	for i, m := range months {
		for j := 0; j < 2; j++ {
			if err := AppendLog(dir, LogRecord{Executor: fmt.Sprintf("p%d%d", i, j)}, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "2026-05.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"approved":tr`)
	f.Close()
	names := func(recs []LogRecord) string {
		var s []string
		for _, r := range recs {
			s = append(s, r.Executor)
		}
		return strings.Join(s, " ")
	}
	for n, want := range map[int]string{0: "p00 p01 p10 p11 p20 p21", 3: "p11 p20 p21", 1: "p21", 9: "p00 p01 p10 p11 p20 p21"} {
		recs, skipped, err := ReadLog(dir, n)
		if err != nil || skipped != 1 || names(recs) != want {
			t.Errorf("ReadLog(%d) = %q, %d, %v; want %q, 1", n, names(recs), skipped, err, want)
		}
	}
	if recs, _, err := ReadLog(filepath.Join(dir, "none"), 5); err != nil || len(recs) != 0 {
		t.Errorf("missing dir: %v %v", recs, err)
	}
}
