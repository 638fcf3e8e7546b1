package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/cmd/routeopt/app/devplane"
)

// RunDev starts etcd and kube-apiserver through `<this binary> dev-child`;
// in these tests this binary is the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == devplane.ChildCommand {
		err := devplane.RunChild(os.Args[2:], os.Stderr)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

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
	case <-time.After(3 * time.Minute):
		// Two control-plane starts of up to a minute each, on a busy machine.
		cancel()
		t.Fatal("dev mode not ready within 3 minutes")
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

// writeSelfSignedCert writes a certificate for 127.0.0.1 and its key, and
// returns a pool that trusts it.
func writeSelfSignedCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "routeopt test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// With --tls-cert-file and --tls-key-file the API serves HTTPS itself, and
// its links say https.
func TestDevServesTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeSelfSignedCert(t, dir)
	o := DevOptions{DataDir: filepath.Join(dir, "data"), ControlPlaneDir: devAssets(t)}
	o.api.listen = "127.0.0.1:0"
	o.api.tlsCertFile, o.api.tlsKeyFile = certFile, keyFile
	info, stop := startDev(t, o)
	defer stop()
	if !strings.HasPrefix(info.URL, "https://") {
		t.Fatalf("URL %s is not https", info.URL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, info.URL+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+info.APIKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("status %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	plain := strings.Replace(info.URL, "https://", "http://", 1)
	if resp, err := http.Get(plain + "/healthz"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered 200 on the TLS port")
		}
	}
}
