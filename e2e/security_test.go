//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The multi-tenant suite: two tenants, each a ServiceAccount with every right on the five
// operators' kinds, Secrets, pods, Services and ConfigMaps of its own namespace and none
// elsewhere, and an administrator who uses the web console. The attacker tries, through each
// field of the five kinds that names another object, a Secret, an endpoint, an image or a
// path, to reach the victim's namespace, the cluster, or rights it does not hold. Every
// attempt must end in a refusal with a clear message and nothing read, written or reached;
// the table of attempts is printed and kept in E2E_LOG_DIR/security/table.txt.

// securityAttempt is one row of the table.
type securityAttempt struct {
	kind, field, try string
	refusal          string // what the attacker was told
	leaked           string // what reached outside the attacker's namespace: "" when nothing
}

// tenantRules are a tenant's rights in its own namespace.
var tenantRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"etcd.database.coreos.com", "ptemplates.pt.example.com", "operator.prgcont.cz", "kre.konstellation.io", "charts.samutup.com"},
		Resources: []string{"*"}, Verbs: []string{"*"}},
	{APIGroups: []string{""}, Resources: []string{"secrets", "pods", "services", "configmaps"}, Verbs: []string{"*"}},
}

var _ = Describe("Tenants of one namespace", Ordered, Label("security"), func() {
	var (
		attacker, victim string
		tenant           client.Client // the attacker's ServiceAccount
		tenantToken      string
		api              string     // the gordon manager's REST API and console, for the attacker's namespace
		bucket           string     // the attacker's own bucket in the local store
		store            *s3.Client // a client of that store
		attempts         []securityAttempt
	)
	record := func(a securityAttempt) {
		attempts = append(attempts, a)
		Expect(a.leaked).To(BeEmpty(), "%s %s (%s) reached outside the tenant's namespace", a.kind, a.field, a.try)
	}
	// refusedAtAdmission creates obj as the tenant and records the API server's refusal.
	refusedAtAdmission := func(ctx context.Context, kind, field, try string, obj *unstructured.Unstructured, want string) {
		err := tenant.Create(ctx, obj)
		Expect(err).To(MatchError(ContainSubstring(want)), "%s %s: %s", kind, field, try)
		record(securityAttempt{kind: kind, field: field, try: try, refusal: "admission: " + want})
	}
	// refusedByOperator creates obj as the tenant and waits for condType to give reason,
	// with a message holding want.
	refusedByOperator := func(ctx context.Context, obj *unstructured.Unstructured, condType, reason, want string) string {
		Expect(tenant.Create(ctx, obj)).To(Succeed())
		var message string
		Eventually(func(g Gomega) {
			g.Expect(conditionField(ctx, obj, condType, "reason")).To(Equal(reason))
			message = conditionField(ctx, obj, condType, "message")
			g.Expect(message).To(ContainSubstring(want))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		return condType + " " + reason + ": " + want
	}

	BeforeAll(func(ctx SpecContext) {
		restricted := map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
		attacker, victim = createNamespace(ctx, "e2e-tenant-a", restricted), createNamespace(ctx, "e2e-tenant-b", restricted)
		tenantToken = serviceAccountToken(ctx, attacker, "tenant", tenantRules...)
		serviceAccountToken(ctx, victim, "tenant", tenantRules...)
		impersonating := rest.CopyConfig(cfg)
		impersonating.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + attacker + ":tenant"}
		var err error
		tenant, err = client.New(impersonating, client.Options{})
		Expect(err).NotTo(HaveOccurred())

		By("giving the attacker its own bucket and credentials, as a tenant would have")
		bucket, store = newBackupBucket(ctx, attacker)
		for _, op := range []string{"ptemplate-device", "minimart"} {
			startOperator(op, []string{"WATCH_NAMESPACE=" + attacker})
		}
		// An administrator of a shared cluster gives each namespace its own entrypoint domain.
		startOperator("kre-runtime", []string{"WATCH_NAMESPACE=" + attacker, "ENTRYPOINT_HOSTS=*.{namespace}.apps.example",
			"INGRESS_CLASSES=public"})
		// A restore's first member runs the manager's image, which a deployed manager knows. The
		// manager runs on this host, which resolves no Service names: it reaches the store at
		// its cluster IP, which its administrator lists.
		storeEndpoint, _, _ := localS3(ctx)
		storeURL, err := url.Parse(storeEndpoint)
		Expect(err).NotTo(HaveOccurred())
		startOperator("etcd-cluster", []string{"WATCH_NAMESPACE=" + attacker,
			"OPERATOR_IMAGE=" + requiredEnv("E2E_IMAGES") + "/etcd-cluster:v" + operatorVersion("etcd-cluster"),
			"BACKUP_S3_ENDPOINTS=s3.quintet-s3.svc," + storeURL.Hostname()})
		installCRDs("gordon")
		api = runManagerWithAPI(ctx, "gordon", attacker)
	})

	AfterAll(func() {
		var table bytes.Buffer
		w := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		_, _ = fmt.Fprintln(w, "KIND\tFIELD\tATTEMPT\tREFUSAL\tLEAKED")
		leaked := 0
		for _, a := range attempts {
			if a.leaked != "" {
				leaked++
			}
			_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", a.kind, a.field, a.try, a.refusal, orNone(a.leaked))
		}
		_ = w.Flush()
		_, _ = fmt.Fprintf(&table, "attempts %d, refused %d, leaked %d\n", len(attempts), len(attempts)-leaked, leaked)
		dir := filepath.Join(logDir(), "security")
		Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "table.txt"), table.Bytes(), 0o644)).To(Succeed())
		_, _ = fmt.Fprintf(GinkgoWriter, "Tenant isolation, one attempt a line (also in %s):\n%s", filepath.Join(dir, "table.txt"), table.String())
	})

	It("cannot write the other tenant's objects or read its Secrets itself", func(ctx SpecContext) {
		backup := tenantBackup(victim, "direct", map[string]any{"clusterName": "x", "storageType": "S3",
			"s3": map[string]any{"path": bucket + "/x", "awsSecret": "aws", "endpoint": inClusterS3, "forcePathStyle": true}})
		Expect(tenant.Create(ctx, backup)).To(MatchError(ContainSubstring("forbidden")))
		Expect(tenant.Get(ctx, client.ObjectKey{Namespace: victim, Name: "aws"}, &corev1.Secret{})).To(MatchError(ContainSubstring("forbidden")))
		record(securityAttempt{kind: "(any)", field: "metadata.namespace", try: "create in and read the victim's namespace", refusal: "API server: forbidden"})
	})

	It("cannot copy another namespace's etcd, or the machine's, into its own bucket", func(ctx SpecContext) {
		victimCluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
			"metadata": map[string]any{"name": "victim", "namespace": victim}, "spec": map[string]any{"size": int64(1)}}}
		Expect(k8sClient.Create(ctx, victimCluster)).To(Succeed())
		for _, tc := range []struct{ try, endpoint, want string }{
			{"the victim's client Service", "http://victim-client." + victim + ".svc:2379", "names no EtcdCluster of namespace " + attacker},
			{"the victim's member by its FQDN", "http://victim-0.victim." + victim + ".svc.cluster.local:2379", "names no EtcdCluster of namespace " + attacker},
			{"the node's own etcd on loopback", "https://127.0.0.1:2379", "names no EtcdCluster"},
		} {
			b := tenantBackup(attacker, "steal-"+randomHex(3), map[string]any{"etcdEndpoints": []any{tc.endpoint}, "storageType": "S3",
				"s3": map[string]any{"path": bucket + "/stolen.db", "awsSecret": "aws", "endpoint": inClusterS3, "forcePathStyle": true}})
			refusal := refusedByOperator(ctx, b, "Degraded", "EndpointNotAllowed", tc.want)
			record(securityAttempt{kind: "EtcdBackup", field: "spec.etcdEndpoints", try: tc.try, refusal: refusal,
				leaked: storedIn(ctx, store, bucket)})
		}
	})

	It("cannot make the manager connect to the API server, the metadata service or the victim's Services as its S3 store", func(ctx SpecContext) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "store", Namespace: victim},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 9000}}, Selector: map[string]string{"app": "store"}}}
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		const onlyListed = "the manager connects to stores inside the cluster only when its operator lists them"
		for _, tc := range []struct{ try, endpoint, want string }{
			{"the API server", cfg.Host, "the Kubernetes API server's address"},
			{"the cloud metadata service", "http://169.254.169.254", onlyListed},
			{"a victim's Service by its address", "http://" + svc.Spec.ClusterIP + ":9000", onlyListed},
		} {
			b := tenantBackup(attacker, "scan-"+randomHex(3), map[string]any{"clusterName": "mine", "storageType": "S3",
				"s3": map[string]any{"path": bucket + "/x.db", "awsSecret": "aws", "endpoint": tc.endpoint, "forcePathStyle": true}})
			refusal := refusedByOperator(ctx, b, "Degraded", "EndpointNotAllowed", tc.want)
			record(securityAttempt{kind: "EtcdBackup", field: "spec.s3.endpoint", try: tc.try, refusal: refusal,
				leaked: connectionDetail(ctx, b)})
		}
		restore := tenantRestore(attacker, "from-api-server", "restored",
			map[string]any{"path": bucket + "/restore.db", "awsSecret": "aws", "endpoint": cfg.Host, "forcePathStyle": true})
		refusal := refusedByOperator(ctx, restore, "Degraded", "EndpointNotAllowed", "the Kubernetes API server's address")
		record(securityAttempt{kind: "EtcdRestore", field: "spec.s3.endpoint", try: "the API server", refusal: refusal,
			leaked: connectionDetail(ctx, restore)})
	})

	It("cannot have its EtcdCluster's certificates signed by a CA other namespaces trust, nor replace the managed flags", func(ctx SpecContext) {
		cluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
			"metadata": map[string]any{"name": "issued", "namespace": attacker},
			"spec": map[string]any{"size": int64(1), "TLS": map[string]any{"certManager": map[string]any{
				"issuerRef": map[string]any{"name": "platform-ca", "kind": "ClusterIssuer"}}}}}}
		refusal := refusedByOperator(ctx, cluster, "Degraded", "IssuerNotAllowed", "ClusterIssuer platform-ca is not one this operator lets EtcdClusters use")
		certificates := &unstructured.UnstructuredList{}
		certificates.SetAPIVersion("cert-manager.io/v1")
		certificates.SetKind("CertificateList")
		leaked := ""
		if err := k8sClient.List(ctx, certificates, client.InNamespace(attacker)); err == nil && len(certificates.Items) > 0 {
			leaked = fmt.Sprintf("%d Certificates asked of the ClusterIssuer", len(certificates.Items))
		}
		record(securityAttempt{kind: "EtcdCluster", field: "spec.TLS.certManager.issuerRef", try: "a ClusterIssuer not listed", refusal: refusal, leaked: leaked})

		configFile := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
			"metadata": map[string]any{"name": "configured", "namespace": attacker},
			"spec":     map[string]any{"size": int64(1), "pod": map[string]any{"etcdArgs": []any{"--config-file=/proc/1/root/etc/etcd.yaml"}}}}}
		refusedAtAdmission(ctx, "EtcdCluster", "spec.pod.etcdArgs", "--config-file replacing the managed flags", configFile,
			"or --config-file, which would replace them all")
	})

	It("cannot load a kernel module or run a device plugin the administrator did not allow", func(ctx SpecContext) {
		for _, tc := range []struct {
			field, try string
			change     func(spec map[string]any)
			want       string
		}{
			{"spec.kernelModule.name", "a module nobody listed", func(s map[string]any) {
				s["kernelModule"] = map[string]any{"name": "rootkit"}
			}, "kernel module rootkit is not one this operator loads"},
			{"spec.kernelModule.image", "the listed module from the attacker's image", func(s map[string]any) {
				s["kernelModule"] = map[string]any{"image": "quay.io/attacker/pt-char-dev:${KERNEL_FULL_VERSION}"}
			}, "kernelModule.image quay.io/attacker/pt-char-dev:${KERNEL_FULL_VERSION} is not from a repository allowed"},
			{"spec.devicePluginImage", "a privileged device plugin of the attacker's", func(s map[string]any) {
				s["devicePluginImage"] = "quay.io/attacker/plugin:1"
			}, "devicePluginImage quay.io/attacker/plugin:1 is not from an allowed repository"},
		} {
			pt := readSample("ptemplate-device", "ptemplates_v1alpha_ptemplate.yaml")
			pt.SetNamespace(attacker)
			pt.SetName("pt-" + randomHex(3))
			spec, _, _ := unstructured.NestedMap(pt.Object, "spec")
			tc.change(spec)
			Expect(unstructured.SetNestedMap(pt.Object, spec, "spec")).To(Succeed())
			refusal := refusedByOperator(ctx, pt, "Ready", "ModuleNotAllowed", tc.want)
			record(securityAttempt{kind: "Ptemplate", field: tc.field, try: tc.try, refusal: refusal, leaked: moduleOf(ctx, pt)})
		}
	})

	It("cannot take another namespace's entrypoint host or an ingress class the administrator did not allow", func(ctx SpecContext) {
		version := readSample("kre-runtime", "kre_v1alpha1_runtimeversion.yaml")
		version.SetNamespace(attacker)
		Expect(tenant.Create(ctx, version)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, version))).To(Succeed()) })
		for _, tc := range []struct {
			field, try string
			entrypoint map[string]any
			want       string
		}{
			{"spec.entrypoint.host", "the victim's entrypoint host", map[string]any{"host": "shop." + victim + ".apps.example"},
				`entrypoint.host "shop.` + victim + `.apps.example" matches none of the hosts the operator allows`},
			{"spec.entrypoint.ingressClassName", "an ingress class nobody listed", map[string]any{"host": "shop." + attacker + ".apps.example",
				"ingressClassName": "internal"}, `entrypoint.ingressClassName "internal" is not one the operator allows`},
		} {
			rt := readSample("kre-runtime", "kre_v1alpha1_runtime.yaml")
			rt.SetNamespace(attacker)
			Expect(unstructured.SetNestedMap(rt.Object, tc.entrypoint, "spec", "entrypoint")).To(Succeed())
			refusal := refusedByOperator(ctx, rt, "Degraded", "EntrypointNotAllowed", tc.want)
			record(securityAttempt{kind: "Runtime", field: tc.field, try: tc.try, refusal: refusal, leaked: ingressOf(ctx, attacker)})
			Expect(k8sClient.Delete(ctx, rt)).To(Succeed())
			Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(rt), rt) }).WithContext(ctx).
				Should(MatchError(ContainSubstring("not found")))
		}
	})

	It("cannot run a gordon or KRE container beyond the restricted level, nor probe other hosts from the node", func(ctx SpecContext) {
		gordon := func(container map[string]any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operator.prgcont.cz/v1", "kind": "Gordon",
				"metadata": map[string]any{"generateName": "g-", "namespace": attacker}, "spec": map[string]any{"gordon": container}}}
		}
		refusedAtAdmission(ctx, "Gordon", "spec.gordon.securityContext", "a privileged container",
			gordon(map[string]any{"securityContext": map[string]any{"privileged": true}}), "privileged containers break the restricted Pod Security level")
		refusedAtAdmission(ctx, "Gordon", "spec.gordon.securityContext", "AppArmor unconfined",
			gordon(map[string]any{"securityContext": map[string]any{"appArmorProfile": map[string]any{"type": "Unconfined"}}}),
			"appArmorProfile Unconfined breaks the restricted Pod Security level")
		refusedAtAdmission(ctx, "Gordon", "spec.gordon.livenessProbe", "the kubelet probing the metadata service",
			gordon(map[string]any{"livenessProbe": map[string]any{"httpGet": map[string]any{"host": "169.254.169.254", "port": int64(80)}}}),
			"livenessProbe must not set a host")
		version := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kre.konstellation.io/v1alpha1", "kind": "RuntimeVersion",
			"metadata": map[string]any{"name": "probing", "namespace": attacker},
			"spec": map[string]any{"runtimeRef": map[string]any{"name": "r"}, "entrypoint": map[string]any{"image": "krt-runner:v1"},
				"nodes": []any{map[string]any{"name": "a", "image": "krt-runner:v1",
					"readinessProbe": map[string]any{"tcpSocket": map[string]any{"host": "kubernetes.default.svc", "port": int64(443)}}}},
				"workflows": []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a"}}}}}}
		refusedAtAdmission(ctx, "RuntimeVersion", "spec.nodes[].readinessProbe", "the kubelet probing the API server", version,
			"readinessProbe must not set a host")
	})

	It("cannot have the minimart manager act on objects outside its namespace through a forged release", func(ctx SpecContext) {
		shelf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shelf", Namespace: victim}, Data: map[string]string{"owner": "victim"}}
		Expect(k8sClient.Create(ctx, shelf)).To(Succeed())
		name := "forged"
		manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shelf\n  namespace: %s\ndata:\n  owner: attacker\n", victim)
		Expect(tenant.Create(ctx, forgedRelease(attacker, name, manifest))).To(Succeed())
		mm := readSample("minimart", "charts_v1alpha1_minimart.yaml")
		mm.SetNamespace(attacker)
		mm.SetName(name)
		refusal := refusedByOperator(ctx, mm, "Degraded", "ReleaseUntrusted", "a release stays in its Minimart's namespace")
		got := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(shelf), got)).To(Succeed())
		leaked := ""
		if got.Data["owner"] != "victim" || got.ResourceVersion != shelf.ResourceVersion {
			leaked = "the victim's ConfigMap was written"
		}
		record(securityAttempt{kind: "Minimart", field: "(its release history)", try: "a forged revision naming the victim's ConfigMap",
			refusal: refusal, leaked: leaked})
	})

	It("cannot turn an administrator's console session into its own rights, nor use the REST API beyond its own", func(ctx SpecContext) {
		admin := serviceAccountToken(ctx, attacker, "platform-admin") // bound below to cluster-admin, as an administrator's is
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-security-admin-"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: attacker, Name: "platform-admin"}}}
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, binding))).To(Succeed()) })
		session := consoleSession(ctx, api, admin)
		code, body := session.get(ctx, "/console/k8s/api/v1/namespaces/"+victim+"/secrets")
		Expect(code).To(Equal(http.StatusOK), "the administrator's session reads what the administrator may: %s", body)
		for _, path := range []string{
			"/api/v1/namespaces/" + attacker + "/pods/page:8080/proxy/",
			"/api/v1/namespaces/" + attacker + "/services/page:80/proxy/",
			"/api/v1/namespaces/" + attacker + "/pods/page/log",
			"/api/v1/namespaces/" + attacker + "/pods/page/exec?command=sh",
			"/api/v1/nodes/any/proxy/metrics",
			"/api/v1/namespaces/" + attacker + "/pods/page%2Fproxy",
		} {
			code, body := session.get(ctx, "/console/k8s"+path)
			Expect(code).To(Equal(http.StatusNotFound), path)
			Expect(body).To(ContainSubstring("never a proxy, exec, attach, portforward or log"), "%s: the console's own refusal, not the API server's", path)
			record(securityAttempt{kind: "(console)", field: "relay", try: "an administrator opening " + path,
				refusal: fmt.Sprintf("HTTP %d: %s", code, answerText(body))})
		}

		code, body = bearerGet(ctx, "https://"+api+"/api/v1/namespaces/"+attacker+"/gordons", tenantToken)
		Expect(code).To(Equal(http.StatusOK), "the tenant's token lists its own namespace's Gordons: %s", body)
		code, body = bearerGet(ctx, "https://"+api+"/api/v1/namespaces/"+victim+"/gordons", tenantToken)
		Expect(code).To(Equal(http.StatusForbidden), body)
		record(securityAttempt{kind: "(REST API)", field: "namespace", try: "list the victim's Gordons with the tenant's token",
			refusal: fmt.Sprintf("HTTP %d: %s", code, answerText(body))})
	})

	It("cannot restore a cluster from the other tenant's backups with its own store account", func(ctx SpecContext) {
		endpoint, rootAccess, rootSecret := localS3(ctx)
		victimAccess, victimSecret := storeAccount(ctx, endpoint, rootAccess, rootSecret)
		victimStore := s3Client(endpoint, victimAccess, victimSecret)
		victimBucket, key := "e2e-victim-"+randomHex(4), "backups/etcd.db"
		_, err := victimStore.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &victimBucket})
		Expect(err).NotTo(HaveOccurred())
		_, err = victimStore.PutObject(ctx, &s3.PutObjectInput{Bucket: &victimBucket, Key: &key, Body: strings.NewReader("the victim's data")})
		Expect(err).NotTo(HaveOccurred())
		access, secret := storeAccount(ctx, endpoint, rootAccess, rootSecret)
		_, err = s3Client(endpoint, access, secret).GetObject(ctx, &s3.GetObjectInput{Bucket: &victimBucket, Key: &key})
		Expect(s3ErrorCode(err)).To(Equal("AccessDenied"), "the store keeps one account out of another's bucket")
		writeSecret(ctx, attacker, "aws-own", map[string][]byte{
			"credentials": fmt.Appendf(nil, "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", access, secret)})

		restore := tenantRestore(attacker, "from-victim", "restored-from-victim",
			map[string]any{"path": victimBucket + "/" + key, "awsSecret": "aws-own", "endpoint": endpoint, "forcePathStyle": true})
		refusal := refusedByOperator(ctx, restore, "Degraded", "CredentialsInvalid", "the store refused the credentials")
		record(securityAttempt{kind: "EtcdRestore", field: "spec.s3.path", try: "the victim's backup, with its own store account",
			refusal: refusal, leaked: restoredFrom(ctx, attacker, "restored-from-victim")})
	})
})

// tenantBackup is an EtcdBackup in ns with spec.
func tenantBackup(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdBackup",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
}

// tenantRestore is an EtcdRestore in ns of the snapshot source names into a new cluster.
func tenantRestore(ns, name, cluster string, source map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdRestore",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"etcdCluster": map[string]any{"name": cluster}, "backupStorageType": "S3", "s3": source}}}
}

// storedIn says what the bucket holds, "" when it is empty.
func storedIn(ctx context.Context, store *s3.Client, bucket string) string {
	if objects := storedObjects(ctx, store, bucket, ""); len(objects) > 0 {
		return "the bucket holds " + strings.Join(objects, ", ")
	}
	return ""
}

// connectionDetail is what obj's status and Events tell of a connection the manager made
// ("connection refused", a TLS or HTTP answer), which would make the field a port scanner;
// "" when they tell none.
func connectionDetail(ctx context.Context, obj *unstructured.Unstructured) string {
	got := obj.DeepCopy()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	text, err := json.Marshal(got.Object["status"])
	Expect(err).NotTo(HaveOccurred())
	for _, tell := range []string{"connection refused", "i/o timeout", "tls:", "x509", "StatusCode", "api error", "no such host"} {
		if strings.Contains(string(text), tell) {
			return "status tells " + tell
		}
	}
	return ""
}

// storeAccount makes an account of the local store through its admin API, signed by its root:
// versitygw's role "userplus", which makes buckets and reaches only its own. It returns the keys.
func storeAccount(ctx context.Context, endpoint, rootAccess, rootSecret string) (access, secret string) {
	access, secret = "e2e-"+randomHex(6), randomHex(20)
	body := fmt.Sprintf("<Account><Access>%s</Access><Secret>%s</Secret><Role>userplus</Role></Account>", access, secret)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, endpoint+"/create-user", strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	sum := sha256.Sum256([]byte(body))
	payloadHash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	Expect(v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: rootAccess, SecretAccessKey: rootSecret}, req,
		payloadHash, "s3", "us-east-1", time.Now())).To(Succeed())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(resp.Body)
	Expect(resp.StatusCode).To(Equal(http.StatusCreated), "making an account of the store: %s", answer)
	return access, secret
}

// restoredFrom says whether EtcdCluster name of namespace got as far as a checked snapshot
// (its Restored condition Restoring or True); "" when it did not.
func restoredFrom(ctx context.Context, namespace, name string) string {
	if reason := conditionField(ctx, etcdClusterRef(namespace, name), "Restored", "reason"); reason == "Restoring" || reason == "Restored" {
		return "the snapshot was read (" + reason + ")"
	}
	return ""
}

// ingressOf says which host the KRE entrypoint Ingress of namespace routes; "" when there is none.
func ingressOf(ctx context.Context, namespace string) string {
	ing := &networkingv1.Ingress{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "kre-entrypoint"}, ing)
	if apierrors.IsNotFound(err) {
		return ""
	}
	Expect(err).NotTo(HaveOccurred())
	return "an Ingress routing " + ing.Spec.Rules[0].Host
}

// moduleOf says what the operator wrote for pt: a KMM Module or consumer pods; "" when nothing.
func moduleOf(ctx context.Context, pt *unstructured.Unstructured) string {
	switch err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pt), kmmModule()); {
	case err == nil:
		return "a KMM Module was written"
	case !meta.IsNoMatchError(err) && client.IgnoreNotFound(err) != nil:
		Expect(err).NotTo(HaveOccurred())
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: pt.GetNamespace(), Name: pt.GetName() + "-consumer"}, &appsv1.DaemonSet{}); err == nil {
		return "a consumer DaemonSet was written"
	}
	return ""
}

// forgedRelease is a Secret in Helm's release storage format, as a tenant who may write Secrets
// can forge it: revision 1 of release name, deployed, with manifest.
func forgedRelease(ns, name, manifest string) *corev1.Secret {
	rel, err := json.Marshal(map[string]any{"name": name, "namespace": ns, "version": 1, "manifest": manifest,
		"info":  map[string]any{"status": "deployed", "description": "Install complete"},
		"chart": map[string]any{"metadata": map[string]any{"name": "minimart", "version": "0.1.0", "apiVersion": "v2"}}})
	Expect(err).NotTo(HaveOccurred())
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, err = zw.Write(rel)
	Expect(err).NotTo(HaveOccurred())
	Expect(zw.Close()).To(Succeed())
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + name + ".v1", Namespace: ns,
			Labels: map[string]string{"name": name, "owner": "helm", "status": "deployed", "version": "1"}},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(zipped.Bytes()))},
	}
}

// consoleClient is a logged-in console session, as a browser holds it: its cookies, and the
// console's origin on every request.
type consoleClient struct {
	base    string
	cookies []*http.Cookie
}

// consoleSession logs in to the console at addr with token, from the console's own page.
func consoleSession(ctx context.Context, addr, token string) *consoleClient {
	base := "https://" + addr
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/console/session", strings.NewReader(fmt.Sprintf(`{"token":%q}`, token)))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := insecureClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "the administrator logs in")
	return &consoleClient{base: base, cookies: resp.Cookies()}
}

// get is what the browser gets when the logged-in administrator opens path (a link).
func (c *consoleClient) get(ctx context.Context, path string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	Expect(err).NotTo(HaveOccurred())
	for _, cookie := range c.cookies {
		req.AddCookie(cookie)
	}
	req.Header.Set("Sec-Fetch-Site", "none") // typed or clicked from elsewhere
	return do(req)
}

// bearerGet is a GET of address with token, as a REST API client makes it.
func bearerGet(ctx context.Context, address, token string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	return do(req)
}

func do(req *http.Request) (int, string) {
	resp, err := insecureClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// answerText is what an answer says, for the table: a Status's message, else its first line.
func answerText(body string) string {
	var status struct {
		Message string `json:"message"`
	}
	text := strings.TrimSpace(body)
	if json.Unmarshal([]byte(body), &status) == nil && status.Message != "" {
		text = status.Message
	}
	line, _, _ := strings.Cut(text, "\n")
	if len(line) > 100 {
		line = line[:100] + "…"
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
