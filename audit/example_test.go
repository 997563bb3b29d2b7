package audit_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemos-dev/mnemos/audit"
)

func ExampleLog_Append() {
	dir, err := os.MkdirTemp("", "audit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")
	clock := func() time.Time { return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) }

	l := audit.Open(path, audit.Options{Clock: clock})
	defer l.Close()
	ctx := context.Background()
	// Secrets are redacted on the way in.
	if err := l.Append(ctx, audit.KindPolicyDecision,
		slog.String("decision", "allow"),
		slog.Any("argv", []string{"gh", "api", "--token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}),
	); err != nil {
		log.Fatal(err) // not recorded: refuse the command
	}
	if err := l.Append(ctx, audit.KindRunFinished, slog.Int("exit", 0)); err != nil {
		log.Fatal(err)
	}

	recs, err := l.Tail(0)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s\n", r.Raw)
	}
	rep, err := audit.Verify(path, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok:", rep.OK, "lines:", rep.Lines)
	// Output:
	// {"time":"2026-03-01T10:00:00Z","level":"INFO","msg":"policy.decision","seq":1,"prev":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","decision":"allow","argv":["gh","api","--token","[REDACTED]"]}
	// {"time":"2026-03-01T10:00:00Z","level":"INFO","msg":"run.finished","seq":2,"prev":"29cb8cebafedc930b14bd84c017a7aef5a7251f6bef4d145b832fab54ef81db8","exit":0}
	// ok: true lines: 2
}

func ExampleRedactArgv() {
	fmt.Println(audit.RedactArgv([]string{"mysql", "--password", "hunter2", "--password-file=/run/db.pw"}))
	fmt.Println(audit.RedactString("GITHUB_TOKEN=abc git push https://bob:pw@example.com/r.git"))
	// Output:
	// [mysql --password [REDACTED] --password-file=/run/db.pw]
	// GITHUB_TOKEN=[REDACTED] git push https://bob:[REDACTED]@example.com/r.git
}
