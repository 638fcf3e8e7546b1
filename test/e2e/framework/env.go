// Package framework runs routeopt's real binaries as separate processes
// against a real control plane: envtest's kube-apiserver and etcd, plus
// kube-controller-manager with the Job controller, the garbage collector and
// the TTL-after-finished controller, and a simulated Kubelet that executes
// pods with the routeopt binary under the pod's ServiceAccount token.
//
// Usage, from a package's TestMain:
//
//	var env *framework.Env
//
//	func TestMain(m *testing.M) {
//		go func() { _, _ = framework.BuildRouteopt() }() // overlap with Start
//		var err error
//		if env, err = framework.Start(framework.Options{}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		code := m.Run()
//		if code != 0 {
//			framework.KeepLogs()
//		}
//		env.Stop()
//		os.Exit(code)
//	}
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/config/crd"
)

// KCMControllers are the kube-controller-manager controllers the harness
// runs: Jobs and their pods, ownerReference garbage collection and
// ttlSecondsAfterFinished. No token, namespace or node controllers.
var KCMControllers = []string{"job-controller", "garbage-collector-controller", "ttl-after-finished-controller"}

// startedEnvs counts started Envs, which share WorkDir.
var startedEnvs atomic.Int32

// Options configure Start.
type Options struct {
	// AssetsDir holds kube-apiserver, etcd and kube-controller-manager;
	// default $KUBEBUILDER_ASSETS, else <repo>/bin/k8s (make envtest).
	AssetsDir string
	// ServiceAccountAdmission turns on the API server's ServiceAccount
	// admission plugin, which envtest disables: pods naming a missing
	// ServiceAccount are refused and get a projected token volume. It also
	// runs KCM's serviceaccount-controller, which creates each namespace's
	// "default" ServiceAccount the plugin needs for pods naming none.
	ServiceAccountAdmission bool
	// KCMArgs are extra kube-controller-manager flags.
	KCMArgs []string
	// StartTimeout bounds the wait for KCM to work; default 2 minutes.
	StartTimeout time.Duration
}

// Env is a running control plane.
type Env struct {
	// Config, Client and Clientset act as an admin (system:masters).
	Config    *rest.Config
	Client    client.WithWatch
	Clientset kubernetes.Interface
	// Scheme knows the built-in kinds and routeopt's.
	Scheme *runtime.Scheme
	// AdminKubeconfig is a kubeconfig file for Config.
	AdminKubeconfig string
	// KCM is the kube-controller-manager process.
	KCM *Process
	// KCMStartup is how long KCM took from exec to a working Job controller
	// and garbage collector.
	KCMStartup time.Duration

	testEnv *envtest.Environment
}

// Start starts etcd and kube-apiserver with routeopt's CRDs installed, then
// kube-controller-manager, and returns once the Job controller has created a
// pod and the garbage collector has removed it.
func Start(opts Options) (*Env, error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.AssetsDir == "" {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		opts.AssetsDir = filepath.Join(root, "bin", "k8s")
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	dir, err := WorkDir()
	if err != nil {
		return nil, err
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	startedEnvs.Add(1)
	e := &Env{testEnv: &envtest.Environment{BinaryAssetsDirectory: opts.AssetsDir, CRDs: crds}}
	if opts.ServiceAccountAdmission {
		e.testEnv.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	}
	if err := e.start(opts, dir); err != nil {
		KeepLogs()
		e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(opts Options, dir string) error {
	if _, err := e.testEnv.Start(); err != nil {
		return fmt.Errorf("unable to start envtest from %s (run make envtest): %w", opts.AssetsDir, err)
	}
	guardControlPlane()
	guardDir(e.testEnv.ControlPlane.APIServer.CertDir)
	guardDir(e.testEnv.ControlPlane.Etcd.DataDir)
	admin, err := e.testEnv.AddUser(envtest.User{Name: "e2e-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "admin-*.kubeconfig")
	if err != nil {
		return err
	}
	e.AdminKubeconfig = f.Name()
	_, err = f.Write(kubeconfig)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	e.Config = admin.Config()
	e.Config.QPS, e.Config.Burst = 200, 400
	e.Scheme = runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(e.Scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(e.Scheme); err != nil {
		return err
	}
	if e.Client, err = client.NewWithWatch(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return err
	}
	if e.Clientset, err = kubernetes.NewForConfig(e.Config); err != nil {
		return err
	}

	controllers := KCMControllers
	if opts.ServiceAccountAdmission {
		controllers = append([]string{"serviceaccount-controller"}, controllers...)
	}
	args := append([]string{
		"--kubeconfig=" + e.AdminKubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		// Every controller acts as the admin: no per-controller
		// ServiceAccounts, hence no token controller or signing key.
		"--use-service-account-credentials=false",
		"--secure-port=0", // no health/metrics server, so no port to pick
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--v=2",
	}, opts.KCMArgs...)
	began := time.Now()
	e.KCM, err = startProcess(ProcessOptions{
		Name: "kube-controller-manager",
		Path: filepath.Join(opts.AssetsDir, "kube-controller-manager"),
		Args: args,
	})
	if err != nil {
		return fmt.Errorf("%w (run make envtest)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := e.probeKCM(ctx); err != nil {
		return fmt.Errorf("kube-controller-manager does not work: %w; last lines of %s:\n%s", err, e.KCM.LogPath(), e.KCM.LogTail(40))
	}
	e.KCMStartup = time.Since(began)
	return nil
}

// probeKCM creates a Job in namespace default, waits for the Job controller
// to create its pod, deletes the Job and waits for the garbage collector (and
// the Job controller's finalizer removal) to delete the pod.
func (e *Env) probeKCM(ctx context.Context) error {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-kcm-probe", Namespace: metav1.NamespaceDefault},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "probe", Image: "probe", Command: []string{"true"}}},
		}}},
	}
	if err := e.Client.Create(ctx, job); err != nil {
		return err
	}
	inJob := client.MatchingLabels{batchv1.JobNameLabel: job.Name}
	pods := func() (int, error) {
		list := &corev1.PodList{}
		err := e.Client.List(ctx, list, client.InNamespace(job.Namespace), inJob)
		return len(list.Items), err
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		n, err := pods()
		return n > 0, err
	})
	if err != nil {
		return fmt.Errorf("no pod from the Job controller: %w", err)
	}
	if err := e.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return err
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		n, err := pods()
		return n == 0, err
	})
	if err != nil {
		return fmt.Errorf("the garbage collector did not delete the probe pod: %w", err)
	}
	return nil
}

// Stop stops kube-controller-manager and the control plane. The last Env
// to stop removes WorkDir unless a test failed (then it prints where the
// logs are).
func (e *Env) Stop() {
	if e.KCM != nil {
		if e.KCM.Exited() {
			keepLogs.Store(true)
			fmt.Fprintf(os.Stderr, "e2e: kube-controller-manager died during the tests; last lines of %s:\n%s\n", e.KCM.LogPath(), e.KCM.LogTail(40))
		}
		_ = e.KCM.Stop()
	}
	if err := e.testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping envtest: %v\n", err)
	}
	if startedEnvs.Add(-1) > 0 {
		return
	}
	if dir, err := WorkDir(); err == nil {
		if keepLogs.Load() {
			fmt.Fprintf(os.Stderr, "e2e: logs kept in %s\n", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}
}

// guardControlPlane lists envtest's etcd and kube-apiserver with the
// reaper: envtest runs them in their own process groups and only stops
// them from Stop, which a panic or a test timeout skips.
func guardControlPlane() {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 2 && fields[1] == self && fields[2] == entry.Name() {
			guard(pid)
		}
	}
}

// CreateNamespace creates a namespace with a generated name from prefix and
// the given labels (for example Pod Security ones). Namespaces are never
// deleted: no namespace controller runs.
func (e *Env) CreateNamespace(ctx context.Context, prefix string, labels map[string]string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// RestrictedLabels enforce the restricted Pod Security Standard.
var RestrictedLabels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

// EnsureServiceAccount creates a ServiceAccount unless it exists.
func (e *Env) EnsureServiceAccount(ctx context.Context, namespace, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := e.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
