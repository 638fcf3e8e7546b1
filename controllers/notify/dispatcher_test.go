package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
)

// stallingReader answers every Get of an optimization whose name starts
// with "slow-" only when release closes (a receiver that holds its
// workers), and every other Get with NotFound at once. It counts Gets and
// the most that were stalled at once.
type stallingReader struct {
	release chan struct{}

	mu                sync.Mutex
	gets              map[string]int
	stalled, maxStall int
}

func (r *stallingReader) Get(ctx context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	r.mu.Lock()
	r.gets[key.Name]++
	slow := strings.HasPrefix(key.Name, "slow-")
	if slow {
		r.stalled++
		r.maxStall = max(r.maxStall, r.stalled)
	}
	r.mu.Unlock()
	if slow {
		select {
		case <-r.release:
		case <-ctx.Done():
		}
		r.mu.Lock()
		r.stalled--
		r.mu.Unlock()
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: "routeopt.io", Resource: "optimizations"}, key.Name)
}

func (r *stallingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func (r *stallingReader) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gets[name]
}

func newTestDispatcher(t *testing.T, reader client.Reader) (*Dispatcher, context.CancelFunc) {
	t.Helper()
	policy, err := webhook.NewPolicy(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDispatcher(nil, reader, logr.Discard(), Options{Policy: policy, OperatorNamespace: "routeopt-system"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Start(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return d, stop
}

func testOpt(name string) *v1alpha1.Optimization {
	return &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-acme", Name: name, UID: types.UID("uid-" + name)}}
}

func testEndpoint(uid string) *v1alpha1.WebhookEndpoint {
	return &v1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-acme", Name: "webhook-1", UID: types.UID(uid)}}
}

// A stuck endpoint holds at most its own workers; another endpoint's jobs
// go through meanwhile, and a pair already queued or in flight is not
// taken twice.
func TestDispatcherIsolatesEndpoints(t *testing.T) {
	r := &stallingReader{release: make(chan struct{}), gets: map[string]int{}}
	d, stop := newTestDispatcher(t, r)
	slow, fast := testEndpoint("slow-endpoint"), testEndpoint("fast-endpoint")
	for i := range 10 {
		d.Enqueue(testOpt(fmt.Sprintf("slow-%d", i)), slow)
		d.Enqueue(testOpt(fmt.Sprintf("slow-%d", i)), slow) // a duplicate
	}
	for i := range 50 {
		d.Enqueue(testOpt(fmt.Sprintf("fast-%d", i)), fast)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.count("fast-49") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the healthy endpoint's jobs did not run while another endpoint was stuck")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	r.mu.Lock()
	maxStall := r.maxStall
	r.mu.Unlock()
	if maxStall != DefaultWorkersPerEndpoint {
		t.Errorf("%d deliveries in flight to the stuck endpoint, want the bound %d", maxStall, DefaultWorkersPerEndpoint)
	}
	// The duplicate of a pair in flight is dropped.
	d.Enqueue(testOpt("slow-0"), slow)
	close(r.release)
	deadline = time.Now().Add(5 * time.Second)
	for r.count("slow-9") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stuck endpoint's queue did not drain once it answered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	for i := range 10 {
		if n := r.count(fmt.Sprintf("slow-%d", i)); n != 1 {
			t.Errorf("slow-%d was taken %d times, want once", i, n)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.inflight) != 0 || len(d.queues) != 0 {
		t.Errorf("after the work ended: %d pairs in flight, %d queues", len(d.inflight), len(d.queues))
	}
}

// Forget drops what waits for an endpoint being deleted.
func TestDispatcherForget(t *testing.T) {
	r := &stallingReader{release: make(chan struct{}), gets: map[string]int{}}
	d, _ := newTestDispatcher(t, r)
	ep := testEndpoint("slow-endpoint")
	for i := range 10 {
		d.Enqueue(testOpt(fmt.Sprintf("slow-%d", i)), ep)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		n := r.stalled
		r.mu.Unlock()
		if n == DefaultWorkersPerEndpoint {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workers did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	d.Forget(ep.UID)
	deadline = time.Now().Add(5 * time.Second)
	for {
		d.mu.Lock()
		n := len(d.inflight)
		d.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pairs still in flight after Forget", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := DefaultWorkersPerEndpoint; i < 10; i++ {
		if n := r.count(fmt.Sprintf("slow-%d", i)); n != 0 {
			t.Errorf("slow-%d was taken after its endpoint was forgotten", i)
		}
	}
}

// deliver retries a failing receiver with the same body, signs every
// attempt, and reports the attempt that succeeded.
func TestDeliverRetriesWithTheSameBody(t *testing.T) {
	const secret = "whsec_svc_test"
	var (
		mu     sync.Mutex
		bodies []string
		times  []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(raw))
		times = append(times, time.Now())
		n := len(bodies)
		mu.Unlock()
		sig := r.Header.Get(webhook.SignatureHeader)
		ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(raw)))
		if !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("User-Agent") != UserAgent || r.Method != http.MethodPost {
			t.Errorf("attempt %d: method %s headers %v", n, r.Method, r.Header)
		}
		if n < 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	policy, err := webhook.NewPolicy([]string{strings.TrimPrefix(srv.URL, "http://")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDispatcher(nil, nil, logr.Discard(), Options{Policy: policy})
	o := d.deliver(context.Background(), srv.URL+"/hook", secret, []byte(`{"id":"evt_1"}`))
	if o == nil || o.result != v1alpha1.WebhookDelivered || o.attempts != 3 || o.lastStatus == nil || *o.lastStatus != 202 {
		t.Fatalf("outcome %+v", o)
	}
	if len(bodies) != 3 || bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Errorf("bodies %q", bodies)
	}
	// Attempts at about 0 s, 1 s and 3 s.
	if d1, d2 := times[1].Sub(times[0]), times[2].Sub(times[1]); d1 < 900*time.Millisecond || d2 < 1900*time.Millisecond || d2 > 3*time.Second {
		t.Errorf("attempts %s and %s apart, want about 1 s and 2 s", d1, d2)
	}

	// A cancelled delivery reports nothing to record.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if o := d.deliver(ctx, srv.URL+"/hook", secret, []byte(`{}`)); o != nil {
		t.Errorf("a cancelled delivery reported %+v", o)
	}
}
