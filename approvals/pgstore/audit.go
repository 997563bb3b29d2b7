package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/audit"
)

// shipBatch is how many lines one transaction of Ship inserts.
const shipBatch = 1000

// ErrChainDiverged: the central table's chain for this host is not the
// local log's: another log ships under the same host id, or the local log
// was rewritten after it was shipped. Nothing is shipped.
var ErrChainDiverged = errors.New("the central audit table's chain for this host differs from the local log")

// ShipResult says what Ship did.
type ShipResult struct {
	// Shipped is how many lines were inserted, numbered From to To.
	Shipped, From, To int
	// Central is the number of this host's lines in the table afterwards.
	Central int
}

// Ship sends the lines of the local log that the central table lacks for
// this host, oldest first, each batch in one transaction holding an
// advisory lock on the host, so that concurrent shippers insert each line
// once and in order. It first checks that the table's last line for the
// host is the local log's line of that number (ErrChainDiverged
// otherwise). The local log is the spool: what it holds is shipped when
// the database can be reached, however long that takes.
func (s *Store) Ship(ctx context.Context, l *audit.Log) (ShipResult, error) {
	var res ShipResult
	for {
		n, central, err := s.shipBatch(ctx, l)
		if err != nil {
			return res, err
		}
		res.Central = central
		if n == 0 {
			return res, nil
		}
		if res.Shipped == 0 {
			res.From = central - n + 1
		}
		res.Shipped += n
		res.To = central
	}
}

func (s *Store) shipBatch(ctx context.Context, l *audit.Log) (shipped, central int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('mnemos-audit:' || $1, 0))`, s.host); err != nil {
			return err
		}
		var (
			last     int
			lastHash string
		)
		err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit_events WHERE host = $1 ORDER BY seq DESC LIMIT 1`, s.host).Scan(&last, &lastHash)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		central = last
		from := last
		if last > 0 {
			from-- // read the table's last line too, to compare
		}
		lines, err := l.After(from, shipBatch+1)
		if err != nil {
			if errors.Is(err, audit.ErrIntegrity) && last > 0 {
				return fmt.Errorf("%w (host %s, %d lines shipped): %w", ErrChainDiverged, s.host, last, err)
			}
			return err
		}
		if last > 0 {
			if len(lines) == 0 || lines[0].Hash != lastHash {
				return fmt.Errorf("%w: host %s's line %d in the table is not the local log's; another log ships as %s (set MNEMOS_HOST_ID), or the local log was rewritten",
					ErrChainDiverged, s.host, last, s.host)
			}
			lines = lines[1:]
		}
		if len(lines) == 0 {
			return nil
		}
		var (
			seqs               = make([]int64, len(lines))
			times              = make([]time.Time, len(lines))
			kinds, prevs, hash = make([]string, len(lines)), make([]string, len(lines)), make([]string, len(lines))
			raws               = make([]string, len(lines))
		)
		for i, ln := range lines {
			seqs[i], times[i], kinds[i], prevs[i], hash[i], raws[i] = int64(ln.Seq), ln.Time, ln.Kind, ln.Prev, ln.Hash, string(ln.Raw)
		}
		// One INSERT of arrays, not COPY: COPY is refused on a table
		// with row-level security, which the README suggests.
		if _, err := tx.Exec(ctx, `INSERT INTO audit_events (host, seq, time, kind, prev, hash, line)
			SELECT $1, * FROM unnest($2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[])`,
			s.host, seqs, times, kinds, prevs, hash, raws); err != nil {
			return fmt.Errorf("insert audit lines %d to %d: %w", lines[0].Seq, lines[len(lines)-1].Seq, err)
		}
		shipped, central = len(lines), lines[len(lines)-1].Seq
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("ship audit log: %w", err)
	}
	return shipped, central, nil
}

// HostChain is what VerifyFleet found of one host's chain.
type HostChain struct {
	Host string `json:"host"`
	// Lines is the number of the host's lines in the table.
	Lines int  `json:"lines"`
	OK    bool `json:"ok"`
	// FirstBad is the number of the first line found wrong or missing; 0
	// when OK.
	FirstBad int    `json:"first_bad,omitempty"`
	Problem  string `json:"problem,omitempty"`
	// LastHash is the hash of the last line when the chain is unbroken.
	LastHash string `json:"last_hash,omitempty"`
}

// VerifyFleet checks every host's chain in the central table: its lines
// are numbered 1, 2, 3, ... with none missing, each line is the bytes its
// hash is of, says the number and carries the hash of the line before it
// that the table records. The MACs in the lines need each host's key and
// are checked by that host's `mnemos audit verify`.
func (s *Store) VerifyFleet(ctx context.Context) ([]HostChain, error) {
	rows, err := s.pool.Query(ctx, `SELECT host, seq, prev, hash, line FROM audit_events ORDER BY host, seq`)
	if err != nil {
		return nil, fmt.Errorf("verify fleet: %w", err)
	}
	defer rows.Close()
	var (
		out  []HostChain
		cur  *HostChain
		prev string
	)
	for rows.Next() {
		var (
			host           string
			seq            int64
			pv, hash, line string
		)
		if err := rows.Scan(&host, &seq, &pv, &hash, &line); err != nil {
			return nil, fmt.Errorf("verify fleet: %w", err)
		}
		if cur == nil || cur.Host != host {
			out = append(out, HostChain{Host: host, OK: true})
			cur, prev = &out[len(out)-1], audit.EmptyHash
		}
		want := cur.Lines + 1
		cur.Lines = int(seq)
		if !cur.OK {
			continue
		}
		bad := func(n int, problem string) { cur.OK, cur.FirstBad, cur.Problem, cur.LastHash = false, n, problem, "" }
		ln, perr := audit.ParseLine([]byte(line))
		switch {
		case int(seq) != want:
			bad(want, fmt.Sprintf("line %d is missing", want))
		case perr != nil:
			bad(want, fmt.Sprintf("line %d does not parse: %v", want, perr))
		case ln.Hash != hash:
			bad(want, fmt.Sprintf("line %d is not the line its recorded hash is of", want))
		case ln.Seq != want || ln.Prev != pv:
			bad(want, fmt.Sprintf("line %d says it is line %d after %.12s, the table says line %d after %.12s", want, ln.Seq, ln.Prev, want, pv))
		case pv != prev:
			bad(want, fmt.Sprintf("line %d does not carry the hash of line %d", want, want-1))
		default:
			prev, cur.LastHash = hash, hash
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verify fleet: %w", err)
	}
	return out, nil
}
