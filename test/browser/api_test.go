package browser

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// apiClient calls the public REST API with one company's key, as a client
// of the service does; the tests create their data and read the truth the
// portal must show through it.
type apiClient struct {
	base, key string
}

// do sends a request and decodes a JSON answer into out (when not nil); it
// returns the status and the raw body.
func (c *apiClient) do(t testing.TB, method, path string, body, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost && path == "/v1/optimizations" {
		req.Header.Set("Idempotency-Key", randomHex(12))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, string(raw)
}

// must is do that fails the test unless the status is want.
func (c *apiClient) must(t testing.TB, want int, method, path string, body, out any) {
	t.Helper()
	if status, raw := c.do(t, method, path, body, out); status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, raw, want)
	}
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Request bodies (OptimizationIn and its parts, docs/API.md).

type problem struct {
	Name    *string  `json:"name,omitempty"`
	Depot   depot    `json:"depot"`
	Orders  []order  `json:"orders"`
	Fleet   *fleet   `json:"fleet,omitempty"`
	Options *options `json:"options,omitempty"`
}

type depot struct {
	Label     string   `json:"label,omitempty"`
	Address   string   `json:"address,omitempty"`
	Latitude  *float64 `json:"latitude,omitempty"`
	Longitude *float64 `json:"longitude,omitempty"`
}

type order struct {
	ID              string   `json:"id"`
	Address         string   `json:"address,omitempty"`
	Latitude        float64  `json:"latitude"`
	Longitude       float64  `json:"longitude"`
	Demand          *float64 `json:"demand,omitempty"`
	TimeWindowStart string   `json:"time_window_start,omitempty"`
	TimeWindowEnd   string   `json:"time_window_end,omitempty"`
	Customer        string   `json:"customer,omitempty"`
}

type fleet struct {
	Count    int     `json:"count"`
	Capacity float64 `json:"capacity"`
}

type options struct {
	Strategy      string `json:"strategy,omitempty"`
	SolverSeconds int    `json:"solver_seconds,omitempty"`
}

// Responses.

type optimization struct {
	ID           string  `json:"id"`
	Name         *string `json:"name"`
	Status       string  `json:"status"`
	Stage        string  `json:"stage"`
	Progress     int     `json:"progress"`
	Orders       int     `json:"orders"`
	ErrorCode    *string `json:"error_code"`
	ErrorMessage *string `json:"error_message"`
	CreatedAt    string  `json:"created_at"`
	Links        struct {
		Web string `json:"web"`
	} `json:"links"`
}

type optimizationList struct {
	Items    []optimization `json:"items"`
	Page     int            `json:"page"`
	PageSize int            `json:"page_size"`
	Total    int            `json:"total"`
}

type result struct {
	ID   string `json:"id"`
	KPIs struct {
		OrdersAssigned   int     `json:"orders_assigned"`
		OrdersUnassigned int     `json:"orders_unassigned"`
		VehiclesUsed     int     `json:"vehicles_used"`
		DistanceM        float64 `json:"distance_m"`
		DriveSeconds     float64 `json:"drive_seconds"`
		LateStops        int     `json:"late_stops"`
		AvgUtilization   float64 `json:"avg_utilization"`
	} `json:"kpis"`
	Routes     []route      `json:"routes"`
	Unassigned []unassigned `json:"unassigned"`
}

type route struct {
	VehicleRef string  `json:"vehicle_ref"`
	DriverName *string `json:"driver_name"`
	DistanceM  float64 `json:"distance_m"`
	Stops      []stop  `json:"stops"`
	Polyline   *string `json:"polyline"`
}

type stop struct {
	Seq             int     `json:"seq"`
	OrderRef        string  `json:"order_ref"`
	Address         string  `json:"address"`
	Customer        *string `json:"customer"`
	TimeWindowStart *string `json:"time_window_start"`
	TimeWindowEnd   *string `json:"time_window_end"`
	ArrivalS        int     `json:"arrival_s"`
	LateS           int     `json:"late_s"`
}

type unassigned struct {
	OrderRef string `json:"order_ref"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

type me struct {
	Company struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"company"`
	Scopes []string `json:"scopes"`
}

type apiKey struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Prefix string   `json:"prefix"`
	Scopes []string `json:"scopes"`
	Key    string   `json:"key"`
}

// create submits a problem and returns the queued record.
func (c *apiClient) create(t testing.TB, p problem) optimization {
	t.Helper()
	var o optimization
	c.must(t, http.StatusAccepted, "POST", "/v1/optimizations", p, &o)
	return o
}

// waitStatus polls the record until it reaches status (and fails the test
// when it settles in another final state).
func (c *apiClient) waitStatus(t testing.TB, id, status string) optimization {
	t.Helper()
	var o optimization
	waitFor(t, 90*time.Second, "optimization "+id+" "+status, func() (bool, string) {
		c.must(t, 200, "GET", "/v1/optimizations/"+id, nil, &o)
		if o.Status != status && (o.Status == "completed" || o.Status == "failed" || o.Status == "cancelled") {
			t.Fatalf("optimization %s ended %s (%v %v), want %s", id, o.Status, deref(o.ErrorCode), deref(o.ErrorMessage), status)
		}
		return o.Status == status, fmt.Sprintf("%s %s %d%%", o.Status, o.Stage, o.Progress)
	})
	return o
}

// result fetches a completed optimization's result with its polylines.
func (c *apiClient) result(t testing.TB, id string) result {
	t.Helper()
	var r result
	c.must(t, 200, "GET", "/v1/optimizations/"+id+"/result?include_path=true", nil, &r)
	return r
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
