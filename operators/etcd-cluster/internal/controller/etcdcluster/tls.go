package etcdcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
)

// Certificates of a cluster whose certificates the operator manages.
const (
	caLifetime      = 10 * 365 * 24 * time.Hour
	defaultLifetime = 90 * 24 * time.Hour
	// expiryWarning: a static certificate this close to expiry makes the cluster Degraded.
	expiryWarning = 30 * 24 * time.Hour
	// tlsLabel marks the Secrets of a cluster's TLS the operator keeps.
	tlsLabel = "etcd.database.coreos.com/tls"
)

// tlsState is what the members and the operator's client run with after the TLS phase.
type tlsState struct {
	secret string      // the operator's Secret the members mount; "" without TLS
	dial   *tls.Config // the operator's client; nil without TLS
	status *v1beta2.TLSStatus
	// err: the desired certificates cannot be used (Reason says why); members keep secret,
	// the certificates they run with, and the pass changes nothing else.
	err    error
	reason string
}

// issuing: the pass waits for cert-manager's first certificates, which is progress, not a fault.
func (s tlsState) issuing() bool { return errors.Is(s.err, errIssuing) }

// reconcileTLS checks the certificates spec.TLS asks for, keeps the operator's copy the
// members mount (a Secret named by their hash), and says what the pass runs with: the new
// certificates if they are good and the running members trust them, else the running ones.
func (r *Reconciler) reconcileTLS(ctx context.Context, c *v1beta2.EtcdCluster) (tlsState, error) {
	if c.Spec.TLS == nil {
		return tlsState{}, nil
	}
	now := time.Now()
	runningName, running, err := r.runningTLS(ctx, c)
	if err != nil {
		return tlsState{}, err
	}
	// Members on other certificates than the template's are still restarting.
	settled, err := r.mountedByMembers(ctx, c, runningName)
	if err != nil {
		return tlsState{}, err
	}
	if c.Spec.Paused { // observed with the certificates members run with; nothing is written
		if running == nil {
			return tlsState{}, nil
		}
		return tlsStateOf(runningName, *running, applicationClientSecret(c))
	}
	next, clientSecret, reason, err := r.desiredTLS(ctx, c, running, settled, now)
	if err != nil && reason == "" {
		return tlsState{}, err
	}
	if err == nil {
		reason, err = v1beta2.ReasonTLSInvalid, certs.Verify(next, memberNames(c), now)
	}
	if err == nil && running != nil {
		next = certs.Toward(*running, next, now)
		reason, err = v1beta2.ReasonTLSRotationUnsafe, certs.Compatible(*running, next, now)
	}
	if err != nil {
		if running == nil {
			return tlsState{err: fmt.Errorf("no member starts before the certificates can be used: %w", err), reason: reason}, nil
		}
		state, serr := tlsStateOf(runningName, *running, clientSecret)
		state.err, state.reason = err, reason
		return state, serr
	}
	name := fmt.Sprintf("%s-tls-%s", c.Name, next.Hash())
	if name != runningName && running != nil && !settled {
		// One step at a time: members still on the step before may not trust the next one.
		return tlsStateOf(runningName, *running, clientSecret)
	}
	if name != runningName {
		secret := tlsSecret(c, name, next.Data())
		if err := r.ensure(ctx, c, secret); err != nil {
			return tlsState{}, err
		}
	}
	if err := r.deleteUnusedTLS(ctx, c, name, runningName); err != nil {
		return tlsState{}, err
	}
	return tlsStateOf(name, next, clientSecret)
}

// tlsStateOf is the state of members running on m from the Secret name.
func tlsStateOf(name string, m certs.Material, clientSecret string) (tlsState, error) {
	dial, err := certs.ClientConfig(m.Client)
	if err != nil {
		return tlsState{}, err
	}
	expiry, err := certs.ExpiryOf(m)
	if err != nil {
		return tlsState{}, err
	}
	st := &v1beta2.TLSStatus{Secret: name, ClientSecret: clientSecret, NotAfter: ptr.To(metav1.NewTime(expiry.First())),
		Certificates: []v1beta2.CertificateStatus{
			{Name: "operator", NotAfter: metav1.NewTime(expiry.Client)},
			{Name: "peer", NotAfter: metav1.NewTime(expiry.Peer)},
			{Name: "server", NotAfter: metav1.NewTime(expiry.Server)},
		}}
	return tlsState{secret: name, dial: dial, status: st}, nil
}

// runningTLS reads the certificates the StatefulSet's members mount, if any.
//
// Both are read from the API server, not the cache: a pass that read the StatefulSet of the
// pass before its own write would take the previous step for the running one, issue new
// certificates for the step just taken (new keys: another Secret) and roll members a second
// time.
func (r *Reconciler) runningTLS(ctx context.Context, c *v1beta2.EtcdCluster) (string, *certs.Material, error) {
	sts := &appsv1.StatefulSet{}
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(c), sts); err != nil {
		return "", nil, client.IgnoreNotFound(err)
	}
	name := mountedTLSSecret(&sts.Spec.Template.Spec)
	if name == "" {
		return "", nil, nil
	}
	secret := &corev1.Secret{}
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret); err != nil {
		return "", nil, client.IgnoreNotFound(err) // gone: the next certificates start afresh
	}
	m, err := certs.FromData(name, secret.Data)
	if err != nil {
		return "", nil, nil //nolint:nilerr // not ours to use: treated as absent
	}
	return name, &m, nil
}

// desiredTLS reads or makes the certificates spec.TLS asks for. A reason with an error is
// bad input to report, not a failure of the pass.
func (r *Reconciler) desiredTLS(ctx context.Context, c *v1beta2.EtcdCluster, running *certs.Material, settled bool,
	now time.Time) (certs.Material, string, string, error) {
	if s := c.Spec.TLS.Static; s != nil {
		m, err := r.staticTLS(ctx, c.Namespace, s)
		if err != nil {
			return m, "", v1beta2.ReasonTLSInvalid, err
		}
		return m, "", "", nil
	}
	if c.Spec.TLS.CertManager != nil {
		return r.certManagerTLS(ctx, c)
	}
	return r.managedTLS(ctx, c, running, settled, now)
}

// staticTLS reads the user's Secrets, through the API server: the cache holds only the
// operator's own.
func (r *Reconciler) staticTLS(ctx context.Context, namespace string, s *v1beta2.StaticTLS) (certs.Material, error) {
	var m certs.Material
	for _, x := range []struct {
		name   string
		layout certs.Layout
		into   *certs.Pair
	}{
		{s.Member.PeerSecret, certs.PeerLayout, &m.Peer},
		{s.Member.ServerSecret, certs.ServerLayout, &m.Server},
		{s.OperatorSecret, certs.ClientLayout, &m.Client},
	} {
		secret := &corev1.Secret{}
		if err := r.reader().Get(ctx, client.ObjectKey{Namespace: namespace, Name: x.name}, secret); err != nil {
			return m, fmt.Errorf("reading secret %s: %w", x.name, err)
		}
		p, err := x.layout.Read(x.name, secret.Data)
		if err != nil {
			return m, err
		}
		*x.into = p
	}
	return m, nil
}

// managedTLS keeps the cluster's CA and issues the certificates: the running ones while the
// CA signed them and they are not due for renewal, new ones otherwise; and the
// applications' client certificate.
func (r *Reconciler) managedTLS(ctx context.Context, c *v1beta2.EtcdCluster, running *certs.Material, settled bool,
	now time.Time) (certs.Material, string, string, error) {
	lifetime := defaultLifetime
	if l := c.Spec.TLS.OperatorManaged.CertificateLifetime; l != nil {
		lifetime = l.Duration
	}
	ca, err := r.clusterCA(ctx, c, now)
	if err != nil {
		return certs.Material{}, "", "", err
	}
	clientSecret := applicationClientSecret(c)
	membersTrustCA := running == nil || (settled && ca.TrustedBy(running.Server.CA))
	if err := r.ensureApplicationClient(ctx, c, ca, running, membersTrustCA, clientSecret, lifetime, now); err != nil {
		return certs.Material{}, "", "", err
	}
	if running != nil && issuedBy(ca, *running) && !due(*running, lifetime, now) && certs.Verify(*running, memberNames(c), now) == nil {
		// Kept; after a new CA, trusting it alone.
		return running.WithCA(ca.CertPEM), clientSecret, "", nil
	}
	m, err := issueMaterial(c, ca, lifetime, now)
	return m, clientSecret, "", err
}

// issuedBy tells whether ca signed every certificate of m, whatever CAs m trusts.
func issuedBy(ca certs.CA, m certs.Material) bool {
	return ca.Issued(m.Peer.Cert) && ca.Issued(m.Server.Cert) && ca.Issued(m.Client.Cert)
}

func due(m certs.Material, lifetime time.Duration, now time.Time) bool {
	return certs.Due(m.Peer.Cert, lifetime, now) || certs.Due(m.Server.Cert, lifetime, now) || certs.Due(m.Client.Cert, lifetime, now)
}

// issueMaterial makes the members' and the operator's certificates: members' cover every
// member's DNS name and the client Service's.
func issueMaterial(c *v1beta2.EtcdCluster, ca certs.CA, lifetime time.Duration, now time.Time) (certs.Material, error) {
	var m certs.Material
	var err error
	serverAuth, clientAuth := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	if m.Peer, err = ca.Issue(c.Name+" peer", memberSANs(c), now, lifetime, serverAuth, clientAuth); err != nil {
		return m, err
	}
	if m.Server, err = ca.Issue(c.Name+" server", memberSANs(c), now, lifetime, serverAuth); err != nil {
		return m, err
	}
	m.Client, err = ca.Issue("quintet-etcd-cluster-operator", nil, now, lifetime, clientAuth)
	return m, err
}

// memberSANs are the DNS names of members' certificates: any member, by its name in the
// peer Service (and the fully qualified form etcd's reverse lookup of a peer finds), the
// client Service, and localhost for a client in the member's pod.
func memberSANs(c *v1beta2.EtcdCluster) []string {
	peers := fmt.Sprintf("%s.%s.svc", peerServiceName(c), c.Namespace)
	clients := clientServiceName(c)
	return []string{"*." + peers, "*." + peers + ".cluster.local",
		clients, clients + "." + c.Namespace, clients + "." + c.Namespace + ".svc", clients + "." + c.Namespace + ".svc.cluster.local",
		"localhost"}
}

// memberNames are the DNS names every member's certificates must cover: those of the
// members the spec asks for and of those the cluster has.
func memberNames(c *v1beta2.EtcdCluster) []string {
	addr := dnsAddresses{c}
	n := max(int(c.Spec.Size), len(c.Status.Members))
	names := make([]string, 0, n)
	for o := range n {
		names = append(names, addr.host(o))
	}
	return names
}

// Names of the Secrets of a cluster whose certificates the operator manages: its CA, and
// the applications' client certificate (none with static certificates).
func caSecret(c *v1beta2.EtcdCluster) string { return c.Name + "-ca" }
func applicationClientSecret(c *v1beta2.EtcdCluster) string {
	if c.Spec.TLS == nil || c.Spec.TLS.Static != nil {
		return ""
	}
	return clientCertificate.secret(c)
}

// clusterCA reads the cluster's CA, or makes a new one when there is none (its Secret was
// deleted: the way to replace it) or it is due for renewal; members move to a new CA in
// the steps of certs.Toward.
func (r *Reconciler) clusterCA(ctx context.Context, c *v1beta2.EtcdCluster, now time.Time) (certs.CA, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: c.Namespace, Name: caSecret(c)}
	err := r.Get(ctx, key, secret)
	if client.IgnoreNotFound(err) != nil {
		return certs.CA{}, err
	}
	if err == nil && !certs.Due(secret.Data["ca.crt"], caLifetime, now) {
		return certs.ParseCA(secret.Data["ca.crt"], secret.Data["ca.key"])
	}
	// Before making a CA, the API server's word: the cache may not show yet the one the pass
	// before made, and a second new CA would roll the members again.
	err = r.reader().Get(ctx, key, secret)
	if client.IgnoreNotFound(err) != nil {
		return certs.CA{}, err
	}
	if err == nil && !certs.Due(secret.Data["ca.crt"], caLifetime, now) {
		return certs.ParseCA(secret.Data["ca.crt"], secret.Data["ca.key"])
	}
	ca, err := certs.NewCA(c.Name+" etcd CA", now, caLifetime)
	if err != nil {
		return certs.CA{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Making a new CA for the cluster", "secret", caSecret(c))
	return ca, r.ensure(ctx, c, tlsSecret(c, caSecret(c), map[string][]byte{"ca.crt": ca.CertPEM, "ca.key": ca.Key}))
}

// ensureApplicationClient keeps a client certificate for applications in name, renewed
// like the members'. Its CA bundle trusts the members' server certificates: running's CAs
// and ca. A certificate of a new CA is issued only once the members trust that CA
// (membersTrustCA): until then the one of the CA before is kept while it is valid.
func (r *Reconciler) ensureApplicationClient(ctx context.Context, c *v1beta2.EtcdCluster, ca certs.CA, running *certs.Material,
	membersTrustCA bool, name string, lifetime time.Duration, now time.Time) error {
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	p, err := certs.ClientLayout.Read(name, secret.Data)
	leaf, leafErr := certs.Leaf(p.Cert)
	valid := err == nil && leafErr == nil && now.Before(leaf.NotAfter)
	switch {
	case valid && ca.Issued(p.Cert) && !certs.Due(p.Cert, lifetime, now):
	case valid && !membersTrustCA:
	default:
		if p, err = ca.Issue(c.Name+" client", nil, now, lifetime, x509.ExtKeyUsageClientAuth); err != nil {
			return err
		}
	}
	if running != nil {
		p.CA = certs.JoinCAs(running.Client.CA, ca.CertPEM)
	}
	data := map[string][]byte{}
	certs.ClientLayout.Write(p, data)
	return r.ensure(ctx, c, tlsSecret(c, name, data))
}

func tlsSecret(c *v1beta2.EtcdCluster, name string, data map[string][]byte) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: objectMeta(c, name), Type: corev1.SecretTypeOpaque, Data: data}
	s.Labels[tlsLabel] = "true"
	return s
}

// mountedByMembers tells whether every member pod mounts the Secret name (true with no
// pod, or no name).
func (r *Reconciler) mountedByMembers(ctx context.Context, c *v1beta2.EtcdCluster, name string) (bool, error) {
	if name == "" {
		return true, nil
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(c.Namespace), client.MatchingLabels(selectorLabels(c))); err != nil {
		return false, err
	}
	for i := range pods.Items {
		if mountedTLSSecret(&pods.Items[i].Spec) != name {
			return false, nil
		}
	}
	return true, nil
}

// deleteUnusedTLS deletes the operator's copies of certificates no member pod mounts any
// more, but the one members restart onto (next) and the template's (running).
func (r *Reconciler) deleteUnusedTLS(ctx context.Context, c *v1beta2.EtcdCluster, next, running string) error {
	in, labels := client.InNamespace(c.Namespace), client.MatchingLabels(selectorLabels(c))
	secrets, pods := &corev1.SecretList{}, &corev1.PodList{}
	if err := r.List(ctx, secrets, in, labels, client.HasLabels{tlsLabel}); err != nil {
		return err
	}
	if err := r.List(ctx, pods, in, labels); err != nil {
		return err
	}
	used := map[string]bool{next: true, running: true, caSecret(c): true, applicationClientSecret(c): true}
	for i := range pods.Items {
		used[mountedTLSSecret(&pods.Items[i].Spec)] = true
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if !used[s.Name] && metav1.IsControlledBy(s, c) {
			ctrl.LoggerFrom(ctx).Info("Deleting certificates no member uses", "secret", s.Name)
			if err := r.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
