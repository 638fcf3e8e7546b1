package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/test/requests"
)

// BenchmarkCancelRunning measures POST /v1/optimizations/{id}/cancel of a
// running 500-order optimization, over HTTP, with the in-process runner:
// each iteration creates one (60 s budget), waits until it is optimizing,
// cancels it and checks that the answer is 200 and the optimization ends
// cancelled. It reports the cancel's latency (p50, p99, max). The solve
// itself keeps the cores busy, as in dev mode; BENCH_BUSY_PROCESSES=N adds
// N processes that spin for the whole run, so that both cores are
// saturated by other processes too:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench CancelRunning -benchtime 40x ./test/integration/
//	BENCH_BUSY_PROCESSES=2 KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench CancelRunning -benchtime 40x ./test/integration/
func BenchmarkCancelRunning(b *testing.B) {
	if n, _ := strconv.Atoi(os.Getenv("BENCH_BUSY_PROCESSES")); n > 0 {
		for range n {
			spin := exec.Command("sh", "-c", "while :; do :; done")
			if err := spin.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
		}
	}
	s := startSystemWith(b, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, nil)
	body := requests.Typical(500)
	body["options"] = map[string]any{"solver_seconds": 60}
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		status, rec := benchCall(b, s, "POST", "/v1/optimizations", body, fmt.Sprintf("cancel-bench-%06d", i))
		if status != http.StatusAccepted {
			b.Fatalf("create: %d %v", status, rec)
		}
		id := rec["id"].(string)
		waitUntil(b, time.Now(), time.Minute, func() bool {
			_, rec := benchCall(b, s, "GET", "/v1/optimizations/"+id, nil, "")
			return rec["stage"] == "optimizing"
		})
		b.StartTimer()
		start := time.Now()
		status, rec = benchCall(b, s, "POST", "/v1/optimizations/"+id+"/cancel", nil, "")
		latencies = append(latencies, time.Since(start))
		b.StopTimer()
		if status != http.StatusOK {
			b.Fatalf("cancel: %d %v", status, rec)
		}
		waitUntil(b, time.Now(), time.Minute, func() bool {
			_, rec := benchCall(b, s, "GET", "/v1/optimizations/"+id, nil, "")
			return rec["status"] == "cancelled"
		})
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(q*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(at(1), "max-ms")
}

// benchCall sends a request with the system's API key (and key as its
// Idempotency-Key when not empty) and decodes the answer.
func benchCall(b *testing.B, s *system, method, path string, body any, key string) (int, map[string]any) {
	b.Helper()
	var rd *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			b.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, nil)
	if rd != nil {
		req, err = http.NewRequest(method, s.url+path, rd)
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.apiKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
