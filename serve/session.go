package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Cookie names. A cookie is scoped to a host, not to a port: other
// servers on the same loopback address receive it too (see README).
const (
	sessionCookie = "mnemos_session"
	sessionMaxAge = 7 * 24 * time.Hour
)

// sessions issues and checks session cookies and their CSRF tokens. Both
// are MACs under a key drawn when serve starts and held in memory only:
// nothing on disk opens the page, and every session ends when serve stops.
type sessions struct {
	key  []byte
	rand io.Reader
	now  func() time.Time
}

// sessionKeyBytes is the session key's size: 256 bits.
const sessionKeyBytes = 32

func newSessions(random io.Reader, now func() time.Time) (*sessions, error) {
	key := make([]byte, sessionKeyBytes)
	if _, err := io.ReadFull(random, key); err != nil {
		return nil, fmt.Errorf("make the session key: %w", err)
	}
	return &sessions{key: key, rand: random, now: now}, nil
}

func (s *sessions) mac(purpose, value string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// issue returns a new session cookie: an id, its expiry and their MAC.
func (s *sessions) issue() (*http.Cookie, error) {
	b := make([]byte, 16)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return nil, err
	}
	id := tokenEncoding.EncodeToString(b)
	exp := s.now().Add(sessionMaxAge).Unix()
	val := id + "." + strconv.FormatInt(exp, 10)
	return &http.Cookie{
		Name:     sessionCookie,
		Value:    val + "." + s.mac("session", val),
		Path:     "/",
		MaxAge:   int(sessionMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	}, nil
}

// session returns the request's session id, or "" when it has no valid
// session cookie.
func (s *sessions) session(r *http.Request) string {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	id, rest, ok := strings.Cut(c.Value, ".")
	if !ok {
		return ""
	}
	exp, mac, ok := strings.Cut(rest, ".")
	if !ok || id == "" {
		return ""
	}
	want := s.mac("session", id+"."+exp)
	if subtle.ConstantTimeCompare([]byte(mac), []byte(want)) != 1 {
		return ""
	}
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || s.now().Unix() > n {
		return ""
	}
	return id
}

// csrf is the CSRF token of a session: only a page served to that session
// knows it.
func (s *sessions) csrf(session string) string { return s.mac("csrf", session) }

func (s *sessions) csrfOK(session, presented string) bool {
	return session != "" && presented != "" &&
		subtle.ConstantTimeCompare([]byte(presented), []byte(s.csrf(session))) == 1
}
