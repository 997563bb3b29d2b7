package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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
// are MACs under a key derived from the access token, so they survive a
// restart of serve and die with the token (--rotate-token).
type sessions struct {
	token string
	key   []byte
	rand  io.Reader
	now   func() time.Time
}

func newSessions(token string, random io.Reader, now func() time.Time) *sessions {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("mnemos serve session key v1"))
	return &sessions{token: token, key: m.Sum(nil), rand: random, now: now}
}

func (s *sessions) mac(purpose, value string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// tokenOK compares a presented access token in constant time.
func (s *sessions) tokenOK(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
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
