package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// devAssets finds the control plane the Makefile builds.
func devAssets(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, _ := filepath.Abs("../../../bin/k8s")
	return dir
}

// startDev runs RunDev in the background and returns its info and a stop
// function that waits until everything has stopped.
func startDev(t *testing.T, o DevOptions) (DevInfo, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	readyc := make(chan DevInfo, 1)
	done := make(chan error, 1)
	go func() { done <- RunDev(ctx, o, func(info DevInfo) { readyc <- info }) }()
	select {
	case info := <-readyc:
		return info, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("RunDev: %v", err)
			}
		}
	case err := <-done:
		cancel()
		t.Fatalf("RunDev stopped before it was ready: %v", err)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatal("dev mode not ready within 90 s")
	}
	return DevInfo{}, nil
}

func devCall(t *testing.T, info DevInfo, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, info.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+info.APIKey)
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPost {
		req.Header.Set("Idempotency-Key", "dev-restart-test-1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// TestDevRestartKeepsOptimizations starts dev mode, solves an optimization,
// stops everything, starts again on the same data dir and finds it there,
// with the same remembered API key.
func TestDevRestartKeepsOptimizations(t *testing.T) {
	dataDir := t.TempDir()
	o := DevOptions{DataDir: dataDir, ControlPlaneDir: devAssets(t)}
	o.api.listen = "127.0.0.1:0"

	info, stop := startDev(t, o)
	if _, err := os.Stat(filepath.Join(dataDir, "kubeconfig")); err != nil {
		t.Errorf("no kubeconfig written: %v", err)
	}
	var orders []string
	for i := range 5 {
		orders = append(orders, fmt.Sprintf(`{"id":"o%d","latitude":%f,"longitude":13.40}`, i, 52.50+float64(i)*0.01))
	}
	body := `{"depot":{"latitude":52.52,"longitude":13.405},"orders":[` + strings.Join(orders, ",") + `],"fleet":{"count":1,"capacity":10},"options":{"solver_seconds":1}}`
	status, rec := devCall(t, info, http.MethodPost, "/v1/optimizations", body)
	if status != http.StatusAccepted {
		t.Fatalf("create: %d %v", status, rec)
	}
	id := rec["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for rec["status"] != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %v", rec)
		}
		time.Sleep(100 * time.Millisecond)
		_, rec = devCall(t, info, http.MethodGet, "/v1/optimizations/"+id, "")
	}
	stop()

	again, stopAgain := startDev(t, o)
	defer stopAgain()
	if again.APIKey != info.APIKey {
		t.Errorf("the dev key changed across a restart: %s then %s", info.APIKey, again.APIKey)
	}
	status, rec = devCall(t, again, http.MethodGet, "/v1/optimizations/"+id, "")
	if status != http.StatusOK || rec["status"] != "completed" {
		t.Fatalf("after restart: %d %v", status, rec)
	}
	status, res := devCall(t, again, http.MethodGet, "/v1/optimizations/"+id+"/result", "")
	if status != http.StatusOK || res["kpis"].(map[string]any)["orders_total"] != float64(5) {
		t.Fatalf("result after restart: %d %v", status, res)
	}
}
