package web

import (
	"context"
	"net/http"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/storbench"
)

// serveMetrics is Prometheus's /metrics over the same read-only database,
// with storbench_regression and serve's own Go runtime and process
// metrics; 503 until the
// database exists.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	h, err := s.metricsHandler(r)
	if err != nil {
		http.Error(w, err.Error(), failure(err))
		return
	}
	h.ServeHTTP(w, r)
}

func (s *Server) metricsHandler(r *http.Request) (http.Handler, error) {
	s.metricsMu.Lock()
	defer s.metricsMu.Unlock()
	if s.metrics == nil {
		st, err := s.reader(r)
		if err != nil {
			return nil, err
		}
		opts := storbench.MetricsOptions(st) // storbench_regression, as export has it
		opts.Runtime = true
		s.metrics = metrics.Handler(st, opts)
	}
	return s.metrics, nil
}

// warmMetrics answers one scrape nobody asked for, so that the first real
// one finds every series' newest run and every history judged (seconds
// over a large database) already done. A database that does not exist yet
// is left alone.
func (s *Server) warmMetrics(ctx context.Context) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return
	}
	if h, err := s.metricsHandler(r); err == nil {
		h.ServeHTTP(discard{}, r)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
