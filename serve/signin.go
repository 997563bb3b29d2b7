package serve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Signing a browser in to the page.
//
// Nothing on disk opens the page. Its session cookies are MACs under a key
// mnemos serve draws when it starts and holds in memory only, so sessions
// end when serve stops. A browser signs in with a one-time code: `mnemos
// approvals url` asks the running serve for one over a unix socket in the
// secrets directory (0700, so only the user reaches it; serve also checks
// the peer's uid with SO_PEERCRED and refuses a peer that runs under a
// mnemos sandbox), and prints the link to a terminal only. The page takes
// the code once, within SignInTTL, and answers with the session cookie.

// SignInTTL is how long a sign-in code can be used.
const SignInTTL = 2 * time.Minute

const (
	// signInBytes is a code's entropy: 160 bits.
	signInBytes = 20
	// maxSignIns bounds the codes waiting to be used; the oldest goes.
	maxSignIns = 16
	// socketTimeout bounds one exchange on the socket.
	socketTimeout = 5 * time.Second
)

// signIns are the codes issued and not yet used, by their SHA-256.
type signIns struct {
	mu    sync.Mutex
	codes map[[sha256.Size]byte]time.Time
}

// mint issues a code valid until the returned time.
func (s *signIns) mint(random io.Reader, now time.Time) (string, time.Time, error) {
	b := make([]byte, signInBytes)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", time.Time{}, fmt.Errorf("make a sign-in code: %w", err)
	}
	code := tokenEncoding.EncodeToString(b)
	exp := now.Add(SignInTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.codes == nil {
		s.codes = map[[sha256.Size]byte]time.Time{}
	}
	for h, e := range s.codes {
		if !now.Before(e) {
			delete(s.codes, h)
		}
	}
	for len(s.codes) >= maxSignIns {
		var oldest [sha256.Size]byte
		first := true
		for h, e := range s.codes {
			if first || e.Before(s.codes[oldest]) {
				oldest, first = h, false
			}
		}
		delete(s.codes, oldest)
	}
	s.codes[sha256.Sum256([]byte(code))] = exp
	return code, exp, nil
}

// spend uses a code: true once, for a code issued and not expired.
func (s *signIns) spend(code string, now time.Time) bool {
	if code == "" {
		return false
	}
	h := sha256.Sum256([]byte(code))
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.codes[h]
	delete(s.codes, h)
	return ok && now.Before(exp)
}

// signInURL is the page's address with a sign-in code.
func signInURL(addr, code string) string {
	return "http://" + addr + "/?" + url.Values{"signin": {code}}.Encode()
}

// SignInURL issues a one-time sign-in link to the page: print it only to
// the person.
func (s *Server) SignInURL() (string, time.Time, error) {
	code, exp, err := s.signin.mint(s.cfg.Rand, s.cfg.Now())
	if err != nil {
		return "", time.Time{}, err
	}
	return signInURL(s.addr, code), exp, nil
}

// socketRequest and socketReply are one exchange on the socket, one JSON
// line each way.
type socketRequest struct {
	Op string `json:"op"`
}

type socketReply struct {
	URL     string    `json:"url,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
	Error   string    `json:"error,omitempty"`
}

// listenSocket listens on the unix socket at path, in a directory that
// must be the user's own and closed to others (it is made so when
// missing). A socket left by a serve that died is replaced: the caller
// holds serve's lock.
func listenSocket(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s is not a socket (%s): move it aside", path, fi.Mode().Type())
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := listenUnix(path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// serveSocket answers on the socket until it is closed.
func (s *Server) serveSocket(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.cfg.Log.Warn("socket: accept", "err", err)
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.answerSocket(c)
		}()
	}
}

// answerSocket answers one request: a sign-in link, to the user's own
// processes outside the sandbox only.
func (s *Server) answerSocket(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(socketTimeout))
	reply := func(r socketReply) {
		b, _ := json.Marshal(r)
		_, _ = c.Write(append(b, '\n'))
	}
	line, err := bufio.NewReader(io.LimitReader(c, 1024)).ReadBytes('\n')
	if err != nil {
		return
	}
	if err := peerAllowed(c); err != nil {
		s.cfg.Log.Warn("socket: refused", "err", err)
		reply(socketReply{Error: err.Error()})
		return
	}
	var req socketRequest
	if err := json.Unmarshal(line, &req); err != nil || req.Op != "signin" {
		reply(socketReply{Error: "unknown request: want {\"op\":\"signin\"}"})
		return
	}
	u, exp, err := s.SignInURL()
	if err != nil {
		reply(socketReply{Error: err.Error()})
		return
	}
	s.cfg.Log.Info("sign-in link issued", "expires", exp.Format(time.TimeOnly))
	reply(socketReply{URL: u, Expires: exp})
}

// SignIn asks the mnemos serve listening on socket for a one-time link
// that signs a browser in to its page (valid for SignInTTL, once). It
// returns ErrNotRunning when nothing listens there.
func SignIn(ctx context.Context, socket string) (link string, expires time.Time, err error) {
	ctx, cancel := context.WithTimeout(ctx, socketTimeout)
	defer cancel()
	c, err := dialUnix(ctx, socket)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return "", time.Time{}, ErrNotRunning
		}
		return "", time.Time{}, err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	_, werr := c.Write([]byte("{\"op\":\"signin\"}\n"))
	line, err := bufio.NewReader(io.LimitReader(c, 4096)).ReadBytes('\n')
	if err != nil {
		if werr != nil {
			err = werr
		}
		return "", time.Time{}, fmt.Errorf("mnemos serve did not answer: %w", err)
	}
	var r socketReply
	if err := json.Unmarshal(line, &r); err != nil {
		return "", time.Time{}, fmt.Errorf("mnemos serve answered %q: %w", line, err)
	}
	if r.Error != "" {
		return "", time.Time{}, fmt.Errorf("mnemos serve refused: %s", r.Error)
	}
	return r.URL, r.Expires, nil
}
