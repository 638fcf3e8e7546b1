package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenLifetime is long enough for any test; tokens bound to a pod die with
// the pod anyway.
const tokenLifetime = 3600

// RESTConfigForServiceAccount returns a client config that authenticates
// only with a fresh token of ServiceAccount namespace/name (TokenRequest, as
// the kubelet does), so it has exactly that ServiceAccount's RBAC. With a
// boundPod the token is bound to it (and rejected once the pod is deleted).
func (e *Env) RESTConfigForServiceAccount(ctx context.Context, namespace, name string, boundPod *corev1.Pod) (*rest.Config, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](tokenLifetime)}}
	if boundPod != nil {
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: boundPod.Name, UID: boundPod.UID}
	}
	tr, err := e.Clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("unable to get a token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(e.Config) // keeps the CA, drops the admin's certificate
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// KubeconfigForServiceAccount writes RESTConfigForServiceAccount's
// credentials into a kubeconfig file (API server URL, CA, token; no client
// certificate) for a subprocess's --kubeconfig.
func (e *Env) KubeconfigForServiceAccount(ctx context.Context, namespace, name string, boundPod *corev1.Pod) (string, error) {
	cfg, err := e.RESTConfigForServiceAccount(ctx, namespace, name, boundPod)
	if err != nil {
		return "", err
	}
	dir, err := WorkDir()
	if err != nil {
		return "", err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return "", err
		}
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"e2e": {Server: cfg.Host, CertificateAuthorityData: ca}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{user: {Token: cfg.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"e2e": {Cluster: "e2e", AuthInfo: user, Namespace: namespace}},
		CurrentContext: "e2e",
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s.%s-*.kubeconfig", namespace, name))
	if err != nil {
		return "", err
	}
	_ = f.Close()
	if err := clientcmd.WriteToFile(kc, f.Name()); err != nil {
		return "", err
	}
	return filepath.Clean(f.Name()), nil
}
