// Package createbench measures what one Optimization create costs the
// kube-apiserver, with the CRD as it was before the per-order CEL rules were
// dropped (testdata/optimizations-before.yaml, HEAD's generated CRD at the
// time) and with the current one, side by side on the same apiserver and
// interleaved, so that the ratio holds on a noisy machine. It has benchmarks only: plain
// `go test` (and `make test`) runs nothing and starts no envtest. Run:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench Create -benchtime 100x -count 3 ./test/createbench/
package createbench

import (
	"routeopt.io/routeopt/test/requests"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/config/crd"
)

// beforeGroup serves the old CRD next to the current one (routeopt.io) in
// the same apiserver: a CRD's group is part of its name, so both can be
// installed at once and their creates interleaved.
const beforeGroup = "before.routeopt.io"

// clients is how many creates are in flight at once, enough to keep the
// apiserver busy on 2 cores without measuring only queueing.
const clients = 4

const namespace = "bench"

// env is the envtest control plane, started by the first benchmark that
// needs it and stopped by TestMain.
var env struct {
	once      sync.Once
	err       error
	testEnv   *envtest.Environment
	rest      rest.Interface
	apiserver int // pid
	etcd      int // pid
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env.testEnv != nil {
		_ = env.testEnv.Stop()
	}
	os.Exit(code)
}

// BenchmarkCreate creates Optimizations of 10 and of 500 orders through
// client-go's REST client (4 clients at once), b.N with the CRD before the
// change and b.N with the current one, alternating in small batches (ABBA)
// so both see the same machine: on 2 shared cores, runs minutes apart are
// not comparable. It reports, for each CRD, creates/s and the CPU time of
// the kube-apiserver and etcd processes per create, read from /proc, and the
// after/before ratio of apiserver CPU. /proc counts 10 ms ticks: b.N should
// be 100 or more.
func BenchmarkCreate(b *testing.B) {
	startEnv(b)
	for _, orders := range []int{10, 500} {
		b.Run(fmt.Sprintf("orders=%d", orders), func(b *testing.B) {
			crds := []*crdRun{
				{name: "before", group: beforeGroup},
				{name: "after", group: v1alpha1.GroupVersion.Group},
			}
			for _, c := range crds {
				c.body = createBody(b, c.group, orders)
			}
			batch := 20
			if orders > 10 {
				batch = 5
			}
			b.ResetTimer()
			for round, done := 0, 0; done < b.N; round++ {
				n := min(batch, b.N-done)
				if round%2 == 0 {
					crds[0].creates(b, n)
					crds[1].creates(b, n)
				} else {
					crds[1].creates(b, n)
					crds[0].creates(b, n)
				}
				done += n
			}
			b.StopTimer()
			for _, c := range crds {
				c.report(b)
				c.deleteAll(b)
			}
			b.ReportMetric(float64(crds[1].apiserver)/float64(crds[0].apiserver), "apiserver-after/before")
		})
	}
}

// crdRun accumulates what the creates of one CRD cost.
type crdRun struct {
	name, group     string
	body            []byte
	n               int
	wall            time.Duration
	apiserver, etcd time.Duration
}

func (c *crdRun) path() string {
	return "/apis/" + c.group + "/" + v1alpha1.GroupVersion.Version + "/namespaces/" + namespace + "/optimizations"
}

// creates makes n Optimizations, clients at a time, and adds their cost.
func (c *crdRun) creates(b *testing.B, n int) {
	ctx := context.Background()
	apiStart, etcdStart := cpuTime(b, env.apiserver), cpuTime(b, env.etcd)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := env.rest.Post().AbsPath(c.path()).Param("fieldManager", "bench").
					SetHeader("Content-Type", "application/json").Body(c.body).Do(ctx).Error(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	c.wall += time.Since(start)
	c.apiserver += cpuTime(b, env.apiserver) - apiStart
	c.etcd += cpuTime(b, env.etcd) - etcdStart
	c.n += n
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("create (crd %s): %v", c.name, err)
	}
}

func (c *crdRun) report(b *testing.B) {
	n := float64(c.n)
	b.ReportMetric(n/c.wall.Seconds(), c.name+"-creates/s")
	b.ReportMetric(float64(c.apiserver.Microseconds())/1000/n, c.name+"-apiserver-ms/create")
	b.ReportMetric(float64(c.etcd.Microseconds())/1000/n, c.name+"-etcd-ms/create")
}

// deleteAll empties the CRD's collection, so that the next run does not pay
// for a grown watch cache and etcd.
func (c *crdRun) deleteAll(b *testing.B) {
	if err := env.rest.Delete().AbsPath(c.path()).Do(context.Background()).Error(); err != nil {
		b.Fatalf("delete collection (crd %s): %v", c.name, err)
	}
}

// startEnv starts kube-apiserver and etcd with both CRDs, once per process.
func startEnv(b *testing.B) {
	b.Helper()
	env.once.Do(func() { env.err = doStartEnv() })
	if env.err != nil {
		b.Fatal(env.err)
	}
}

func doStartEnv() error {
	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	before, err := beforeCRD()
	if err != nil {
		return err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets, _ = filepath.Abs("../../bin/k8s")
	}
	env.testEnv = &envtest.Environment{BinaryAssetsDirectory: assets, CRDs: append(crds, before)}
	cfg, err := env.testEnv.Start()
	if err != nil {
		return fmt.Errorf("unable to start envtest (run make envtest): %w", err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	env.rest = cs.CoreV1().RESTClient() // AbsPath reaches any group
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	host, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	if env.apiserver, err = pidOf("kube-apiserver", "--secure-port="+host.Port()); err != nil {
		return err
	}
	env.etcd, err = pidOf("etcd", env.testEnv.ControlPlane.Etcd.URL.Host)
	return err
}

// beforeCRD is the old CRD moved to beforeGroup.
func beforeCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := os.ReadFile("testdata/optimizations-before.yaml")
	if err != nil {
		return nil, err
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, c); err != nil {
		return nil, fmt.Errorf("testdata/optimizations-before.yaml: %w", err)
	}
	c.Spec.Group = beforeGroup
	c.Name = c.Spec.Names.Plural + "." + beforeGroup
	c.Spec.Names.ShortNames, c.Spec.Names.Categories = nil, nil
	return c, nil
}

// createBody is the JSON of an Optimization of group with n orders, valid
// under both CRDs, with generateName so the same bytes serve every create.
// Its orders look like the REST API's: an address, coordinates, a time
// window on every third, a customer and a phone.
func createBody(b *testing.B, group string, n int) []byte {
	b.Helper()
	spec := requests.Spec("create benchmark", n)
	obj := map[string]any{
		"apiVersion": schema.GroupVersion{Group: group, Version: v1alpha1.GroupVersion.Version}.String(),
		"kind":       "Optimization",
		"metadata":   map[string]any{"generateName": "bench-"},
		"spec":       spec,
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// pidOf finds the process named name whose command line has an argument
// containing needle: other envtests on the machine run kube-apiservers
// too, told apart by their ports.
func pidOf(name, needle string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		if len(args) == 0 || filepath.Base(string(args[0])) != name {
			continue
		}
		for _, a := range args[1:] {
			if strings.Contains(string(a), needle) {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no %s process with an argument containing %q", name, needle)
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// cpuTime is the user plus system CPU time pid has used so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, raw)
	}
	fields := strings.Fields(string(raw[end+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, raw)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("unexpected /proc/%d/stat: %q", pid, raw)
	}
	return time.Duration(utime+stime) * clockTick
}
