//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// testCA signs the certificates of the static TLS cluster: made by the test, never committed.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newTestCA(name string) *testCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := certTemplate(name, time.Now().Add(24*time.Hour))
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	Expect(err).NotTo(HaveOccurred())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func certTemplate(name string, notAfter time.Time) *x509.Certificate {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	Expect(err).NotTo(HaveOccurred())
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter}
}

// issue returns a certificate for dnsNames with usages, valid until notAfter, and its key, PEM.
func (ca *testCA) issue(name string, dnsNames []string, notAfter time.Time, usages ...x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := certTemplate(name, notAfter)
	tmpl.DNSNames, tmpl.ExtKeyUsage, tmpl.KeyUsage = dnsNames, usages, x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// The Secrets of the static cluster, named and laid out as in the CoreOS operator's TLS guide.
const (
	staticPeerSecret     = "etcd-peer-tls"
	staticServerSecret   = "etcd-server-tls"
	staticOperatorSecret = "etcd-client-tls"
)

// staticCertificates are what the static cluster's Secrets hold: certificates from ca, the
// members' covering names, each valid until notAfter, with trusted's certificate as the CA
// bundle (ca's when nil).
type staticCertificates struct {
	ca, trusted *testCA
	names       []string
	notAfter    time.Time
}

// goodStaticCertificates cover the cluster's DNS names and its client Service for 12 hours.
func goodStaticCertificates(ns, cluster string, ca *testCA) staticCertificates {
	peers := fmt.Sprintf("%s.%s.svc", cluster, ns)
	return staticCertificates{ca: ca, names: []string{"*." + peers, "*." + peers + ".cluster.local", cluster + "-client." + ns + ".svc"},
		notAfter: time.Now().Add(12 * time.Hour)}
}

// write makes or replaces the static cluster's three Secrets in ns.
func (s staticCertificates) write(ctx context.Context, ns string) {
	server, both, clientAuth := x509.ExtKeyUsageServerAuth, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, x509.ExtKeyUsageClientAuth
	peerCert, peerKey := s.ca.issue("peer", s.names, s.notAfter, both...)
	serverCert, serverKey := s.ca.issue("server", s.names, s.notAfter, server)
	clientCert, clientKey := s.ca.issue("operator", nil, s.notAfter, clientAuth)
	bundle := s.ca.certPEM
	if s.trusted != nil {
		bundle = s.trusted.certPEM
	}
	for name, data := range map[string]map[string][]byte{
		staticPeerSecret:     {"peer.crt": peerCert, "peer.key": peerKey, "peer-ca.crt": bundle},
		staticServerSecret:   {"server.crt": serverCert, "server.key": serverKey, "server-ca.crt": bundle},
		staticOperatorSecret: {"etcd-client.crt": clientCert, "etcd-client.key": clientKey, "etcd-client-ca.crt": bundle},
	} {
		writeSecret(ctx, ns, name, data)
	}
}

// writeStaticTLSSecrets makes or replaces the static cluster's three Secrets, every
// certificate from ca, the members' covering the cluster's DNS names and its client Service.
func writeStaticTLSSecrets(ctx context.Context, ns, cluster string, ca *testCA) {
	goodStaticCertificates(ns, cluster, ca).write(ctx, ns)
}

// writeSecret makes or replaces the Secret's data.
func writeSecret(ctx context.Context, ns, name string, data map[string][]byte) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	_, err := controllerutil.CreateOrUpdate(ctx, k8sClient, s, func() error { s.Data = data; return nil })
	Expect(err).NotTo(HaveOccurred())
}

// etcdClientTLS is how a client of the cluster connects: nil for plain HTTP; with TLS, the
// operator's client certificate of a static cluster (the CoreOS scenario), or the
// applications' one the cluster names in its status (cert-manager's layout with certManager).
func etcdClientTLS(ctx context.Context, cluster *unstructured.Unstructured) *tls.Config {
	if _, on, _ := unstructured.NestedMap(cluster.Object, "spec", "TLS"); !on {
		return nil
	}
	var cfg *tls.Config
	Eventually(func() (err error) {
		cfg, err = readClientTLS(ctx, cluster, false)
		return err
	}).WithContext(ctx).Should(Succeed())
	return cfg
}

// readClientTLS reads the client certificate etcdClientTLS uses; following, a static
// cluster's is the operator's copy the members mount (status.TLS.secret), which moves one
// rotation step at a time, where the user's Secret moves at once.
func readClientTLS(ctx context.Context, cluster *unstructured.Unstructured, following bool) (*tls.Config, error) {
	c := cluster.DeepCopy()
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
		return nil, err
	}
	var st etcdStatus
	raw, err := json.Marshal(c.Object["status"])
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil {
		return nil, err
	}
	secretName, static, _ := unstructured.NestedString(c.Object, "spec", "TLS", "static", "operatorSecret")
	switch {
	case static && following && st.TLS.Secret != "":
		secretName = st.TLS.Secret
	case !static:
		secretName = st.TLS.ClientSecret
	}
	if secretName == "" {
		return nil, fmt.Errorf("cluster %s names no client Secret yet", c.GetName())
	}
	s := &corev1.Secret{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: c.GetNamespace(), Name: secretName}, s); err != nil {
		return nil, err
	}
	crt, key, ca := "etcd-client.crt", "etcd-client.key", "etcd-client-ca.crt"
	if _, certManager, _ := unstructured.NestedMap(c.Object, "spec", "TLS", "certManager"); certManager {
		crt, key, ca = corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.Data[ca]) {
		return nil, fmt.Errorf("secret %s holds no CA in %s", secretName, ca)
	}
	pair, err := tls.X509KeyPair(s.Data[crt], s.Data[key])
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// followingClientTLS is etcdClientTLS read again at every handshake, as an application that
// reloads its Secret: the traffic follows a rotation onto another CA.
func followingClientTLS(ctx context.Context, cluster *unstructured.Unstructured) *tls.Config {
	if etcdClientTLS(ctx, cluster) == nil {
		return nil
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The server's certificate is verified in VerifyConnection, against the CA read then.
		InsecureSkipVerify: true, //nolint:gosec // see VerifyConnection
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cfg, err := readClientTLS(ctx, cluster, true)
			if err != nil {
				return nil, err
			}
			return &cfg.Certificates[0], nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			cfg, err := readClientTLS(ctx, cluster, true)
			if err != nil {
				return err
			}
			opts := x509.VerifyOptions{Roots: cfg.RootCAs, DNSName: cs.ServerName, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err = cs.PeerCertificates[0].Verify(opts)
			return err
		},
	}
}

// etcdTLSClient is a client of the cluster's Service, over TLS with tlsConfig unless it is
// nil, closed when the spec ends. Certificates name the Service, not its ClusterIP (which is
// what this host reaches): with TLS the client asks for the Service by name and dials its
// ClusterIP.
func etcdTLSClient(ctx context.Context, cluster *unstructured.Unstructured, tlsConfig *tls.Config) *clientv3.Client {
	clusterIP := strings.TrimPrefix(etcdClientURL(ctx, cluster), "http://")
	cfg := clientv3.Config{Endpoints: []string{clusterIP}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if tlsConfig != nil {
		cfg.Endpoints = []string{fmt.Sprintf("https://%s-client.%s.svc:2379", cluster.GetName(), cluster.GetNamespace())}
		cfg.TLS = tlsConfig
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", clusterIP)
		})}
	}
	c, err := clientv3.New(cfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = c.Close() })
	return c
}

// timeToReady is how long after its creation the cluster's Ready condition last turned True.
func timeToReady(ctx context.Context, cluster *unstructured.Unstructured) time.Duration {
	c := cluster.DeepCopy()
	s := getEtcdStatus(ctx, Default, c)
	Expect(s.condition("Ready")).To(Equal("True"), cluster.GetName())
	for _, cond := range s.Conditions {
		if cond.Type == "Ready" {
			return cond.LastTransitionTime.Sub(c.GetCreationTimestamp().Time)
		}
	}
	return 0
}

// putAndGet writes a key through c and reads it back.
func putAndGet(ctx context.Context, c *clientv3.Client, key string) {
	Eventually(func(g Gomega) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := c.Put(rctx, key, "over TLS")
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := c.Get(rctx, key)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.Kvs).To(HaveLen(1))
		g.Expect(string(resp.Kvs[0].Value)).To(Equal("over TLS"))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
}

// memberContainerEnv is the etcd container's environment of a member pod, by name.
func memberContainerEnv(pod *corev1.Pod) map[string]string {
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

// etcdTLSClusters are the TLS clusters of the real-node specs, made with the plaintext one.
type etcdTLSClusters struct {
	static, managed, certManager *unstructured.Unstructured
	ca                           *testCA
}

// all are the clusters, one per source of certificates.
func (t *etcdTLSClusters) all() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{t.static, t.managed, t.certManager}
}

// certManagerIssuer is the CA Issuer of the cert-manager cluster.
const certManagerIssuer = "etcd-ca"

// createCertManagerIssuer makes, in ns, the usual cert-manager CA chain: a SelfSigned Issuer
// signs a CA Certificate, whose Secret a CA Issuer signs with.
func createCertManagerIssuer(ctx context.Context, ns string) {
	for _, obj := range []map[string]any{
		{"kind": "Issuer", "metadata": map[string]any{"name": "selfsigned"}, "spec": map[string]any{"selfSigned": map[string]any{}}},
		{"kind": "Certificate", "metadata": map[string]any{"name": certManagerIssuer}, "spec": map[string]any{
			"isCA": true, "commonName": "quintet e2e cert-manager CA", "secretName": certManagerIssuer,
			"privateKey": map[string]any{"algorithm": "ECDSA", "size": int64(256)},
			"issuerRef":  map[string]any{"name": "selfsigned", "kind": "Issuer"},
		}},
		{"kind": "Issuer", "metadata": map[string]any{"name": certManagerIssuer}, "spec": map[string]any{"ca": map[string]any{"secretName": certManagerIssuer}}},
	} {
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("cert-manager.io/v1")
		u.SetNamespace(ns)
		Expect(k8sClient.Create(ctx, u)).To(Succeed())
	}
}

// createEtcdTLSClusters makes a cluster with each source of certificates in ns: static from
// the CoreOS Secrets the test makes, certManager from a CA Issuer, and operatorManaged.
func createEtcdTLSClusters(ctx context.Context, ns, version string) *etcdTLSClusters {
	t := &etcdTLSClusters{ca: newTestCA("quintet e2e static CA")}
	createCertManagerIssuer(ctx, ns)
	t.certManager = harnessEtcdCluster(ns, robustness.NamePrefix+"-tls-cm", version, map[string]any{"certManager": map[string]any{
		"issuerRef": map[string]any{"name": certManagerIssuer},
	}})
	t.static = harnessEtcdCluster(ns, robustness.NamePrefix+"-tls-static", version, map[string]any{"static": map[string]any{
		"member":         map[string]any{"peerSecret": staticPeerSecret, "serverSecret": staticServerSecret},
		"operatorSecret": staticOperatorSecret,
	}})
	t.managed = harnessEtcdCluster(ns, robustness.NamePrefix+"-tls-managed", version, map[string]any{"operatorManaged": map[string]any{}})
	if enoughRealNodesToSpread(ctx) {
		t.managed.Object["spec"].(map[string]any)["pod"].(map[string]any)["antiAffinity"] = "Required"
	}
	writeStaticTLSSecrets(ctx, ns, t.static.GetName(), t.ca)
	Expect(k8sClient.Create(ctx, t.static)).To(Succeed())
	Expect(k8sClient.Create(ctx, t.managed)).To(Succeed())
	Expect(k8sClient.Create(ctx, t.certManager)).To(Succeed())
	return t
}

// mountedSecrets are the Secrets of certificates the pods mount.
func mountedSecrets(pods *corev1.PodList) map[string]bool {
	mounted := map[string]bool{}
	for _, p := range pods.Items {
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil {
				mounted[v.Secret.SecretName] = true
			}
		}
	}
	return mounted
}

// expectRefused checks that a client of cfg can neither write nor read.
func expectRefused(ctx context.Context, cluster *unstructured.Unstructured, cfg *tls.Config, why string) {
	c := etcdTLSClient(ctx, cluster, cfg)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := c.Put(rctx, "/refused", "x")
	Expect(err).To(HaveOccurred(), why)
}

// timeToReadyEntry names the report entries of how long clusters took to be Ready.
const timeToReadyEntry = "time to Ready, 3 members"

// The TLS clusters, one per source of certificates, come up together on the real node, run
// by a copy of the operator of their own watching their namespace: their specs run beside
// the plaintext cluster's (SpecPriority(1): both take the longest).
var _ = Describe("The etcd-cluster operator's TLS clusters on the real nodes", Ordered, SpecPriority(1), func() {
	var (
		tlsClusters        *etcdTLSClusters
		version, namespace string
	)
	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		version = requiredEnv("E2E_ETCD_VERSION")
		namespace = createNamespace(ctx, "etcd-tls", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		deployOperatorCopyOnRealNode(ctx, "etcd-cluster", "tls", namespace)
		tlsClusters = createEtcdTLSClusters(ctx, namespace, version)
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpForFailure(ctx, "etcd-tls", namespace, etcdManagerNamespace+"-tls")
		}
	})

	It("brings a 3-member TLS cluster up from static Secrets, from cert-manager and from its own CA, each serving only TLS", func(ctx SpecContext) {
		tc := tlsClusters
		for _, cluster := range tc.all() {
			expectEtcdReady(ctx, cluster, 3, version)
		}
		if enoughRealNodesToSpread(ctx) {
			By("antiAffinity Required: the operator-managed cluster's members run on three different real nodes")
			Expect(memberNodes(ctx, tc.managed)).To(HaveLen(3))
		}
		AddReportEntry(timeToReadyEntry, fmt.Sprintf("TLS static %s, TLS cert-manager %s, TLS operator-managed %s, made at once",
			timeToReady(ctx, tc.static).Round(time.Second),
			timeToReady(ctx, tc.certManager).Round(time.Second), timeToReady(ctx, tc.managed).Round(time.Second)))
		By("warning that the static certificates (12 hours) expire soon, with the cluster still Ready")
		Expect(getEtcdStatus(ctx, Default, tc.static).condition("CertificateExpiring")).To(Equal("True"))
		Expect(getEtcdStatus(ctx, Default, tc.managed).reason("CertificateExpiring")).To(Equal("RenewedByOperator"))
		Expect(getEtcdStatus(ctx, Default, tc.certManager).reason("CertificateExpiring")).To(Equal("RenewedByCertManager"))
		for _, cluster := range tc.all() {
			By(cluster.GetName() + ": etcd's own member list has only https URLs")
			cfg := etcdClientTLS(ctx, cluster)
			c := etcdTLSClient(ctx, cluster, cfg)
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			members, err := c.MemberList(lctx)
			cancel()
			Expect(err).NotTo(HaveOccurred())
			Expect(members.Members).To(HaveLen(3))
			for _, m := range members.Members {
				for _, u := range append(m.PeerURLs, m.ClientURLs...) {
					Expect(u).To(HavePrefix("https://"), "member %s", m.Name)
				}
			}
			pods := &corev1.PodList{}
			Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
			for _, p := range pods.Items {
				env := memberContainerEnv(&p)
				Expect(env["ETCD_LISTEN_CLIENT_URLS"]).To(HavePrefix("https://"))
				Expect(env["ETCD_LISTEN_PEER_URLS"]).To(HavePrefix("https://"))
				Expect(env).To(HaveKeyWithValue("ETCD_CLIENT_CERT_AUTH", "true"))
				Expect(env).To(HaveKeyWithValue("ETCD_PEER_CLIENT_CERT_AUTH", "true"))
			}

			By(cluster.GetName() + ": a client without a certificate, and plain HTTP, are refused")
			noCertificate := cfg.Clone()
			noCertificate.Certificates = nil
			expectRefused(ctx, cluster, noCertificate, "a client that trusts the cluster's CA but has no certificate")
			Expect(etcdPut(ctx, etcdClientURL(ctx, cluster), "/plain", "x")).NotTo(Succeed(), "plain HTTP on the client port")

			By(cluster.GetName() + ": with the client certificate, put and get work")
			putAndGet(ctx, c, "/tls/"+cluster.GetName())
		}
	})

	var backupPath string               // of the backup below
	var backupWritten map[string][]byte // the keys and values in it

	It("backs up a TLS cluster with the CoreOS EtcdBackup to the S3 store: from a follower, its SHA-256 checked, verified in a Job, every key in it", func(ctx SpecContext) {
		cluster := tlsClusters.managed
		bucket, store := newBackupBucket(ctx, cluster.GetNamespace())
		written := writeBackupKeys(ctx, etcdTLSClient(ctx, cluster, etcdClientTLS(ctx, cluster)), "/backup/")
		backup := etcdBackup(cluster, bucket, "managed/etcd.db")
		Expect(unstructured.SetNestedField(backup.Object, true, "spec", "verify")).To(Succeed())
		Expect(k8sClient.Create(ctx, backup)).To(Succeed())
		expectBackupOf(ctx, cluster, backup, store, bucket, "managed/etcd.db", written, "/backup/")
		expectVerified(ctx, backup)
		backupPath, backupWritten = bucket+"/managed/etcd.db", written
	})

	// The plain cluster the TLS cluster's backup is restored into, and the bucket its own
	// backups go to; the specs below use it in turn, and the last deletes it.
	var restored *unstructured.Unstructured
	var restoredBucket string
	var restoredStore *s3.Client

	It("restores that backup with the CoreOS EtcdRestore into a new plain cluster of 3: the snapshot checked first, every key and value back", func(ctx SpecContext) {
		Expect(backupPath).NotTo(BeEmpty(), "the backup spec ran first")
		ns := tlsClusters.managed.GetNamespace()
		restore := etcdRestore(ns, "restored", "restored", backupPath, version)
		Expect(k8sClient.Create(ctx, restore)).To(Succeed())
		restored = etcdClusterRef(ns, "restored")
		expectRestored(ctx, restore, restored, version)

		By("reading every key back from the restored cluster, through its client Service, in plain HTTP")
		expectSameKeys(ctx, restored, backupWritten, "/backup/")
	})

	It("backs that cluster up every 5 s through the deletion of its leader's pod, keeping exactly 3 backups, each whole", func(ctx SpecContext) {
		Expect(restored).NotTo(BeNil(), "the restore spec ran first")
		ns := restored.GetNamespace()
		restoredBucket, restoredStore = newBackupBucket(ctx, ns)
		_, err := etcdTLSClient(ctx, restored, nil).Put(ctx, "/coreos/key", "the key is back")
		Expect(err).NotTo(HaveOccurred())
		backup := etcdBackup(restored, restoredBucket, "periodic/restored")
		Expect(unstructured.SetNestedMap(backup.Object, map[string]any{"backupIntervalInSecond": int64(5), "maxBackups": int64(3)},
			"spec", "backupPolicy")).To(Succeed())
		Expect(k8sClient.Create(ctx, backup)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, backup))).To(Succeed()) })
		lastSuccess := func(g Gomega) time.Time {
			st := getStatus[backupStatus](ctx, g, backup)
			g.Expect(st.LastSuccessDate).NotTo(BeNil(), "a backup succeeded: %s %s", st.reason("Ready"), st.message("Ready"))
			return st.LastSuccessDate.Time
		}
		Eventually(lastSuccess).WithContext(ctx).WithTimeout(time.Minute).Should(Not(BeZero()))

		leader := getEtcdStatus(ctx, Default, restored).leader()
		By("deleting the leader's pod, " + leader + ", between backups")
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leader}, pod)).To(Succeed())
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		deleted := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(lastSuccess(g)).To(BeTemporally(">", deleted.Add(12*time.Second)), "backups go on after the leader changed")
			g.Expect(storedObjects(ctx, restoredStore, restoredBucket, "periodic/restored_v")).To(HaveLen(3), "maxBackups 3")
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		st := getStatus[backupStatus](ctx, Default, backup)
		if st.LastFailure != nil {
			By(fmt.Sprintf("a backup failed cleanly during the change: %s: %s", st.LastFailure.Reason, st.LastFailure.Message))
		}
		Expect(k8sClient.Delete(ctx, backup)).To(Succeed())
		for _, key := range storedObjects(ctx, restoredStore, restoredBucket, "periodic/restored_v") {
			expectWholeSnapshot(readObject(ctx, restoredStore, restoredBucket, key), key)
		}
	})

	It("backs it up to a PersistentVolumeClaim in a Job on its members' node: the snapshot checked and verified before it counts, the Job deleted once read", func(ctx SpecContext) {
		Expect(restored).NotTo(BeNil(), "the restore spec ran first")
		ns := restored.GetNamespace()
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backups", Namespace: ns},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		Expect(k8sClient.Create(ctx, claim)).To(Succeed())
		backup := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdBackup",
			"metadata": map[string]any{"name": "restored-to-volume", "namespace": ns},
			"spec": map[string]any{"clusterName": restored.GetName(), "storageType": "PersistentVolumeClaim", "verify": true,
				"persistentVolumeClaim": map[string]any{"claimName": claim.Name, "path": "etcd/restored.db"}},
		}}
		Expect(k8sClient.Create(ctx, backup)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, backup))).To(Succeed()) })
		var st backupStatus
		Eventually(func(g Gomega) {
			st = getStatus[backupStatus](ctx, g, backup)
			g.Expect(st.condition("Ready")).To(Equal("True"), "Ready: %s %s", st.reason("Ready"), st.message("Ready"))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		By(fmt.Sprintf("backed up revision %d of %s to %s: %d bytes, sha256 %s", st.LastBackup.EtcdRevision, st.LastBackup.Member,
			st.LastBackup.Path, st.LastBackup.Size, st.LastBackup.SHA256))
		Expect(st.LastBackup.Path).To(Equal("etcd-backups/etcd/restored.db"))
		Expect(st.LastBackup.SHA256).To(HaveLen(64))
		Expect(st.LastBackup.Size%512).To(BeEquivalentTo(32), "a database of whole pages and its SHA-256")
		expectVerified(ctx, backup)
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{"etcd.database.coreos.com/backup": backup.GetName()})).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty(), "the Job, read, is deleted")
		}).WithContext(ctx).Should(Succeed())
	})

	It("restores that volume backup with an EtcdRestore into a new cluster of 3: a Job restores the first member from the claim, every key and value back", func(ctx SpecContext) {
		Expect(restored).NotTo(BeNil(), "the restore spec ran first")
		ns := restored.GetNamespace()
		restore := etcdRestore(ns, "from-volume", "from-volume", "", version)
		spec := restore.Object["spec"].(map[string]any)
		delete(spec, "s3")
		spec["backupStorageType"] = "PersistentVolumeClaim"
		spec["persistentVolumeClaim"] = map[string]any{"claimName": "etcd-backups", "path": "etcd/restored.db"}
		Expect(k8sClient.Create(ctx, restore)).To(Succeed())
		fromVolume := etcdClusterRef(ns, "from-volume")
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, fromVolume))).To(Succeed()) })
		expectRestored(ctx, restore, fromVolume, version)

		By("reading every key back from the cluster restored from the volume")
		expectSameKeys(ctx, fromVolume, backupWritten, "/backup/")
		Eventually(func(g Gomega) {
			jobs := &batchv1.JobList{}
			g.Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{"etcd.database.coreos.com/restore-of": "from-volume"})).To(Succeed())
			g.Expect(jobs.Items).To(HaveLen(1), "one Job restored the first member")
			g.Expect(jobs.Items[0].Status.Succeeded).To(BeEquivalentTo(1), "the restore Job succeeded")
		}).WithContext(ctx).Should(Succeed())
	})

	It("restores it under its own name from its newest backup once it is deleted, as the CoreOS operator's EtcdRestore did: the key is back", func(ctx SpecContext) {
		Expect(restoredBucket).NotTo(BeEmpty(), "the periodic backup spec ran first")
		ns := restored.GetNamespace()
		By("deleting EtcdCluster restored")
		Expect(k8sClient.Delete(ctx, restored)).To(Succeed())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"etcd_cluster": "restored"})).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(restored), etcdClusterRef(ns, "restored"))
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the cluster is gone: %v", err)
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		restore := etcdRestore(ns, "restored-again", "restored", restoredBucket+"/periodic/restored", version)
		Expect(k8sClient.Create(ctx, restore)).To(Succeed())
		expectRestored(ctx, restore, restored, version)
		got, err := etcdTLSClient(ctx, restored, nil).Get(ctx, "/coreos/key")
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Kvs).To(HaveLen(1))
		Expect(string(got.Kvs[0].Value)).To(Equal("the key is back"))
	})

	It("refuses a corrupt snapshot before any member starts, and says so", func(ctx SpecContext) {
		Expect(restoredBucket).NotTo(BeEmpty(), "the periodic backup spec ran first")
		ns := restored.GetNamespace()
		DeferCleanup(func(ctx SpecContext) { // the robustness specs after these run without their load
			for _, name := range []string{"restored", "corrupt"} {
				Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, etcdClusterRef(ns, name)))).To(Succeed())
			}
		})
		garbage := bytes.Repeat([]byte("not etcd"), 516) // 4128 bytes: whole pages and a "hash"
		_, err := restoredStore.PutObject(ctx, &s3.PutObjectInput{Bucket: &restoredBucket, Key: aws.String("corrupt.db"), Body: bytes.NewReader(garbage)})
		Expect(err).NotTo(HaveOccurred())
		restore := etcdRestore(ns, "corrupt", "corrupt", restoredBucket+"/corrupt.db", version)
		Expect(k8sClient.Create(ctx, restore)).To(Succeed())
		Eventually(func(g Gomega) {
			st := getStatus[restoreStatus](ctx, g, restore)
			g.Expect(st.reason("Ready")).To(Equal("SnapshotCorrupt"), "Ready: %s %s", st.reason("Ready"), st.message("Ready"))
			g.Expect(st.condition("Degraded")).To(Equal("True"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "corrupt-0"}, pod)).To(Succeed())
		Expect(pod.Spec.SchedulingGates).NotTo(BeEmpty(), "the first member waits behind its gate: nothing started on the snapshot")
	})

	It("restarts members one at a time onto renewed static certificates, under traffic, losing no acknowledged write", robustnessScenario, func(ctx SpecContext) {
		cluster := tlsClusters.static
		expectRollingRotation(ctx, cluster, version, "static-certificates-renewed", 1, func() {
			By("renewing the certificates in the static Secrets, from the same CA")
			writeStaticTLSSecretsPaused(ctx, cluster, tlsClusters.ca)
		})
	}, SpecTimeout(6*time.Minute))

	It("moves members onto static certificates of a new CA in three rolling steps, both CAs trusted in between, under traffic, losing no acknowledged write", robustnessScenario, func(ctx SpecContext) {
		cluster := tlsClusters.static
		replacement := newTestCA("quintet e2e replacement static CA")
		expectRollingRotation(ctx, cluster, version, "static-ca-replaced", 3, func() {
			By("replacing the static Secrets with certificates of another CA")
			writeStaticTLSSecretsPaused(ctx, cluster, replacement)
		})
		tlsClusters.ca = replacement
		running := clusterCertificates(ctx, cluster)
		expectTrustsOnly(running, replacement.certPEM)
		expectSignedBy(running, replacement.certPEM)
		putAndGet(ctx, etcdTLSClient(ctx, cluster, etcdClientTLS(ctx, cluster)), "/tls/after-new-static-ca")
	}, SpecTimeout(10*time.Minute))

	It("moves members onto a new CA of its own, made when its CA Secret is deleted, in three rolling steps, under traffic, losing no acknowledged write", robustnessScenario, func(ctx SpecContext) {
		cluster := tlsClusters.managed
		ns, caName := cluster.GetNamespace(), cluster.GetName()+"-ca"
		old := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: caName}, old)).To(Succeed())
		expectRollingRotation(ctx, cluster, version, "operator-ca-replaced", 3, func() {
			By("deleting Secret " + caName + ", the cluster's CA")
			Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		})
		ca := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: caName}, ca)).To(Succeed())
		Expect(ca.UID).NotTo(Equal(old.UID))
		running := clusterCertificates(ctx, cluster)
		expectTrustsOnly(running, ca.Data["ca.crt"])
		expectSignedBy(running, ca.Data["ca.crt"])
		By("the applications' client certificate is the new CA's too")
		app := &corev1.Secret{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: getEtcdStatus(ctx, g, cluster.DeepCopy()).TLS.ClientSecret}, app)).To(Succeed())
			g.Expect(pemCertificates(app.Data["etcd-client-ca.crt"])).To(Equal(pemCertificates(ca.Data["ca.crt"])))
		}).WithContext(ctx).Should(Succeed())
		expectSignedBy(app.Data, ca.Data["ca.crt"])
		putAndGet(ctx, etcdTLSClient(ctx, cluster, etcdClientTLS(ctx, cluster)), "/tls/after-new-operator-ca")
	}, SpecTimeout(10*time.Minute))

	It("restarts members one at a time onto certificates cert-manager renews, under traffic, losing no acknowledged write", robustnessScenario, func(ctx SpecContext) {
		cluster := tlsClusters.certManager
		expectRollingRotation(ctx, cluster, version, "cert-manager-renewal", 1, func() {
			By("asking cert-manager to renew the members' certificates now, as cmctl renew does")
			for _, suffix := range []string{"peer", "server"} {
				renewCertificate(ctx, cluster.GetNamespace(), cluster.GetName()+"-"+suffix)
			}
		})
	}, SpecTimeout(6*time.Minute))

	It("says so, and starts no member, when a cluster's cert-manager Issuer does not exist or is not Ready", func(ctx SpecContext) {
		ns := tlsClusters.certManager.GetNamespace()
		cluster := harnessEtcdCluster(ns, robustness.NamePrefix+"-tls-noissuer", version, map[string]any{"certManager": map[string]any{
			"issuerRef": map[string]any{"name": "not-yet"},
		}})
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cluster))).To(Succeed()) })
		expectDegradedTLS := func(message string) {
			Eventually(func(g Gomega) {
				s := getEtcdStatus(ctx, g, cluster.DeepCopy())
				g.Expect(s.reason("Degraded")).To(Equal("TLSInvalid"))
				g.Expect(s.message("Degraded")).To(ContainSubstring(message))
				g.Expect(s.condition("Ready")).To(Equal("False"))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			pods := &corev1.PodList{}
			Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
			Expect(pods.Items).To(BeEmpty(), "no member starts without certificates")
		}
		expectDegradedTLS("Issuer not-yet does not exist in namespace " + ns)
		By("an Issuer whose CA Secret does not exist")
		issuer := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
			"metadata": map[string]any{"name": "not-yet", "namespace": ns}, "spec": map[string]any{"ca": map[string]any{"secretName": "no-such-secret"}}}}
		Expect(k8sClient.Create(ctx, issuer)).To(Succeed())
		expectDegradedTLS("Issuer not-yet is not Ready")
	})

	It("keeps serving on the certificates it has when a static Secret loses a key, trusts a CA that did not sign them, or holds expired or too narrow certificates, and says so", func(ctx SpecContext) {
		cluster, ns := tlsClusters.static, tlsClusters.static.GetNamespace()
		expectEtcdReady(ctx, cluster, 3, version)
		c := etcdTLSClient(ctx, cluster, etcdClientTLS(ctx, cluster))
		saved := map[string]map[string][]byte{}
		for _, name := range []string{staticPeerSecret, staticServerSecret, staticOperatorSecret} {
			s := &corev1.Secret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
			saved[name] = s.Data
		}
		members := memberRuns(ctx, cluster)
		withoutKey := map[string][]byte{"peer.crt": saved[staticPeerSecret]["peer.crt"], "peer-ca.crt": saved[staticPeerSecret]["peer-ca.crt"]}
		expired := goodStaticCertificates(ns, cluster.GetName(), tlsClusters.ca)
		expired.notAfter = time.Now().Add(-time.Minute)
		narrow := goodStaticCertificates(ns, cluster.GetName(), tlsClusters.ca)
		unsigned := goodStaticCertificates(ns, cluster.GetName(), tlsClusters.ca)
		unsigned.trusted = newTestCA("a CA that signed none of them")
		narrow.names = []string{"*.another-cluster." + ns + ".svc"}
		member0 := fmt.Sprintf("%s-0.%s.%s.svc", cluster.GetName(), cluster.GetName(), ns)
		// The operator reads users' Secrets at every pass, at least every 30 seconds; here each
		// change asks for a pass at once.
		change := func(write func()) { write(); requestPass(ctx, cluster) }
		for _, bad := range []struct {
			what, reason, message string
			apply                 func()
		}{
			{"a peer Secret without its key", "TLSInvalid", "secret " + staticPeerSecret + " has no [peer.key]",
				func() { writeSecret(ctx, ns, staticPeerSecret, withoutKey) }},
			{"a CA that does not sign the certificates", "TLSInvalid", "the peer certificate is not trusted by the peer CA",
				func() { unsigned.write(ctx, ns) }},
			{"expired certificates", "TLSInvalid", "the peer certificate expired at", func() { expired.write(ctx, ns) }},
			{"certificates that do not cover the members", "TLSInvalid", "the peer certificate does not cover " + member0,
				func() { narrow.write(ctx, ns) }},
		} {
			By(bad.what)
			change(bad.apply)
			Eventually(func(g Gomega) {
				s := getEtcdStatus(ctx, g, cluster)
				g.Expect(s.reason("Degraded")).To(Equal(bad.reason))
				g.Expect(s.message("Degraded")).To(ContainSubstring(bad.message))
			}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
			putAndGet(ctx, c, "/still-serving")
			Expect(restartsSince(members, memberRuns(ctx, cluster))).To(BeZero(), "nothing restarts")
			By("putting the Secrets back")
			change(func() {
				for name, data := range saved {
					writeSecret(ctx, ns, name, data)
				}
			})
			expectEtcdReady(ctx, cluster, 3, version)
		}
		Expect(restartsSince(members, memberRuns(ctx, cluster))).To(BeZero(), "the Secrets put back are the certificates members run with")
	}, SpecTimeout(10*time.Minute))
})

// expectRollingRotation runs rotate under robustness traffic and checks that members restart
// onto the new certificates one at a time, in steps (1 for a renewal, 3 for a new CA), each
// member once per step, with no acknowledged write lost, and that the copies of the
// certificates no member mounts go.
func expectRollingRotation(ctx context.Context, cluster *unstructured.Unstructured, version, scenario string, steps int, rotate func()) {
	expectEtcdReady(ctx, cluster, 3, version)
	running := getEtcdStatus(ctx, Default, cluster.DeepCopy()).TLS.Secret
	Expect(running).NotTo(BeEmpty())
	watch := newRestartWatch(ctx, cluster, 3)
	traffic := startEtcdTraffic(ctx, cluster, scenario)
	traffic.watch = watch
	rotate()
	taken := []string{running}
	for done := false; !done; time.Sleep(200 * time.Millisecond) {
		Expect(ctx.Err()).NotTo(HaveOccurred())
		Expect(watch.observe(ctx)).To(BeNumerically("<=", 1), "more than one member down at once during the rotation: %s", watch.describe())
		current := getEtcdStatus(ctx, Default, cluster.DeepCopy()).TLS.Secret
		if current != taken[len(taken)-1] {
			By(fmt.Sprintf("step %d: members restart onto %s", len(taken), current))
			taken = append(taken, current)
		}
		mounted := mountedSecrets(watch.last)
		done = len(taken) == steps+1 && len(mounted) == 1 && mounted[current] && watch.observe(ctx) == 0 && len(watch.last.Items) == 3
	}
	Expect(taken).To(HaveLen(steps+1), "the steps the members took: %v", taken)
	watch.report(scenario)
	expectEtcdReady(ctx, cluster, 3, version)
	row := traffic.stopAndCheck(ctx)
	Expect(row.Restarts).To(Equal(3*steps), "each member restarted once a step")
	Eventually(func(g Gomega) {
		for _, gone := range taken[:steps] {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: cluster.GetNamespace(), Name: gone}, &corev1.Secret{})).NotTo(Succeed(),
				"the certificates no member mounts any more are deleted")
		}
	}).WithContext(ctx).Should(Succeed())
}

// clusterCertificates are the certificates the members of cluster mount now, by key.
func clusterCertificates(ctx context.Context, cluster *unstructured.Unstructured) map[string][]byte {
	s := &corev1.Secret{}
	name := getEtcdStatus(ctx, Default, cluster.DeepCopy()).TLS.Secret
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: cluster.GetNamespace(), Name: name}, s)).To(Succeed())
	return s.Data
}

// expectTrustsOnly checks that every CA bundle of data (a Secret's) holds caPEM's certificate alone.
func expectTrustsOnly(data map[string][]byte, caPEM []byte) {
	want := pemCertificates(caPEM)
	for key, bundle := range data {
		if strings.HasSuffix(key, "ca.crt") {
			Expect(pemCertificates(bundle)).To(Equal(want), "%s trusts the new CA alone", key)
		}
	}
}

// expectSignedBy checks that every certificate of data (a Secret's, CoreOS layout) is signed by caPEM's CA.
func expectSignedBy(data map[string][]byte, caPEM []byte) {
	ca, err := x509.ParseCertificate(pemCertificates(caPEM)[0])
	Expect(err).NotTo(HaveOccurred())
	for key, certPEM := range data {
		if strings.HasSuffix(key, ".crt") && !strings.HasSuffix(key, "ca.crt") {
			leaf, err := x509.ParseCertificate(pemCertificates(certPEM)[0])
			Expect(err).NotTo(HaveOccurred())
			Expect(leaf.CheckSignatureFrom(ca)).To(Succeed(), "%s is signed by the new CA", key)
		}
	}
}

// pemCertificates is the DER of each certificate of a PEM bundle.
func pemCertificates(bundle []byte) [][]byte {
	var ders [][]byte
	for block, rest := pem.Decode(bundle); block != nil; block, rest = pem.Decode(rest) {
		ders = append(ders, block.Bytes)
	}
	return ders
}

// renewCertificate asks cert-manager to reissue a Certificate now, as `cmctl renew` does: it
// sets the Certificate's Issuing condition.
func renewCertificate(ctx context.Context, ns, name string) {
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cert)).To(Succeed())
	conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
	conds = slices.DeleteFunc(conds, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == "Issuing" })
	conds = append(conds, map[string]any{"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
		"message": "renewal asked for by the e2e suite", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
	Expect(unstructured.SetNestedSlice(cert.Object, conds, "status", "conditions")).To(Succeed())
	Expect(k8sClient.Status().Update(ctx, cert)).To(Succeed())
}

// writeStaticTLSSecretsPaused replaces cluster's three static Secrets as a user rotating
// them should: with the cluster paused, so that the operator takes all three at once (a pass
// between two writes would roll members onto a mix of old and new, a step of its own). The
// Secrets are written once the operator has observed the pause: a pass that started before
// it, on a cache that had not seen it yet, still acts, and reads the Secrets as it goes.
func writeStaticTLSSecretsPaused(ctx context.Context, cluster *unstructured.Unstructured, ca *testCA) {
	paused := cluster.DeepCopy()
	patchEtcdSpec(ctx, paused, `{"spec":{"paused":true}}`)
	Eventually(func(g Gomega) {
		s := getEtcdStatus(ctx, g, paused)
		g.Expect(s.ObservedGeneration).To(Equal(paused.GetGeneration()))
		g.Expect(s.reason("Progressing")).To(Equal("Paused"))
	}).WithContext(ctx).Should(Succeed(), "the operator observes spec.paused")
	writeStaticTLSSecrets(ctx, cluster.GetNamespace(), cluster.GetName(), ca)
	patchEtcdSpec(ctx, cluster.DeepCopy(), `{"spec":{"paused":false}}`)
}

// requestPass makes the operator reconcile cluster now: an annotation change is an update
// of the EtcdCluster, which it watches.
func requestPass(ctx context.Context, cluster *unstructured.Unstructured) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.quintet.dev/pass-requested":%q}}}`, time.Now().Format(time.RFC3339Nano))
	Expect(k8sClient.Patch(ctx, cluster.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}
