package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func FuzzRedactString(f *testing.F) {
	for _, s := range []string{
		"mysql --password=hunter2 db", "tool --token --password pw", "GITHUB_TOKEN=abc gh",
		`{"password":"x"}`, `{\"password\":\"x\"}`, "Authorization: Bearer abc", "https://u:p@h/x",
		"-----BEGIN RSA PRIVATE KEY-----\nabc", ghToken, awsID, "${DB_PASSWORD:-x}", "echo tokenizer",
		`PASSWORD="a b`, "password: 'x", "a=b:c=d --secret=\\\"x",
		"k='-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nAgMB'; os.system('x')",
		"password = \"x\\nimport os\"", "TOKEN=$(curl x) --password \"$T\"", "${A_TOKEN}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := RedactString(s)
		if twice := RedactString(once); twice != once {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", s, once, twice)
		}
		if strings.Contains(s, ghToken) && strings.Contains(once, ghToken) {
			t.Fatalf("token survived: %q", once)
		}
		argv := strings.Fields(s)
		a1 := RedactArgv(argv)
		if a2 := RedactArgv(a1); !slices.Equal(a1, a2) {
			t.Fatalf("argv not idempotent:\n in   %q\n once %q\n twice %q", argv, a1, a2)
		}
	})
}

// FuzzVerify feeds arbitrary bytes to Verify and the record parser: no
// panic, and a log Verify accepts reads back whole through Tail.
func FuzzVerify(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.jsonl")
	l := Open(path, Options{Clock: fixedClock()})
	for i := range 3 {
		if err := l.Append(f.Context(), KindRunStarted, attrN(i)...); err != nil {
			f.Fatal(err)
		}
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	anc, err := os.ReadFile(path + ".anchor")
	if err != nil {
		f.Fatal(err)
	}
	key, err := os.ReadFile(KeyPath(path))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, anc)
	f.Add(seed[:len(seed)/2], anc)
	f.Add([]byte("{}\n"), []byte(`{"count":1,"last_hash":"x"}`))
	f.Add([]byte("\n\n"), []byte(nil))
	f.Fuzz(func(t *testing.T, log, anchorData []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "a.jsonl")
		if err := os.WriteFile(p, log, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(KeyPath(p), key, 0o600); err != nil {
			t.Fatal(err)
		}
		if anchorData != nil {
			if err := os.WriteFile(p+".anchor", anchorData, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := Verify(p, "")
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK != (rep.Problem == "") || rep.FirstBad < 0 || rep.FirstBad > rep.Lines+1 {
			t.Fatalf("inconsistent report %+v", rep)
		}
		for line := range strings.SplitSeq(string(log), "\n") {
			_, _ = parseRecord([]byte(line))
		}
		if !rep.OK {
			return
		}
		recs, err := Open(p, Options{}).Tail(0)
		if err != nil {
			t.Fatalf("verified log does not read back: %v", err)
		}
		if len(recs) != rep.Lines {
			t.Fatalf("Tail read %d records, Verify counted %d lines", len(recs), rep.Lines)
		}
		for i, r := range recs {
			if r.Seq != i+1 {
				t.Fatalf("record %d has seq %d", i+1, r.Seq)
			}
		}
	})
}
