package framework

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// ActionKind says what the Kubelet does with a new pod.
type ActionKind string

const (
	// ActionRun executes the pod's first container with the routeopt binary.
	ActionRun ActionKind = "Run"
	// ActionDisrupt fails the pod with a DisruptionTarget condition, as a
	// drained node, a preemption or a taint eviction does.
	ActionDisrupt ActionKind = "Disrupt"
	// ActionHold leaves the pod Pending (unscheduled) until Kubelet.Act.
	ActionHold ActionKind = "Hold"
	// ActionExit ends the pod as if its container exited with ExitCode,
	// without executing anything (for example OOMKilled, 137).
	ActionExit ActionKind = "Exit"
)

// Action is a Kubelet decision about one pod.
type Action struct {
	Kind ActionKind
	// Reason is the DisruptionTarget reason of Disrupt (default
	// TerminationByKubelet) or the container's terminated reason of Exit
	// (default Completed or Error).
	Reason string
	// Message is the DisruptionTarget message of Disrupt or the
	// termination message of Exit.
	Message string
	// ExitCode is Exit's container exit code.
	ExitCode int32
}

// Run executes the pod.
func Run() Action { return Action{Kind: ActionRun} }

// Hold leaves the pod pending.
func Hold() Action { return Action{Kind: ActionHold} }

// Disrupt fails the pod with DisruptionTarget=True and reason (empty means
// TerminationByKubelet; DeletionByTaintManager, PreemptionByScheduler and
// EvictionByEvictionAPI are the other reasons Kubernetes uses).
func Disrupt(reason string) Action { return Action{Kind: ActionDisrupt, Reason: reason} }

// Exit ends the pod with exit code, container reason and termination message.
func Exit(code int32, reason, message string) Action {
	return Action{Kind: ActionExit, ExitCode: code, Reason: reason, Message: message}
}

// RunAll is the default policy: run every pod.
func RunAll(*corev1.Pod) Action { return Run() }

// KubeletOptions configure a Kubelet.
type KubeletOptions struct {
	// Binary replaces the first element of the container's command (the
	// binary's path in the image, e.g. /routeopt); see Routeopt.
	Binary string
	// Selector is a label selector of the pods to run, e.g.
	// "app.kubernetes.io/component=solver"; empty means all pods.
	Selector string
	// Namespace limits the Kubelet to one namespace, so that tests running
	// in parallel can each have theirs; empty means all namespaces.
	Namespace string
	// Decide is called once for each new pod; nil means RunAll. It runs on
	// the Kubelet's event goroutine: return quickly, do not call the Kubelet.
	Decide func(*corev1.Pod) Action
	// NodeName is the node pods are bound to; default "e2e-node".
	NodeName string
}

// PodRecord is what the Kubelet did with one pod.
type PodRecord struct {
	Namespace, Name string
	UID             types.UID
	// Action is the last action applied (Hold until Act changes it).
	Action Action
	// Phase is the last phase the Kubelet reported (Pending while held or
	// starting).
	Phase corev1.PodPhase
	// ExitCode is the container's, valid once Finished is set.
	ExitCode int32
	// Started is when the process started; Finished when the terminal
	// status was written.
	Started, Finished time.Time
	// Message is the termination message, or why the pod does not start.
	Message string
	// LogPath holds the container's stdout and stderr.
	LogPath string
}

// Kubelet is a simulated node: it binds each new pod it selects to its node
// and, according to Decide, executes the pod's first container as a local
// process with the pod's ServiceAccount token and reports pod status as the
// kubelet does, so that the real Job controller sees real pod lifecycles.
// It ignores volumes, probes, init and sidecar containers and $(VAR)
// expansion; env supports value, fieldRef and resourceFieldRef.
type Kubelet struct {
	env  *Env
	opts KubeletOptions
	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup
	dir  string

	mu      sync.Mutex
	pods    map[types.UID]*podState
	order   []types.UID
	changed chan struct{} // closed on every record change
}

type podState struct {
	pod      *corev1.Pod // as first seen
	rec      PodRecord
	held     bool
	deleting bool
	cancel   context.CancelCauseFunc // while starting or running
}

// errStopped is the cause when the Kubelet itself stops: pods are left as
// they are, like a kubelet that died.
var errStopped = errors.New("kubelet stopped")

// deleted is the cause when a running pod is deleted: the kubelet stops the
// container within the grace period and then removes the pod.
type deleted struct{ grace time.Duration }

func (deleted) Error() string { return "pod deleted" }

// acted is the cause when Act disrupts or exits a running pod.
type acted struct{ a Action }

func (a acted) Error() string { return string(a.a.Kind) }

// StartKubelet starts a Kubelet for the test; it stops (killing the pods'
// processes) when the test ends and prints what it did if the test failed.
func (e *Env) StartKubelet(t testing.TB, opts KubeletOptions) *Kubelet {
	t.Helper()
	k, err := e.startKubelet(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.Stop()
		if t.Failed() {
			keepLogs.Store(true)
			k.report(t)
		}
	})
	return k
}

func (e *Env) startKubelet(opts KubeletOptions) (*Kubelet, error) {
	if opts.Decide == nil {
		opts.Decide = RunAll
	}
	if opts.NodeName == "" {
		opts.NodeName = "e2e-node"
	}
	work, err := WorkDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(work, "kubelet-")
	if err != nil {
		return nil, err
	}
	k := &Kubelet{env: e, opts: opts, dir: dir, pods: map[types.UID]*podState{}, changed: make(chan struct{})}
	k.ctx, k.stop = context.WithCancelCause(context.Background())
	lw := cache.NewFilteredListWatchFromClient(e.Clientset.CoreV1().RESTClient(), "pods", opts.Namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = opts.Selector })
	informer := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{})
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.observe(obj.(*corev1.Pod), false) },
		UpdateFunc: func(_, obj any) { k.observe(obj.(*corev1.Pod), false) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				k.observe(pod, true)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	k.wg.Go(func() { informer.RunWithContext(k.ctx) })
	if !cache.WaitForCacheSync(k.ctx.Done(), informer.HasSynced) {
		k.Stop()
		return nil, errors.New("kubelet: pod informer did not sync")
	}
	return k, nil
}

// Stop stops watching and kills the pods' processes without reporting
// their end, as a dead node would.
func (k *Kubelet) Stop() {
	k.stop(errStopped)
	k.wg.Wait()
}

// observe handles every pod event.
func (k *Kubelet) observe(pod *corev1.Pod, gone bool) {
	k.mu.Lock()
	st := k.pods[pod.UID]
	k.mu.Unlock()
	if st == nil {
		if gone || pod.DeletionTimestamp != nil || pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			return
		}
		a := k.opts.Decide(pod) // outside the lock: Decide may be slow
		k.mu.Lock()
		defer k.mu.Unlock()
		st = &podState{pod: pod, rec: PodRecord{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Phase: corev1.PodPending}}
		k.pods[pod.UID] = st
		k.order = append(k.order, pod.UID)
		k.apply(st, a)
		return
	}
	if !gone && pod.DeletionTimestamp == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	st.deleting = true
	switch {
	case st.cancel != nil:
		grace := time.Duration(0)
		if !gone && pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		st.cancel(deleted{grace: grace})
	case !gone && !st.held && !st.rec.Finished.IsZero() && ptr.Deref(pod.DeletionGracePeriodSeconds, 0) > 0:
		// Finished before the deletion was seen: confirm it, as the kubelet does.
		k.wg.Go(func() { k.forceDelete(pod) })
	}
}

// apply starts action a on a new or held pod; k.mu is held.
func (k *Kubelet) apply(st *podState, a Action) {
	st.rec.Action = a
	st.held = a.Kind == ActionHold
	k.notify()
	if st.held {
		return
	}
	ctx, cancel := context.WithCancelCause(k.ctx)
	st.cancel = cancel
	k.wg.Go(func() { k.execute(ctx, st, a) })
}

// Act applies a to a held pod, or disrupts or exits a running one (its
// process gets SIGTERM and the pod's grace period; SIGKILL for Exit).
func (k *Kubelet) Act(namespace, name string, a Action) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	var st *podState
	for _, uid := range k.order {
		if s := k.pods[uid]; s.rec.Namespace == namespace && s.rec.Name == name {
			st = s
		}
	}
	switch {
	case st == nil:
		return fmt.Errorf("kubelet: no pod %s/%s", namespace, name)
	case st.held:
		k.apply(st, a)
		return nil
	case st.cancel != nil && (a.Kind == ActionDisrupt || a.Kind == ActionExit):
		st.rec.Action = a
		st.cancel(acted{a: a})
		return nil
	default:
		return fmt.Errorf("kubelet: cannot %s pod %s/%s (action %s, phase %s)", a.Kind, namespace, name, st.rec.Action.Kind, st.rec.Phase)
	}
}

// outcome is how a container ended.
type outcome struct {
	exitCode          int32
	reason, message   string
	started, finished time.Time
	containerID       string
	disruption        *Action
}

// execute binds the pod to the node and carries out a.
func (k *Kubelet) execute(ctx context.Context, st *podState, a Action) {
	pod := st.pod
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.opts.NodeName},
	}
	if err := k.env.Clientset.CoreV1().Pods(pod.Namespace).Bind(k.ctx, binding, metav1.CreateOptions{}); err != nil {
		k.finish(st, nil, fmt.Sprintf("unable to bind: %v", err))
		return
	}
	now := time.Now()
	switch a.Kind {
	case ActionRun:
		k.run(ctx, st)
	case ActionDisrupt:
		k.terminate(st, outcome{exitCode: 137, reason: "Error", started: now, finished: now, disruption: &a})
	case ActionExit:
		k.terminate(st, outcome{exitCode: a.ExitCode, reason: a.Reason, message: a.Message, started: now, finished: now})
	}
}

// run executes the pod's first container and reports its life.
func (k *Kubelet) run(ctx context.Context, st *podState) {
	pod := st.pod
	c := &pod.Spec.Containers[0]
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	var kubeconfig string
	waiting := false
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if kubeconfig, err = k.env.KubeconfigForServiceAccount(ctx, pod.Namespace, sa, pod); err != nil && !waiting {
			waiting = true // the kubelet retries mounting the token volume
			k.waiting(st, "ContainerCreating", err.Error())
		}
		return err == nil, nil
	})
	if err != nil {
		k.interrupted(ctx, st, outcome{})
		return
	}
	env, err := k.containerEnv(pod, c)
	if err != nil {
		k.waiting(st, "CreateContainerConfigError", err.Error())
		<-ctx.Done()
		k.interrupted(ctx, st, outcome{})
		return
	}
	// KUBECONFIG too, for commands without --kubeconfig: the analogue of
	// the in-cluster config a real pod finds.
	env = append([]string{"KUBECONFIG=" + kubeconfig}, env...)
	base := filepath.Join(k.dir, pod.Namespace+"."+pod.Name)
	terminationLog := base + ".termination-log"
	args := append(append([]string{}, c.Command...), c.Args...)
	if len(c.Command) > 0 {
		args = args[1:] // the in-image binary path
	}
	args = append(args, "--kubeconfig="+kubeconfig, "--termination-log="+terminationLog)
	o := outcome{started: time.Now()}
	err = os.WriteFile(terminationLog, nil, 0o644)
	var proc *Process
	if err == nil {
		proc, err = startProcess(ProcessOptions{Name: pod.Name, Path: k.opts.Binary, Args: args, Env: env, Dir: k.dir, LogFile: base + ".log"})
	}
	if err != nil {
		o.finished, o.exitCode, o.reason, o.message = time.Now(), 128, "StartError", err.Error()
		k.terminate(st, o)
		return
	}
	o.containerID = "e2e://" + strconv.Itoa(proc.Pid())
	k.mu.Lock()
	st.rec.Started, st.rec.LogPath = o.started, proc.LogPath()
	k.mu.Unlock()
	if err := k.updateStatus(pod, func(s *corev1.PodStatus) { running(s, c, o) }); err != nil {
		k.note(st, fmt.Sprintf("unable to report Running: %v", err))
	}
	k.mu.Lock()
	st.rec.Phase = corev1.PodRunning
	k.notify()
	k.mu.Unlock()

	select {
	case <-proc.Done():
	case <-ctx.Done():
		var grace time.Duration
		switch cause := context.Cause(ctx).(type) {
		case deleted:
			grace = cause.grace
		case acted:
			if cause.a.Kind == ActionDisrupt {
				grace = time.Duration(ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
			}
		}
		_ = proc.StopWithin(min(grace, 30*time.Second))
	}
	o.finished = time.Now()
	o.exitCode = int32(proc.ExitCode())
	o.message = terminationMessage(terminationLog, proc, c, o.exitCode)
	if ctx.Err() != nil {
		k.interrupted(ctx, st, o)
		return
	}
	k.terminate(st, o)
}

// interrupted ends a pod whose start or run was cut short, by cause.
func (k *Kubelet) interrupted(ctx context.Context, st *podState, o outcome) {
	now := time.Now()
	switch cause := context.Cause(ctx).(type) {
	case acted:
		if o.started.IsZero() {
			o = outcome{exitCode: 137, started: now, finished: now}
		}
		if cause.a.Kind == ActionExit {
			o.exitCode, o.reason, o.message = cause.a.ExitCode, cause.a.Reason, cause.a.Message
		} else {
			o.disruption = &cause.a
		}
	case deleted:
		if o.started.IsZero() {
			// Never started: the runtime reports an unknown, killed container.
			o = outcome{exitCode: 137, reason: "ContainerStatusUnknown", message: "The container could not be located when the pod was terminated", started: now, finished: now}
		}
	default: // the Kubelet stopped
		k.finish(st, nil, "kubelet stopped")
		return
	}
	k.terminate(st, o)
}

// terminate reports the pod terminal and, when it is being deleted,
// removes it as the kubelet does once the containers are gone.
func (k *Kubelet) terminate(st *podState, o outcome) {
	pod := st.pod
	c := &pod.Spec.Containers[0]
	if o.reason == "" {
		o.reason = "Completed"
		if o.exitCode != 0 {
			o.reason = "Error"
		}
	}
	phase := corev1.PodSucceeded
	if o.exitCode != 0 || o.disruption != nil {
		phase = corev1.PodFailed
	}
	err := k.updateStatus(pod, func(s *corev1.PodStatus) { terminated(s, c, phase, o) })
	note := o.message
	if err != nil {
		note = fmt.Sprintf("unable to report %s: %v", phase, err)
	}
	k.mu.Lock()
	st.rec.ExitCode = o.exitCode
	if st.rec.Started.IsZero() {
		st.rec.Started = o.started
	}
	deleting := st.deleting
	k.mu.Unlock()
	k.finish(st, &phase, note)
	if deleting {
		k.forceDelete(pod)
	}
}

// finish records the end of the Kubelet's work on a pod.
func (k *Kubelet) finish(st *podState, phase *corev1.PodPhase, message string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if phase != nil {
		st.rec.Phase = *phase
	}
	st.rec.Message, st.rec.Finished = message, time.Now()
	st.cancel = nil
	k.notify()
}

func (k *Kubelet) note(st *podState, message string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st.rec.Message = message
	k.notify()
}

// waiting reports the container waiting with reason, as the kubelet does
// when it cannot start it yet.
func (k *Kubelet) waiting(st *podState, reason, message string) {
	k.note(st, message)
	c := &st.pod.Spec.Containers[0]
	_ = k.updateStatus(st.pod, func(s *corev1.PodStatus) {
		s.ContainerStatuses = []corev1.ContainerStatus{containerStatus(c, "", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})}
		setCondition(s, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [" + c.Name + "]"})
		setCondition(s, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [" + c.Name + "]"})
	})
}

// forceDelete removes a pod whose containers are gone (grace period 0, UID
// precondition), which is how a graceful deletion completes.
func (k *Kubelet) forceDelete(pod *corev1.Pod) {
	err := k.env.Clientset.CoreV1().Pods(pod.Namespace).Delete(k.ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && k.ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "e2e kubelet: unable to delete pod %s/%s: %v\n", pod.Namespace, pod.Name, err)
	}
}

// updateStatus writes the pod's status (as admin, status subresource);
// a pod that is gone is not an error.
func (k *Kubelet) updateStatus(pod *corev1.Pod, mutate func(*corev1.PodStatus)) error {
	pods := k.env.Clientset.CoreV1().Pods(pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(k.ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		mutate(&cur.Status)
		_, err = pods.UpdateStatus(k.ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// running is the status of a pod whose only container runs.
func running(s *corev1.PodStatus, c *corev1.Container, o outcome) {
	s.Phase = corev1.PodRunning
	s.HostIP, s.PodIP = "127.0.0.1", "127.0.0.1"
	s.HostIPs, s.PodIPs = []corev1.HostIP{{IP: "127.0.0.1"}}, []corev1.PodIP{{IP: "127.0.0.1"}}
	if s.StartTime == nil {
		s.StartTime = ptr.To(metav1.NewTime(o.started))
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setCondition(s, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue})
	}
	s.ContainerStatuses = []corev1.ContainerStatus{containerStatus(c, o.containerID, corev1.ContainerState{
		Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(o.started)},
	})}
}

// terminated is the status the kubelet reports for a pod with
// restartPolicy Never once its container has exited (pkg/kubelet/status).
func terminated(s *corev1.PodStatus, c *corev1.Container, phase corev1.PodPhase, o outcome) {
	reason := "PodFailed"
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	if phase == corev1.PodSucceeded {
		reason, initialized.Reason = "PodCompleted", "PodCompleted"
	}
	s.Phase = phase
	if s.StartTime == nil {
		s.StartTime = ptr.To(metav1.NewTime(o.started))
	}
	s.HostIP, s.HostIPs = "127.0.0.1", []corev1.HostIP{{IP: "127.0.0.1"}}
	setCondition(s, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse})
	setCondition(s, initialized)
	setCondition(s, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: reason})
	setCondition(s, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reason})
	if d := o.disruption; d != nil {
		cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: d.Reason, Message: d.Message}
		if cond.Reason == "" {
			cond.Reason = "TerminationByKubelet"
		}
		if cond.Message == "" {
			cond.Message = "Pod was terminated in response to imminent node shutdown."
		}
		setCondition(s, cond)
	}
	s.ContainerStatuses = []corev1.ContainerStatus{containerStatus(c, o.containerID, corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{
			ExitCode: o.exitCode, Reason: o.reason, Message: o.message, ContainerID: o.containerID,
			StartedAt: metav1.NewTime(o.started), FinishedAt: metav1.NewTime(o.finished),
		},
	})}
}

func containerStatus(c *corev1.Container, id string, state corev1.ContainerState) corev1.ContainerStatus {
	up := state.Running != nil
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "e2e://" + c.Image, ContainerID: id,
		State: state, Ready: up, Started: ptr.To(up),
	}
}

// setCondition sets a condition, keeping its transition time when the
// status does not change.
func setCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			if s.Conditions[i].Status == c.Status {
				c.LastTransitionTime = s.Conditions[i].LastTransitionTime
			}
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

// Termination message limits of the kubelet (pkg/kubelet/container).
const (
	maxTerminationMessage = 4096
	maxLogMessageLines    = 80
	maxLogMessageBytes    = 2048
)

// terminationMessage is the termination log file's content or, when it is
// empty and the policy says so, the tail of the logs of a failed container.
func terminationMessage(path string, proc *Process, c *corev1.Container, exitCode int32) string {
	b, _ := os.ReadFile(path)
	if len(b) > maxTerminationMessage {
		b = b[:maxTerminationMessage]
	}
	if len(b) > 0 || exitCode == 0 || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		return string(b)
	}
	tail := proc.LogTail(maxLogMessageLines)
	if len(tail) > maxLogMessageBytes {
		tail = tail[len(tail)-maxLogMessageBytes:]
	}
	return tail
}

// containerEnv is the process environment: a minimal base plus the
// container's env, resolved as the kubelet does.
func (k *Kubelet) containerEnv(pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + k.dir, "TMPDIR=" + os.TempDir(), "HOSTNAME=" + pod.Name}
	for _, v := range c.Env {
		value := v.Value
		var err error
		switch f := v.ValueFrom; {
		case f == nil:
		case f.ResourceFieldRef != nil:
			value, err = resourceValue(c, f.ResourceFieldRef)
		case f.FieldRef != nil:
			value, err = fieldValue(pod, f.FieldRef.FieldPath, k.opts.NodeName)
		default:
			err = errors.New("only value, fieldRef and resourceFieldRef are supported by the e2e kubelet")
		}
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", v.Name, err)
		}
		env = append(env, v.Name+"="+value)
	}
	return env, nil
}

// Node allocatable used for unset limits, as the kubelet does.
var allocatableMemory = resource.MustParse("8Gi")

// resourceValue resolves a resourceFieldRef, rounding up to the divisor
// (pkg/api/v1/resource: limits.cpu 1500m with divisor 1 gives "2").
func resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	list := c.Resources.Requests
	if kind == "limits" {
		list = c.Resources.Limits
	}
	q, ok := list[corev1.ResourceName(name)]
	switch {
	case ok:
	case kind == "limits" && name == "cpu":
		q = *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)
	case kind == "limits" && name == "memory":
		q = allocatableMemory
	case kind != "limits" && kind != "requests":
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	if name == "cpu" {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// fieldValue resolves the usual fieldRef paths.
func fieldValue(pod *corev1.Pod, path, node string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return node, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.podIP", "status.hostIPs", "status.podIPs":
		return "127.0.0.1", nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(key, "']")], nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(key, "']")], nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// notify wakes waiters; k.mu is held.
func (k *Kubelet) notify() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// Pods returns the records of every pod seen, in the order they came.
func (k *Kubelet) Pods() []PodRecord {
	k.mu.Lock()
	defer k.mu.Unlock()
	recs := make([]PodRecord, 0, len(k.order))
	for _, uid := range k.order {
		recs = append(recs, k.pods[uid].rec)
	}
	return recs
}

// Pod returns the record of the latest pod named namespace/name.
func (k *Kubelet) Pod(namespace, name string) (PodRecord, bool) {
	var found PodRecord
	ok := false
	for _, r := range k.Pods() {
		if r.Namespace == namespace && r.Name == name {
			found, ok = r, true
		}
	}
	return found, ok
}

// WaitFor waits until cond holds for the records and returns them.
func (k *Kubelet) WaitFor(ctx context.Context, cond func([]PodRecord) bool) ([]PodRecord, error) {
	for {
		k.mu.Lock()
		changed := k.changed
		k.mu.Unlock()
		recs := k.Pods()
		if cond(recs) {
			return recs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return recs, fmt.Errorf("kubelet: %w waiting; pods so far: %+v", ctx.Err(), recs)
		}
	}
}

// WaitPods waits until n pods are settled: finished (terminal status
// written) or held.
func (k *Kubelet) WaitPods(ctx context.Context, n int) ([]PodRecord, error) {
	return k.WaitFor(ctx, func(recs []PodRecord) bool {
		settled := 0
		for _, r := range recs {
			if !r.Finished.IsZero() || r.Action.Kind == ActionHold {
				settled++
			}
		}
		return settled >= n
	})
}

// report prints what the Kubelet did, with the tail of failed pods' logs.
func (k *Kubelet) report(t testing.TB) {
	for _, r := range k.Pods() {
		t.Logf("kubelet: pod %s/%s action=%s phase=%s exit=%d message=%q", r.Namespace, r.Name, r.Action.Kind, r.Phase, r.ExitCode, r.Message)
		if r.LogPath != "" && (r.ExitCode != 0 || r.Finished.IsZero()) {
			b, _ := os.ReadFile(r.LogPath)
			t.Logf("last lines of %s:\n%s", r.LogPath, tailLines(string(b), 30))
		}
	}
}
