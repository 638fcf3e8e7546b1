//go:build tools

// Package controlplane pins the kube-apiserver and etcd main packages so that
// `go build` in this module produces the control plane used by envtest and dev mode.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
