package web

import (
	"net/http"

	"github.com/storbench/storbench/internal/metrics"
)

// serveMetrics is Prometheus's /metrics over the same read-only database,
// with serve's own Go runtime and process metrics; 503 until the
// database exists.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metricsMu.Lock()
	h := s.metrics
	if h == nil {
		st, err := s.reader(r)
		if err != nil {
			s.metricsMu.Unlock()
			http.Error(w, err.Error(), failure(err))
			return
		}
		h = metrics.Handler(st, metrics.Options{Runtime: true})
		s.metrics = h
	}
	s.metricsMu.Unlock()
	h.ServeHTTP(w, r)
}
