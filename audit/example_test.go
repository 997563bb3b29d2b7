package audit_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

	// A fixed key makes the MACs below reproducible; leave Rand nil and
	// the key comes from crypto/rand.
	key := strings.NewReader(strings.Repeat("k", audit.KeySize))
	l := audit.Open(path, audit.Options{Clock: clock, Rand: key})
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
	fmt.Println("ok:", rep.OK, "lines:", rep.Lines, "keyed:", rep.Keyed)
	// The head is what to keep elsewhere; VerifyOptions.Head checks that
	// the log still extends it.
	head, _ := rep.Head()
	fmt.Println(head)
	// Output:
	// {"time":"2026-03-01T10:00:00Z","level":"INFO","msg":"policy.decision","seq":1,"prev":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","decision":"allow","argv":["gh","api","--token","[REDACTED]"],"mac":"2ed1a7618279b68ff8213822ad114853e56d0634d6e37eb3ef3125fec729cb3c"}
	// {"time":"2026-03-01T10:00:00Z","level":"INFO","msg":"run.finished","seq":2,"prev":"7806c95b19de6da7d3bf3aa38c6aede424adc0c8ceb84ce91d7d39d3e4c790f0","exit":0,"mac":"484c566b0f25a8f396e69fd29a29b0317e06695cc77bb3fbcde5ef99372c0ea0"}
	// ok: true lines: 2 keyed: 2
	// mnemos-audit-head 2 484c566b0f25a8f396e69fd29a29b0317e06695cc77bb3fbcde5ef99372c0ea0
}

func ExampleRedactArgv() {
	fmt.Println(audit.RedactArgv([]string{"mysql", "--password", "hunter2", "--password-file=/run/db.pw"}))
	fmt.Println(audit.RedactString("GITHUB_TOKEN=abc git push https://bob:pw@example.com/r.git"))
	// Output:
	// [mysql --password [REDACTED] --password-file=/run/db.pw]
	// GITHUB_TOKEN=[REDACTED] git push https://bob:[REDACTED]@example.com/r.git
}
