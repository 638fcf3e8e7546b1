//go:build tools

// Package controlplane pins the kube-apiserver, etcd, kubectl and
// kube-controller-manager main packages so that `go build` in this module
// produces the control plane used by envtest, dev mode and the e2e harness
// (which runs the real Job controller and garbage collector).
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
