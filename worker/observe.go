package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/longrun/longrun/hostcheck"
	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// observability is how the worker reports on itself: its log format, and
// where Prometheus scrapes the SDK's metrics (workflow and activity task
// latencies, poller counts, sticky cache hits: what shows a slow or stuck
// worker before sessions feel it).
type observability struct {
	LogFormat   string // text or json
	MetricsAddr string // host:port serving /metrics; empty = no metrics
	// MetricsHosts are the names, besides loopback ones (and any IP when
	// MetricsAddr is every interface), /metrics answers to (hostcheck).
	MetricsHosts []string
}

func (o *observability) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&o.LogFormat, "log-format", or(getenv("LONGRUN_LOG_FORMAT"), "text"), "log format: text or json (env LONGRUN_LOG_FORMAT)")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", getenv("LONGRUN_METRICS_ADDR"), "serve Prometheus metrics on host:port at /metrics, e.g. :9090 (env LONGRUN_METRICS_ADDR; empty = off)")
	fs.Func("metrics-allowed-host", "a host name Prometheus scrapes /metrics by, besides loopback names and IP addresses (e.g. worker; repeatable): a request naming another host is refused, so DNS rebinding cannot read it", func(v string) error {
		o.MetricsHosts = append(o.MetricsHosts, v)
		return nil
	})
}

func (o *observability) validate() error {
	switch o.LogFormat {
	case "text", "json":
		return nil
	}
	return fmt.Errorf("--log-format: want text or json, got %q", o.LogFormat)
}

// logger writes to w in the chosen format. The SDK's own lines go through
// it too (client.Options.Logger), and the workflow logger adds the session
// id and run id to each, skipping lines during replay.
func (o *observability) logger(w io.Writer) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if o.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}

// startMetrics serves the SDK's metrics for Prometheus and returns the
// handler for client.Options.MetricsHandler and a func that stops serving.
// It listens before returning so a taken port fails the start, not a
// scrape an hour later. With no address it returns nil: the SDK's default
// is no metrics.
func (o *observability) startMetrics(logger *slog.Logger) (client.MetricsHandler, func(), error) {
	if o.MetricsAddr == "" {
		return nil, func() {}, nil
	}
	policy, err := hostcheck.New(o.MetricsAddr, o.MetricsHosts, "--metrics-allowed-host")
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	ln, err := net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	registry := prom.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:       registry,
		Gatherer:         registry,
		DefaultTimerType: tallyprom.HistogramTimerType,
		OnRegisterError:  func(err error) { logger.Warn("metrics: register", "error", err) },
	})
	// The scope's names follow the SDK's Prometheus conventions (_total
	// counters, _seconds timers), as the other SDKs' metrics do, so the
	// same dashboards work.
	// Label values may hold any text in Prometheus; keep the characters
	// task queues and workflow types use, so task_queue="e2e-1" is not
	// reported as "e2e_1".
	sanitize := sdktally.PrometheusSanitizeOptions
	sanitize.ValueCharacters.Characters = []rune{'_', '-', '.', ':', '/'}
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sanitize,
	}, time.Second)
	mux := http.NewServeMux()
	mux.Handle("/metrics", reporter.HTTPHandler())
	srv := &http.Server{Handler: hostcheck.Wrap(policy, mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "error", err)
		}
	}()
	// The bound address, so ":0" (tests) and ":9090" log where to scrape.
	o.MetricsAddr = ln.Addr().String()
	logger.Info("serving Prometheus metrics", "url", "http://"+o.MetricsAddr+"/metrics")
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = closer.Close()
	}
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), stop, nil
}
