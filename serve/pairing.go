package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// Pairing binds a Telegram user to a requester identity: `mnemos channels
// pair telegram` makes a one-time code for the identity that runs it, and
// the bot binds whoever sends it that code in the configured chat. Only
// the hash of a code is kept; a code lasts PairingTTL, and
// maxPairingFailures wrong codes in a row void every open one.
const (
	PairingTTL         = 10 * time.Minute
	pairingCodeLen     = 10 // base32 characters: 50 bits
	maxPairingFailures = 5
	pairingName        = "pairing.json"
)

var codeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

type pairingFile struct {
	Codes    []pairingCode `json:"codes,omitempty"`
	Failures int           `json:"failures,omitempty"`
	// Paired maps a channel's Telegram user ids to identities.
	Paired map[string]map[string]approvals.Identity `json:"paired,omitempty"`
}

type pairingCode struct {
	Channel  string             `json:"channel"`
	Hash     string             `json:"hash"`
	Identity approvals.Identity `json:"identity"`
	Expires  time.Time          `json:"expires"`
}

func pairingPath(stateDir string) string {
	return filepath.Join(stateDir, telegramDir, pairingName)
}

func codeHash(code string) string {
	sum := sha256.Sum256([]byte("mnemos pairing\x00" + code))
	return hex.EncodeToString(sum[:])
}

// NewPairingCode makes a one-time code that pairs the Telegram user who
// sends it to channel's bot with id. It is shown as XXXXX-XXXXX.
func NewPairingCode(stateDir, channel string, id approvals.Identity, now time.Time, random io.Reader) (string, time.Time, error) {
	b := make([]byte, 7)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", time.Time{}, err
	}
	code := codeEncoding.EncodeToString(b)[:pairingCodeLen]
	exp := now.Add(PairingTTL).UTC()
	var f pairingFile
	err := updateJSON(pairingPath(stateDir), &f, func() error {
		f.Codes = liveCodes(f.Codes, now)
		f.Codes = append(f.Codes, pairingCode{Channel: channel, Hash: codeHash(code), Identity: id, Expires: exp})
		f.Failures = 0
		return nil
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return code[:5] + "-" + code[5:], exp, nil
}

func liveCodes(codes []pairingCode, now time.Time) []pairingCode {
	out := codes[:0]
	for _, c := range codes {
		if now.Before(c.Expires) {
			out = append(out, c)
		}
	}
	return out
}

// pairingCodeIn reads a pairing code from a message: "/pair CODE",
// "/start CODE" or the code alone, with or without its dash.
func pairingCodeIn(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, cmd := range []string{"/pair", "/start"} {
		if rest, ok := strings.CutPrefix(t, cmd); ok {
			t = strings.TrimSpace(rest)
			break
		}
	}
	t = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(t))
	if len(t) != pairingCodeLen {
		return "", false
	}
	for _, r := range t {
		if (r < 'A' || r > 'Z') && (r < '2' || r > '7') {
			return "", false
		}
	}
	return t, true
}

// consumePairing spends a code sent by user to channel's bot and pairs
// them with the code's identity.
func consumePairing(stateDir, channel, code string, user int64, now time.Time) (approvals.Identity, error) {
	var (
		f      pairingFile
		id     approvals.Identity
		result error
	)
	want := codeHash(code)
	err := updateJSON(pairingPath(stateDir), &f, func() error {
		f.Codes = liveCodes(f.Codes, now)
		for i, c := range f.Codes {
			if c.Channel == channel && subtle.ConstantTimeCompare([]byte(c.Hash), []byte(want)) == 1 {
				id = c.Identity
				f.Codes = append(f.Codes[:i], f.Codes[i+1:]...)
				f.Failures = 0
				if f.Paired == nil {
					f.Paired = map[string]map[string]approvals.Identity{}
				}
				if f.Paired[channel] == nil {
					f.Paired[channel] = map[string]approvals.Identity{}
				}
				f.Paired[channel][strconv.FormatInt(user, 10)] = id
				return nil
			}
		}
		f.Failures++
		result = errors.New("unknown or expired code")
		if f.Failures >= maxPairingFailures {
			f.Codes, f.Failures = nil, 0
			result = errors.New("too many wrong codes: every open code is void; run `mnemos channels pair telegram` again")
		}
		return nil
	})
	if err != nil {
		return id, err
	}
	return id, result
}

// pairedIdentity is the identity a channel's Telegram user is paired with.
func pairedIdentity(stateDir, channel string, user int64) (approvals.Identity, bool) {
	b, err := os.ReadFile(pairingPath(stateDir))
	if err != nil {
		return approvals.Identity{}, false
	}
	var f pairingFile
	if json.Unmarshal(b, &f) != nil {
		return approvals.Identity{}, false
	}
	id, ok := f.Paired[channel][strconv.FormatInt(user, 10)]
	return id, ok
}

// pairedIdentities are the identities a channel's Telegram users are
// paired with.
func pairedIdentities(stateDir, channel string) []approvals.Identity {
	b, err := os.ReadFile(pairingPath(stateDir))
	if err != nil {
		return nil
	}
	var f pairingFile
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	var out []approvals.Identity
	for _, id := range f.Paired[channel] {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b approvals.Identity) int {
		return strings.Compare(a.Channel+"\x00"+a.Sender, b.Channel+"\x00"+b.Sender)
	})
	return out
}

// ownerOnly refuses a secret's file that others may read or write.
func ownerOnly(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("cannot read the bot token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s may be read by others (mode %04o): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return nil
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
