// Package metrics exposes what the newest stored results say as Prometheus
// metrics: an HTTP handler for /metrics and the text format for
// node_exporter's textfile collector. Every figure is the latest one per
// target (on its host), round and workload, in base units (seconds, bytes
// per second, operations per second), read from a store.Reader at each
// scrape, so a scrape answers for the database as it is, whoever wrote it
// (the handler remembers which run is the newest per target, round and
// workload, and reads only the results stored since its last scrape).
//
// docs/metrics.md lists the metrics, their labels and units.
package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
)

// Options shape the /metrics handler.
type Options struct {
	// Runtime adds the serving process's own Go runtime and process
	// metrics (go_*, process_*), for watching storbench serve itself.
	Runtime bool
	// ErrorLog receives errors reading the database or writing a scrape;
	// nil drops them (the scrape still fails with HTTP 500).
	ErrorLog promhttp.Logger
	// Trend judges every target × workload × round against its own
	// history (storbench.Trend does), for storbench_regression; nil
	// leaves that family out. The handler asks at its first scrape, then
	// again, in the background, only when results were stored since it
	// last asked: until that judgement is done, scrapes show the previous
	// one.
	Trend TrendFunc
}

// TrendFunc judges the stored histories, one judgement per series.
type TrendFunc func(ctx context.Context) ([]trend.Assessment, error)

// Handler serves the metrics of the database r reads, in whatever
// exposition format the scraper asks for (text or protobuf). Each scrape
// reads the database within the request's context, building on what the
// previous scrape read (see store.Reader.Latest); a scrape that
// cannot read it fails with HTTP 500, so Prometheus marks it down rather
// than seeing stale or partial figures.
func Handler(r store.Reader, opts Options) http.Handler {
	m := newMemo(opts.ErrorLog)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(&Collector{ctx: req.Context(), reader: r, trend: opts.Trend, memo: m})
		if opts.Runtime {
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: opts.ErrorLog, ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(w, req)
	})
}

// Export writes the metrics of the database r reads to w in Prometheus's
// text format, as node_exporter's textfile collector reads it (no
// timestamps, no runtime metrics: opts.Runtime and opts.ErrorLog do not
// apply). Nothing is written when the database cannot be read.
func Export(ctx context.Context, r store.Reader, w io.Writer, opts Options) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&Collector{ctx: ctx, reader: r, trend: opts.Trend})
	families, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("gathering metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("writing metrics: %w", err)
		}
	}
	return nil
}
