package etcdcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
)

// cert-manager's API (cert-manager.io/v1), written as unstructured objects, all in this file:
// the operator needs a few fields of two kinds, and runs on clusters without cert-manager.
const certManagerGroup = "cert-manager.io"

var certificateGVK = schema.GroupVersionKind{Group: certManagerGroup, Version: "v1", Kind: "Certificate"}

// The keys of the Secrets cert-manager writes (kubernetes.io/tls, with the issuer's CA).
const (
	tlsCertKey = corev1.TLSCertKey
	tlsKeyKey  = corev1.TLSPrivateKeyKey
	tlsCAKey   = "ca.crt"
)

// errIssuing: cert-manager has not yet written a Secret the members need.
var errIssuing = errors.New("waiting for cert-manager to issue")

// cert-manager's names of the extended key usages.
const serverAuth, clientAuth = "server auth", "client auth"

// managedCertificate is one Certificate the operator asks cert-manager for.
type managedCertificate struct {
	suffix     string // of the Certificate's name, and of its Secret's (<suffix>-tls)
	commonName string
	dnsNames   bool // the members' names (memberSANs)
	usages     []string
}

// The cluster's Certificates: the members' two, the operator's client and the applications'.
var (
	peerCertificate     = managedCertificate{suffix: "peer", dnsNames: true, usages: []string{serverAuth, clientAuth}}
	serverCertificate   = managedCertificate{suffix: "server", dnsNames: true, usages: []string{serverAuth}}
	operatorCertificate = managedCertificate{suffix: "operator", commonName: "quintet-etcd-cluster-operator", usages: []string{clientAuth}}
	clientCertificate   = managedCertificate{suffix: "client", usages: []string{clientAuth}}
)

func (m managedCertificate) secret(c *v1beta2.EtcdCluster) string {
	return c.Name + "-" + m.suffix + "-tls"
}

// certificate is m's Certificate for c, signed by c's issuer. Its Secret carries the cluster's
// labels, so the operator's cache holds it and a renewal reaches the cluster.
func (m managedCertificate) certificate(c *v1beta2.EtcdCluster) *unstructured.Unstructured {
	ref := c.Spec.TLS.CertManager.IssuerRef
	labels := map[string]any{}
	for k, v := range selectorLabels(c) {
		labels[k] = v
	}
	spec := map[string]any{
		"secretName":     m.secret(c),
		"issuerRef":      map[string]any{"name": ref.Name, "kind": issuerKind(ref), "group": certManagerGroup},
		"commonName":     cmp.Or(m.commonName, c.Name+" "+m.suffix),
		"usages":         anyList(append([]string{"digital signature", "key encipherment"}, m.usages...)),
		"privateKey":     map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
		"secretTemplate": map[string]any{"labels": labels},
	}
	if m.dnsNames {
		spec["dnsNames"] = anyList(memberSANs(c))
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(certificateGVK)
	meta := objectMeta(c, c.Name+"-"+m.suffix)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	return u
}

func issuerKind(ref v1beta2.IssuerReference) string {
	if ref.Kind == "" {
		return "Issuer"
	}
	return ref.Kind
}

// anyList is strs as unstructured content (a JSON array).
func anyList(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

// certManagerTLS asks cert-manager for the cluster's certificates and reads what it issued.
// A reason with an error is something to report (the issuer is missing or not Ready, or
// certificates are still being issued), not a failure of the pass.
func (r *Reconciler) certManagerTLS(ctx context.Context, c *v1beta2.EtcdCluster) (certs.Material, string, string, error) {
	if err := r.issuerAllowed(c); err != nil {
		return certs.Material{}, "", v1beta2.ReasonIssuerNotAllowed, err
	}
	served, err := r.CertManager.Served()
	if err != nil {
		return certs.Material{}, "", "", err
	}
	if !served {
		return certs.Material{}, "", v1beta2.ReasonTLSInvalid,
			errors.New("cert-manager is not installed: the cluster serves no certificates.cert-manager.io/v1")
	}
	if err := r.issuerReady(ctx, c); err != nil {
		return certs.Material{}, "", v1beta2.ReasonTLSInvalid, err
	}
	for _, m := range []managedCertificate{peerCertificate, serverCertificate, operatorCertificate, clientCertificate} {
		if err := r.ensure(ctx, c, m.certificate(c)); err != nil {
			return certs.Material{}, "", "", err
		}
	}
	issued := map[string]map[string][]byte{}
	var waiting []string
	for _, m := range []managedCertificate{peerCertificate, serverCertificate, operatorCertificate} {
		secret := &corev1.Secret{}
		err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: m.secret(c)}, secret)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && len(secret.Data[tlsCertKey]) == 0):
			waiting = append(waiting, m.secret(c))
		case err != nil:
			return certs.Material{}, "", "", err
		}
		issued[m.suffix] = secret.Data
	}
	// A renewal is taken whole: while cert-manager reissues any of them (cmctl renew, or
	// their renewal times, which come together), members keep the certificates they run
	// with, rather than restarting onto each new one in turn.
	for _, m := range []managedCertificate{peerCertificate, serverCertificate, operatorCertificate} {
		cert := &unstructured.Unstructured{}
		cert.SetGroupVersionKind(certificateGVK)
		if err := r.reader().Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name + "-" + m.suffix}, cert); err != nil {
			return certs.Material{}, "", "", err
		}
		if issuing := condition(cert, "Issuing"); issuing != nil && issuing["status"] == "True" && !slices.Contains(waiting, m.secret(c)) {
			waiting = append(waiting, m.secret(c))
		}
	}
	if len(waiting) > 0 {
		return certs.Material{}, "", v1beta2.ReasonIssuingCertificates,
			fmt.Errorf("%w %v from %s %s", errIssuing, waiting, issuerKind(c.Spec.TLS.CertManager.IssuerRef), c.Spec.TLS.CertManager.IssuerRef.Name)
	}
	m, err := materialOfIssued(issued["peer"], issued["server"], issued["operator"])
	if err != nil {
		return m, "", v1beta2.ReasonTLSInvalid, err
	}
	return m, clientCertificate.secret(c), "", nil
}

// materialOfIssued lays cert-manager's Secrets out as the members and the operator use them:
// members trust the CA of the operator's (and applications') client certificates, the operator
// the CA of the members' server certificate.
func materialOfIssued(peer, server, operator map[string][]byte) (certs.Material, error) {
	var errs []error
	pair := func(data map[string][]byte, ca []byte, what string) certs.Pair {
		if len(data[tlsKeyKey]) == 0 || len(ca) == 0 {
			errs = append(errs, fmt.Errorf("cert-manager's %s Secret has no %s or %s: the issuer must write its CA", what, tlsKeyKey, tlsCAKey))
		}
		return certs.Pair{Cert: data[tlsCertKey], Key: data[tlsKeyKey], CA: ca}
	}
	m := certs.Material{
		Peer:   pair(peer, peer[tlsCAKey], "peer"),
		Server: pair(server, operator[tlsCAKey], "server"),
		Client: pair(operator, server[tlsCAKey], "operator"),
	}
	return m, errors.Join(errs...)
}

// issuerAllowed refuses a ClusterIssuer the operator does not list: whoever may write an
// EtcdCluster would otherwise get client certificates from a CA that other namespaces'
// clusters trust. An Issuer is of the cluster's own namespace.
func (r *Reconciler) issuerAllowed(c *v1beta2.EtcdCluster) error {
	ref := c.Spec.TLS.CertManager.IssuerRef
	if issuerKind(ref) != "ClusterIssuer" || slices.Contains(r.ClusterIssuers, ref.Name) {
		return nil
	}
	return fmt.Errorf("ClusterIssuer %s is not one this operator lets EtcdClusters use (its --cluster-issuers): "+
		"use an Issuer in namespace %s, or ask an administrator to list it", ref.Name, c.Namespace)
}

// issuerReady checks that the Issuer or ClusterIssuer of c exists and is Ready.
func (r *Reconciler) issuerReady(ctx context.Context, c *v1beta2.EtcdCluster) error {
	ref := c.Spec.TLS.CertManager.IssuerRef
	issuer := &unstructured.Unstructured{}
	issuer.SetGroupVersionKind(schema.GroupVersionKind{Group: certManagerGroup, Version: "v1", Kind: issuerKind(ref)})
	key := client.ObjectKey{Name: ref.Name}
	where := "the cluster"
	if issuerKind(ref) == "Issuer" {
		key.Namespace, where = c.Namespace, "namespace "+c.Namespace
	}
	if err := r.reader().Get(ctx, key, issuer); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s does not exist in %s", issuerKind(ref), ref.Name, where)
		}
		return err
	}
	ready := condition(issuer, "Ready")
	if ready == nil {
		return fmt.Errorf("%s %s is not Ready yet", issuerKind(ref), ref.Name)
	}
	if ready["status"] != "True" {
		return fmt.Errorf("%s %s is not Ready: %v: %v", issuerKind(ref), ref.Name, ready["reason"], ready["message"])
	}
	return nil
}

// condition is the status condition of type of a cert-manager object, nil when it has none.
func condition(u *unstructured.Unstructured, conditionType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == conditionType {
			return m
		}
	}
	return nil
}
