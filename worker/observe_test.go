package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string {
		if k == "TEMPORAL_CONFIG_FILE" && kv[k] == "" {
			return "/nonexistent/longrun-test/temporal.toml" // never the developer's own
		}
		return kv[k]
	}
}

func TestLogFormat(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, "text", m.Observe.LogFormat)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_LOG_FORMAT": "json"}))
	require.NoError(t, err)
	var buf bytes.Buffer
	m.Observe.logger(&buf).Info("worker started", "task_queue", "q")
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	require.Equal(t, "worker started", line["msg"])
	require.Equal(t, "q", line["task_queue"])

	m, err = ParseFlags([]string{"--log-format", "text"}, env(map[string]string{"LONGRUN_LOG_FORMAT": "json"}))
	require.NoError(t, err, "the flag wins over the environment")
	buf.Reset()
	m.Observe.logger(&buf).Info("hello")
	require.Contains(t, buf.String(), "msg=hello")

	_, err = ParseFlags([]string{"--log-format", "yaml"}, env(nil))
	require.ErrorContains(t, err, `--log-format: want text or json, got "yaml"`)
}

// The SDK's metrics reach a Prometheus scrape with Prometheus names.
func TestMetricsServedForPrometheus(t *testing.T) {
	t.Parallel()
	o := observability{MetricsAddr: "127.0.0.1:0"}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, stop, err := o.startMetrics(logger)
	require.NoError(t, err)
	defer stop()
	require.NotEqual(t, "127.0.0.1:0", o.MetricsAddr, "the bound port is reported")

	h.WithTags(map[string]string{"task_queue": "e2e-q.1"}).Counter("temporal_workflow_task_queue_poll_succeed").Inc(3)
	h.Timer("temporal_activity_execution_latency").Record(250 * time.Millisecond)

	var body string
	// Tally reports to Prometheus once a second; until then the counter
	// is registered at 0.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + o.MetricsAddr + "/metrics")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if strings.Contains(body, `temporal_workflow_task_queue_poll_succeed_total{task_queue="e2e-q.1"} 3`) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Contains(t, body, `temporal_workflow_task_queue_poll_succeed_total{task_queue="e2e-q.1"} 3`)
	require.Contains(t, body, "temporal_activity_execution_latency_seconds_bucket")
	require.Contains(t, body, "go_goroutines")

	// The Host check is in front: a rebinding page's name is refused, a
	// name given with --metrics-allowed-host is not.
	for host, want := range map[string]int{"rebind.test": http.StatusMisdirectedRequest, "localhost": http.StatusOK} {
		req, err := http.NewRequest(http.MethodGet, "http://"+o.MetricsAddr+"/metrics", nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, host)
	}
	m, err := ParseFlags([]string{"--metrics-addr", "127.0.0.1:0", "--metrics-allowed-host", "worker"}, env(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"worker"}, m.Observe.MetricsHosts)
}

func TestMetricsOffByDefaultAndBadAddress(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	h, stop, err := m.Observe.startMetrics(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	stop()
	require.Nil(t, h, "no handler: the SDK's default, no metrics")

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_METRICS_ADDR": "256.0.0.1:bad"}))
	require.NoError(t, err)
	_, _, err = m.Observe.startMetrics(slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "--metrics-addr")
}
