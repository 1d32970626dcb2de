// Package web is storbench's dashboard: server-rendered pages over a
// database it only reads (runs, a run, compare), a small JSON status for
// following a run live, and the bearer-token gate for listening beyond
// loopback. Pages are drawn by internal/render from what internal/storbench
// answers, the same calls the command line makes.
package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/store"
)

// Options configure a Server.
type Options struct {
	// DB is the database file to read. It may not exist yet: pages say so
	// until the first run creates it.
	DB string
	// Token, when set, is required of every request but the login page:
	// as "Authorization: Bearer TOKEN" or the cookie the login page sets.
	Token string
}

// Server answers the dashboard's requests. It never writes the database.
type Server struct {
	opts Options
	mux  *http.ServeMux
	db   database

	metricsMu sync.Mutex
	metrics   http.Handler // made once the database opens
}

// New makes a Server; nothing is opened until the first request.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), db: database{path: opts.DB}}
	s.routes()
	return s
}

// Handle adds a handler beside the pages (such as /metrics), behind the
// same token.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Handler is the whole dashboard: security headers, the token gate, the
// pages.
func (s *Server) Handler() http.Handler {
	return headers(s.gate(s.mux))
}

// Close closes the database if it was opened.
func (s *Server) Close() error { return s.db.close() }

// Store opens the database read-only on first use; until it exists the
// error wraps os.ErrNotExist. Handlers mounted beside the pages read it
// through this.
func (s *Server) Store(ctx context.Context) (store.Reader, error) { return s.db.get(ctx) }

// database is the read-only handle, opened on first success and kept.
type database struct {
	path string
	mu   sync.Mutex
	st   store.Store
}

func (d *database) get(ctx context.Context) (store.Store, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.st != nil {
		return d.st, nil
	}
	st, err := store.OpenReadOnly(ctx, d.path)
	if err != nil {
		return nil, err
	}
	d.st = st
	return st, nil
}

func (d *database) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.st == nil {
		return nil
	}
	err := d.st.Close()
	d.st = nil
	return err
}

// ErrOpenListen is listening beyond loopback with neither a token nor an
// explicit choice to go without one.
var ErrOpenListen = errors.New("listening beyond loopback needs --token (or STORBENCH_TOKEN, --token-file) or --insecure-listen")

// CheckListen judges a listen address: it reports whether it is loopback
// only, and refuses any other address unless a token is required or
// insecure says going without one was chosen. A host name other than
// localhost counts as beyond loopback: what it resolves to may change.
func CheckListen(addr string, token, insecure bool) (loopback bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--listen %q: give HOST:PORT, such as 127.0.0.1:8080: %w", addr, err)
	}
	ip := net.ParseIP(host)
	loopback = host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && !token && !insecure {
		return false, fmt.Errorf("--listen %s: %w", addr, ErrOpenListen)
	}
	return loopback, nil
}

// Serve answers on l until ctx ends, then lets requests in flight finish
// (a few seconds at most).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(shut)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// notYet says a database that is not there yet, in the user's words.
func notYet(path string, err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("No database at %s yet: it appears with the first storbench run or import that uses it.", path)
	}
	return err.Error()
}

// storeReader is what the pages read through.
type storeReader = store.Reader
