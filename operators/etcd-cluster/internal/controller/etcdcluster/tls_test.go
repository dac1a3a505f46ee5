package etcdcluster

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// env of the member container, by name.
func containerEnv(sts *appsv1.StatefulSet) map[string]string {
	env := map[string]string{}
	for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

func TestEtcdClusterWithOperatorManagedTLSRunsMembersOnItsOwnCA(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "managed", Namespace: ns},
		Spec: v1beta2.EtcdClusterSpec{TLS: &v1beta2.TLSPolicy{OperatorManaged: &v1beta2.OperatorManagedTLS{}}}}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	e := containerEnv(sts)
	g.Expect(e).To(HaveKeyWithValue("ETCD_LISTEN_CLIENT_URLS", "https://0.0.0.0:2379"))
	g.Expect(e).To(HaveKeyWithValue("ETCD_LISTEN_PEER_URLS", "https://0.0.0.0:2380"))
	g.Expect(e).To(HaveKeyWithValue("ETCD_INITIAL_ADVERTISE_PEER_URLS", "https://$(ETCD_NAME).managed."+ns+".svc:2380"))
	g.Expect(e).To(HaveKeyWithValue("ETCD_PEER_CLIENT_CERT_AUTH", "true"))
	g.Expect(e).To(HaveKeyWithValue("ETCD_CLIENT_CERT_AUTH", "true"))
	g.Expect(e).To(HaveKeyWithValue("ETCD_LISTEN_METRICS_URLS", "http://0.0.0.0:2381"))
	g.Expect(sts.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port.StrVal).To(Equal(metricsName))
	mounted := mountedTLSSecret(&sts.Spec.Template.Spec)
	g.Expect(mounted).To(HavePrefix("managed-tls-"))
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == tlsVolume {
			for _, item := range v.Secret.Items {
				g.Expect(item.Key).NotTo(HavePrefix("etcd-client"), "members do not get the operator's client key")
			}
		}
	}

	// The copy the members mount is good for every member the cluster may have, signed by
	// the CA kept in managed-ca, as is the applications' client certificate.
	caSecret, copySecret, appSecret := &corev1.Secret{}, &corev1.Secret{}, &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "managed-ca"}, caSecret)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mounted}, copySecret)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "managed-client-tls"}, appSecret)).To(Succeed())
	ca, err := certs.ParseCA(caSecret.Data["ca.crt"], caSecret.Data["ca.key"])
	g.Expect(err).NotTo(HaveOccurred())
	m, err := certs.FromData(mounted, copySecret.Data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(certs.Verify(m, []string{"managed-0.managed." + ns + ".svc", "managed-8.managed." + ns + ".svc"}, time.Now())).To(Succeed())
	g.Expect(issuedBy(ca, m)).To(BeTrue())
	app, err := certs.ClientLayout.Read("managed-client-tls", appSecret.Data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ca.Signed(app)).To(BeTrue())
	for _, s := range []*corev1.Secret{caSecret, copySecret, appSecret} {
		g.Expect(metav1.IsControlledBy(s, c)).To(BeTrue(), s.Name)
	}

	member := expectStarted(t, sts, 0, "new")
	g.Expect(member.Annotations[v1beta2.InitialClusterAnnotation]).To(Equal("managed-0=https://managed-0.managed." + ns + ".svc:2380"))
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.TLS).NotTo(BeNil())
		g.Expect(c.Status.TLS.Secret).To(Equal(mounted))
		g.Expect(c.Status.TLS.ClientSecret).To(Equal("managed-client-tls"))
		g.Expect(c.Status.TLS.NotAfter.Time).To(BeTemporally("~", time.Now().Add(defaultLifetime), time.Hour))
		g.Expect(c.Status.TLS.Certificates).To(HaveLen(3))
	}, timeout, tick).Should(Succeed())

	// A pass later the same certificates are kept: nothing restarts.
	poke(g, c, "again")
	g.Consistently(func(g Gomega) {
		get(g, sts)
		g.Expect(mountedTLSSecret(&sts.Spec.Template.Spec)).To(Equal(mounted))
	}, 2*time.Second, tick).Should(Succeed())

	// Deleting the CA's Secret asks for a new CA: members move to it in three steps, and the
	// applications' certificate follows once members trust the new CA.
	g.Expect(env.Client.Delete(ctx, caSecret)).To(Succeed())
	var next certs.CA
	g.Eventually(func(g Gomega) {
		renewed := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "managed-ca"}, renewed)).To(Succeed())
		next, err = certs.ParseCA(renewed.Data["ca.crt"], renewed.Data["ca.key"])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(next.CertPEM).NotTo(Equal(ca.CertPEM))
	}, timeout, tick).Should(Succeed())
	appKept := secretData(t, ns, "managed-client-tls")
	g.Expect(ca.Issued(appKept["etcd-client.crt"])).To(BeTrue(), "the applications keep a certificate the members trust")
	last := expectCARotation(t, c, sts, mounted, ca, next)
	g.Eventually(func(g Gomega) {
		app, err := certs.ClientLayout.Read("managed-client-tls", secretData(t, ns, "managed-client-tls"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(next.Signed(app)).To(BeTrue(), "at the end, the applications' certificate is the new CA's, trusting it alone")
		get(g, c)
		g.Expect(c.Status.TLS.Secret).To(Equal(last))
	}, timeout, tick).Should(Succeed())
}

// staticSecretsData is the data of the three Secrets of the CoreOS layout, issued by ca,
// members' certificates covering names.
func staticSecretsData(t *testing.T, ca certs.CA, names ...string) map[string]map[string][]byte {
	t.Helper()
	now := time.Now()
	issue := func(dns []string, usages ...x509.ExtKeyUsage) certs.Pair {
		p, err := ca.Issue("test", dns, now, 24*time.Hour, usages...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	secrets := map[string]map[string][]byte{}
	for name, x := range map[string]struct {
		layout certs.Layout
		pair   certs.Pair
	}{
		"etcd-peer-tls":   {certs.PeerLayout, issue(names, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)},
		"etcd-server-tls": {certs.ServerLayout, issue(names, x509.ExtKeyUsageServerAuth)},
		"etcd-client-tls": {certs.ClientLayout, issue(nil, x509.ExtKeyUsageClientAuth)},
	} {
		secrets[name] = map[string][]byte{}
		x.layout.Write(x.pair, secrets[name])
	}
	return secrets
}

// staticSecrets writes the three Secrets of the CoreOS layout in ns from ca, members'
// certificates covering names.
func staticSecrets(t *testing.T, ns string, ca certs.CA, names ...string) {
	t.Helper()
	writeStaticSecrets(t, ns, staticSecretsData(t, ca, names...))
}

func writeStaticSecrets(t *testing.T, ns string, secrets map[string]map[string][]byte) {
	t.Helper()
	for name, data := range secrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
		if err := env.Client.Create(context.Background(), s); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		if err := env.Client.Update(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// writeStaticSecretsPaused writes secrets into c's namespace as a user replacing a running
// cluster's static Secrets should: with c paused, once the operator has observed the pause, so
// that it takes all three at once. A pass between two writes would take the ones written so far
// as a step of their own (checked like any other, so safe, but one more restart); a pass begun
// before the operator saw the pause still acts, hence the wait. Unpausing asks for the next pass.
func writeStaticSecretsPaused(t *testing.T, c *v1beta2.EtcdCluster, secrets map[string]map[string][]byte) {
	t.Helper()
	g := NewWithT(t)
	setPaused := func(paused bool) {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused))
		g.Expect(env.Client.Patch(context.Background(), c, patch)).To(Succeed())
	}
	setPaused(true)
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(conditions.Get(c, conditions.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonPaused))
	}, timeout, tick).Should(Succeed(), "the operator observes spec.paused")
	writeStaticSecrets(t, c.Namespace, secrets)
	setPaused(false)
}

func staticCluster(name, ns string) *v1beta2.EtcdCluster {
	return &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta2.EtcdClusterSpec{TLS: &v1beta2.TLSPolicy{Static: &v1beta2.StaticTLS{
			Member:         &v1beta2.MemberSecret{PeerSecret: "etcd-peer-tls", ServerSecret: "etcd-server-tls"},
			OperatorSecret: "etcd-client-tls"}}}}
}

func TestEtcdClusterWithStaticTLSStartsNoMemberUntilItsSecretsAreGood(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := staticCluster("static", ns)
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	expectDegraded(t, c, v1beta2.ReasonTLSInvalid, `reading secret etcd-peer-tls: secrets "etcd-peer-tls" not found`)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &appsv1.StatefulSet{})).NotTo(Succeed(), "no member starts without certificates")

	ca, err := certs.NewCA("test", time.Now(), 48*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	staticSecrets(t, ns, ca, "*.other."+ns+".svc")
	poke(g, c, "narrow") // users' Secrets are not watched: the pass comes at the next requeue, or now
	expectDegraded(t, c, v1beta2.ReasonTLSInvalid, "the peer certificate does not cover static-0.static."+ns+".svc")
	g.Expect(conditions.Get(c, conditions.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonTLSInvalid))

	staticSecrets(t, ns, ca, "*.static."+ns+".svc")
	poke(g, c, "good")
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	running := mountedTLSSecret(&sts.Spec.Template.Spec)
	g.Expect(running).To(HavePrefix("static-tls-"))
	expectStarted(t, sts, 0, "new")

	// Certificates whose CA bundle is not the CA that signed them are refused: members keep theirs.
	other, err := certs.NewCA("other", time.Now(), 48*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	unsigned := staticSecretsData(t, other, "*.static."+ns+".svc")
	for _, data := range unsigned {
		for k := range data {
			if strings.HasSuffix(k, "ca.crt") {
				data[k] = ca.CertPEM
			}
		}
	}
	writeStaticSecretsPaused(t, c, unsigned)
	expectDegraded(t, c, v1beta2.ReasonTLSInvalid, "the peer certificate is not trusted by the peer CA")
	get(g, sts)
	g.Expect(mountedTLSSecret(&sts.Spec.Template.Spec)).To(Equal(running))

	// A certificate renewed by the same CA goes to the template: members restart onto it one at a time.
	writeStaticSecretsPaused(t, c, staticSecretsData(t, ca, "*.static."+ns+".svc"))
	renewed := expectTemplateMoves(t, sts, running)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: running}, &corev1.Secret{})).To(Succeed(),
		"the certificates member 0 runs with stay while its pod mounts them")
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.TLS).NotTo(BeNil())
		g.Expect(c.Status.TLS.Secret).To(Equal(renewed))
		g.Expect(c.Status.TLS.ClientSecret).To(BeEmpty())
	}, timeout, tick).Should(Succeed())
	restartMember(t, sts, 0)

	// Secrets of another CA: members move to it in three steps, each trusted by the one before.
	writeStaticSecretsPaused(t, c, staticSecretsData(t, other, "*.static."+ns+".svc"))
	last := expectCARotation(t, c, sts, renewed, ca, other)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: renewed}, &corev1.Secret{})).NotTo(Succeed())
	}, timeout, tick).Should(Succeed(), "the certificates no member mounts any more are deleted")
	get(g, c)
	g.Expect(c.Status.TLS.Secret).To(Equal(last))
}

// expectTemplateMoves waits until the StatefulSet's template mounts other certificates than
// from, and returns their Secret.
func expectTemplateMoves(t *testing.T, sts *appsv1.StatefulSet, from string) string {
	t.Helper()
	var name string
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, sts)
		name = mountedTLSSecret(&sts.Spec.Template.Spec)
		g.Expect(name).NotTo(Equal(from))
	}, timeout, tick).Should(Succeed())
	return name
}

// restartMember makes the pod of ordinal again from the StatefulSet's template, as the
// StatefulSet controller does after a restart.
func restartMember(t *testing.T, sts *appsv1.StatefulSet, ordinal int) {
	t.Helper()
	g := NewWithT(t)
	get(g, sts)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: fmt.Sprintf("%s-%d", sts.Name, ordinal)}}
	g.Expect(env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0))).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod) }, timeout, tick).
		ShouldNot(Succeed())
	memberPod(t, sts, ordinal)
}

// expectCARotation follows a cluster of one member, running the certificates in Secret
// running, as they move from CA old to CA next: three templates, each taken only once
// member 0 mounts the one before (the test restarts it), and returns the last one's Secret.
func expectCARotation(t *testing.T, c *v1beta2.EtcdCluster, sts *appsv1.StatefulSet, running string, old, next certs.CA) string {
	t.Helper()
	g := NewWithT(t)
	first, err := certs.FromData(running, secretData(t, c.Namespace, running))
	g.Expect(err).NotTo(HaveOccurred())
	sameCertificates := func(m certs.Material) bool { return string(m.Peer.Cert) == string(first.Peer.Cert) }
	newCertificates := func(m certs.Material) bool { return issuedBy(next, m) }
	for i, step := range []struct {
		what        string
		certificate func(certs.Material) bool
		oldTrusted  bool
	}{
		{"the running certificates", sameCertificates, true},
		{"the new certificates", newCertificates, true},
		{"the new certificates", newCertificates, false},
	} {
		name := expectTemplateMoves(t, sts, running)
		m, err := certs.FromData(name, secretData(t, c.Namespace, name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(step.certificate(m)).To(BeTrue(), "step %d: %s", i+1, step.what)
		for _, bundle := range [][]byte{m.Peer.CA, m.Server.CA, m.Client.CA} {
			g.Expect(next.TrustedBy(bundle)).To(BeTrue(), "step %d trusts the new CA", i+1)
			g.Expect(old.TrustedBy(bundle)).To(Equal(step.oldTrusted), "step %d trusts the CA before: %t", i+1, step.oldTrusted)
		}
		poke(g, c, fmt.Sprintf("step %d", i+1))
		g.Consistently(func(g Gomega) {
			get(g, sts)
			g.Expect(mountedTLSSecret(&sts.Spec.Template.Spec)).To(Equal(name))
		}, time.Second, tick).Should(Succeed(), "step %d waits for member 0 to mount it", i+1)
		restartMember(t, sts, 0)
		running = name
	}
	return running
}

func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}

// The API server of envtest serves no cert-manager: a cluster asking for it says so and starts
// nothing (the e2e suite runs it with cert-manager for real). A ClusterIssuer the operator does
// not list is refused before that, however cert-manager is.
func TestEtcdClusterWithCertManagerTLSWaitsForCertManager(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	for name, ref := range map[string]v1beta2.IssuerReference{
		"cm":       {Name: "ca"},
		"listed":   {Name: testClusterIssuer, Kind: "ClusterIssuer"},
		"unlisted": {Name: "other-tenants-ca", Kind: "ClusterIssuer"},
	} {
		c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{Size: 3,
			TLS: &v1beta2.TLSPolicy{CertManager: &v1beta2.CertManagerTLS{IssuerRef: ref}}}}
		g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
		if name == "unlisted" {
			expectDegraded(t, c, v1beta2.ReasonIssuerNotAllowed, "ClusterIssuer other-tenants-ca is not one this operator lets EtcdClusters use (its --cluster-issuers): use an Issuer in namespace "+ns)
		} else {
			expectDegraded(t, c, v1beta2.ReasonTLSInvalid, "cert-manager is not installed: the cluster serves no certificates.cert-manager.io/v1")
		}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), &appsv1.StatefulSet{})).NotTo(Succeed(), "no member starts without certificates")
	}
}

func TestEtcdClusterRefusesTLSChangesAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	for name, tls := range map[string]map[string]any{
		"no source":                   {},
		"two sources":                 {"operatorManaged": map[string]any{}, "static": map[string]any{"member": map[string]any{"peerSecret": "p", "serverSecret": "s"}, "operatorSecret": "o"}},
		"cert-manager and its own CA": {"operatorManaged": map[string]any{}, "certManager": map[string]any{"issuerRef": map[string]any{"name": "ca"}}},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
			"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
			"spec":     map[string]any{"paused": true, "TLS": tls},
		}}
		g.Expect(env.Client.Create(ctx, u)).To(MatchError(ContainSubstring("TLS needs exactly one source of certificates")), name)
	}
	missing := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
		"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
		"spec":     map[string]any{"paused": true, "TLS": map[string]any{"static": map[string]any{"member": map[string]any{"peerSecret": "p"}}}},
	}}
	err := env.Client.Create(ctx, missing)
	g.Expect(err).To(MatchError(ContainSubstring("spec.TLS.static.operatorSecret: Required value")))
	g.Expect(err).To(MatchError(ContainSubstring("spec.TLS.static.member.serverSecret: Required value")))

	plain := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{Paused: true}}
	g.Expect(env.Client.Create(ctx, plain)).To(Succeed())
	on := `{"spec":{"TLS":{"operatorManaged":{}}}}`
	g.Expect(env.Client.Patch(ctx, plain, client.RawPatch(types.MergePatchType, []byte(on)))).To(MatchError(ContainSubstring("TLS cannot be turned on or off for an existing cluster")))

	managed := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "managed", Namespace: ns},
		Spec: v1beta2.EtcdClusterSpec{Paused: true, TLS: &v1beta2.TLSPolicy{OperatorManaged: &v1beta2.OperatorManagedTLS{}}}}
	g.Expect(env.Client.Create(ctx, managed)).To(Succeed())
	g.Expect(managed.Spec.TLS.RequireClientCertificates).To(HaveValue(BeTrue()), "client certificates are required by default")
	g.Expect(managed.Spec.TLS.OperatorManaged.CertificateLifetime.Duration).To(Equal(defaultLifetime))
	for patch, want := range map[string]string{
		`{"spec":{"TLS":null}}`: "TLS cannot be turned on or off",
		`{"spec":{"TLS":{"operatorManaged":null,"static":{"member":{"peerSecret":"p","serverSecret":"s"},"operatorSecret":"o"}}}}`: "the TLS source cannot change",
		`{"spec":{"TLS":{"operatorManaged":{"certificateLifetime":"10m"}}}}`:                                                       "certificateLifetime must be at least 1h",
		`{"spec":{"TLS":{"operatorManaged":null,"certManager":{"issuerRef":{"name":"ca"}}}}}`:                                      "the TLS source cannot change",
	} {
		err := env.Client.Patch(ctx, managed.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))
		g.Expect(err).To(MatchError(ContainSubstring(want)), strings.TrimSpace(patch))
	}
}
