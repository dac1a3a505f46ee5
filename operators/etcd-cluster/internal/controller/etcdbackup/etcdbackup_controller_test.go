package etcdbackup

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// awsSecret makes the CoreOS operator's awsSecret with the store's root credentials, or
// with secretKey instead of its secret when given.
func awsSecret(t *testing.T, ns, secretKey string) string {
	t.Helper()
	if secretKey == "" {
		secretKey = store.SecretKey
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aws"}, Data: map[string][]byte{
		backup.CredentialsKey: backuptest.CredentialsFile(store.AccessKey, secretKey),
		backup.ConfigKey:      []byte("[default]\nregion = us-east-1\n"),
	}}
	if err := env.Client.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return s.Name
}

// newBackup creates an EtcdBackup of the loopback member to path.
func newBackup(t *testing.T, ns, path, secret string, policy *v1beta2.BackupPolicy) *v1beta2.EtcdBackup {
	t.Helper()
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"}, Spec: v1beta2.EtcdBackupSpec{
		EtcdEndpoints: []string{member.URL}, StorageType: v1beta2.BackupStorageTypeS3,
		S3: store.Source(path, secret), BackupPolicy: policy,
	}}
	if err := env.Client.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

func rootStore() *backup.Store { return store.Store(bucket) }

// condition returns b's condition of type, read again.
func condition(g gomega.Gomega, b *v1beta2.EtcdBackup, conditionType string) metav1.Condition {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b)).To(gomega.Succeed())
	c := conditions.Get(b, conditionType)
	g.Expect(c).NotTo(gomega.BeNil(), "no %s condition", conditionType)
	return *c
}

// metricValues are the values of the metric name's series of b.
func metricValues(g gomega.Gomega, name string, b *v1beta2.EtcdBackup) []float64 {
	series, err := testenv.Series(name, map[string]string{"namespace": b.Namespace, "name": b.Name})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	out := make([]float64, 0, len(series))
	for _, s := range series {
		out = append(out, s.Value)
	}
	return out
}

func TestOneShotBackupIsTakenOnceAndVerified(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "one-shot")
	b := newBackup(t, ns, bucket+"/"+ns+"/etcd.db", awsSecret(t, ns, ""), nil)

	g.Eventually(func(g gomega.Gomega) {
		c := condition(g, b, conditions.ReadyCondition)
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.Reason).To(gomega.Equal(v1beta2.ReasonBackupSucceeded))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	st := b.Status
	g.Expect(st.Succeeded).To(gomega.BeTrue())
	g.Expect(st.LastBackup.Path).To(gomega.Equal(bucket + "/" + ns + "/etcd.db"))
	g.Expect(st.EtcdRevision).To(gomega.BeNumerically(">", 0))
	g.Expect(st.LastBackup.SHA256).To(gomega.HaveLen(64))
	g.Expect(st.LastSuccessDate).NotTo(gomega.BeNil())
	g.Expect(st.NextBackupTime).To(gomega.BeNil())
	g.Expect(st.ObservedGeneration).To(gomega.Equal(b.Generation))
	g.Expect(condition(g, b, conditions.DegradedCondition).Status).To(gomega.Equal(metav1.ConditionFalse))
	g.Expect(condition(g, b, conditions.ProgressingCondition).Status).To(gomega.Equal(metav1.ConditionFalse))

	objects, err := rootStore().List(t.Context(), ns+"/")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(objects).To(gomega.HaveLen(1))
	g.Expect(objects[0].Size).To(gomega.Equal(st.LastBackup.Size))

	// Once: no second backup, however many passes.
	g.Consistently(func() int { return events.Emitted(b, v1beta2.ReasonBackupSucceeded) }).
		WithTimeout(3 * time.Second).Should(gomega.Equal(1))

	stored := st.LastBackup.StartTime.Add(st.LastBackup.Duration.Duration)
	g.Expect(metricValues(g, "quintet_etcd_backup_last_success_timestamp_seconds", b)).To(gomega.Equal([]float64{float64(stored.Unix())}))
	g.Expect(metricValues(g, "quintet_etcd_backup_last_size_bytes", b)).To(gomega.Equal([]float64{float64(st.LastBackup.Size)}))
	g.Expect(metricValues(g, "quintet_etcd_backup_schedule_interval_seconds", b)).To(gomega.BeEmpty(), "a one-shot backup has no interval")
	g.Expect(metricValues(g, "quintet_etcd_backup_failures_total", b)).To(gomega.Equal([]float64{0}))
	g.Expect(env.Client.Delete(t.Context(), b)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		for _, name := range []string{"quintet_etcd_backup_last_success_timestamp_seconds", "quintet_etcd_backup_failures_total"} {
			g.Expect(metricValues(g, name, b)).To(gomega.BeEmpty(), name)
		}
	}).WithTimeout(10 * time.Second).Should(gomega.Succeed())
}

func TestPeriodicBackupsKeepMaxBackups(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "periodic")
	b := newBackup(t, ns, bucket+"/"+ns+"/etcd", awsSecret(t, ns, ""), &v1beta2.BackupPolicy{BackupIntervalInSecond: 5, MaxBackups: 2})

	g.Eventually(func() int { return events.Emitted(b, v1beta2.ReasonBackupSucceeded) }).
		WithTimeout(60 * time.Second).Should(gomega.BeNumerically(">=", 4))
	g.Eventually(func(g gomega.Gomega) {
		objects, err := rootStore().List(t.Context(), ns+"/etcd_v")
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(objects).To(gomega.HaveLen(2))
		g.Expect(condition(g, b, conditions.ReadyCondition).Status).To(gomega.Equal(metav1.ConditionTrue))
		keys := make([]string, 0, len(objects))
		for _, o := range objects {
			keys = append(keys, bucket+"/"+o.Key)
		}
		g.Expect(keys).To(gomega.ContainElement(b.Status.LastBackup.Path))
	}).WithTimeout(10 * time.Second).Should(gomega.Succeed())
	// The Event follows the deletion it reports: it may come a moment after the list shows it.
	g.Eventually(func() int { return events.Emitted(b, "Pruned") }).WithTimeout(10 * time.Second).Should(gomega.BeNumerically(">=", 2))
	g.Expect(b.Status.NextBackupTime).NotTo(gomega.BeNil())
	g.Expect(metricValues(g, "quintet_etcd_backup_schedule_interval_seconds", b)).To(gomega.Equal([]float64{5}))
}

func TestFailedBackupsSayWhyAndLoseNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		change  func(b *v1beta2.EtcdBackup, ns string)
		secret  string // the awsSecret's secret key, when wrong
		reason  string
		message string
	}{
		{name: "no such bucket", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.S3.Path = "missing-bucket/etcd.db" },
			reason: v1beta2.ReasonStoreFailed, message: `bucket "missing-bucket" does not exist`},
		{name: "a wrong secret key", secret: "wrong", reason: v1beta2.ReasonCredentialsInvalid, message: "refused the credentials"},
		{name: "no awsSecret", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.S3.AWSSecret = "missing" },
			reason: v1beta2.ReasonCredentialsInvalid, message: `no Secret "missing"`},
		{name: "a store that does not answer", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.S3.Endpoint = "http://127.0.0.1:1" },
			reason: v1beta2.ReasonStoreFailed, message: "connection refused"},
		{name: "etcd that does not answer", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.EtcdEndpoints = []string{"http://127.0.0.1:1"} },
			reason: v1beta2.ReasonClusterUnreachable, message: "127.0.0.1:1"},
		{name: "an endpoint the operator does not list", change: func(b *v1beta2.EtcdBackup, _ string) {
			b.Spec.EtcdEndpoints = []string{"http://169.254.169.254:2379"}
		}, reason: v1beta2.ReasonEndpointNotAllowed, message: "names no EtcdCluster of namespace"},
		{name: "an allowed endpoint beside one that names no cluster", change: func(b *v1beta2.EtcdBackup, ns string) {
			b.Spec.EtcdEndpoints = []string{member.URL, "http://" + ns + "-client:2379"}
		}, reason: v1beta2.ReasonEndpointNotAllowed, message: "names no EtcdCluster"},
		{name: "the cloud's metadata service as the store", change: func(b *v1beta2.EtcdBackup, _ string) {
			b.Spec.S3.Endpoint = "http://169.254.169.254"
		}, reason: v1beta2.ReasonEndpointNotAllowed, message: "an address inside the cluster or the machine (169.254.169.254)"},
		{name: "a private address as the store", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.S3.Endpoint = "https://10.96.0.1" },
			reason: v1beta2.ReasonEndpointNotAllowed, message: "--backup-s3-endpoints"},
		{name: "the API server as the store", change: func(b *v1beta2.EtcdBackup, _ string) { b.Spec.S3.Endpoint = env.Config.Host },
			reason: v1beta2.ReasonEndpointNotAllowed, message: "the Kubernetes API server's address"},
		{name: "no such EtcdCluster", change: func(b *v1beta2.EtcdBackup, _ string) {
			b.Spec.EtcdEndpoints, b.Spec.ClusterName = nil, "missing"
		}, reason: v1beta2.ReasonClusterNotFound, message: `no EtcdCluster "missing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := gomega.NewWithT(t)
			ns := env.NewNamespace(t, "failing")
			key := ns + "/etcd.db"
			// A good backup from before is under the key: a failure leaves it as it is.
			older := "an older good backup"
			_, err := rootStore().Put(t.Context(), key, strings.NewReader(older), func() error { return nil })
			g.Expect(err).NotTo(gomega.HaveOccurred())

			b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"}, Spec: v1beta2.EtcdBackupSpec{
				EtcdEndpoints: []string{member.URL}, StorageType: v1beta2.BackupStorageTypeS3,
				S3: store.Source(bucket+"/"+key, awsSecret(t, ns, tc.secret)),
			}}
			if tc.change != nil {
				tc.change(b, ns)
			}
			g.Expect(env.Client.Create(t.Context(), b)).To(gomega.Succeed())
			g.Eventually(func(g gomega.Gomega) {
				c := condition(g, b, conditions.DegradedCondition)
				g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(gomega.Equal(tc.reason), c.Message)
				g.Expect(c.Message).To(gomega.ContainSubstring(tc.message))
			}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
			g.Expect(condition(g, b, conditions.ReadyCondition).Status).To(gomega.Equal(metav1.ConditionFalse))
			g.Expect(b.Status.Succeeded).To(gomega.BeFalse())
			g.Expect(b.Status.LastFailure.Consecutive).To(gomega.BeNumerically(">=", 1))
			g.Expect(events.Emitted(b, tc.reason)).To(gomega.BeNumerically(">=", 1))
			g.Expect(metricValues(g, "quintet_etcd_backup_failures_total", b)).To(gomega.ConsistOf(gomega.BeNumerically(">=", 1)))
			g.Expect(metricValues(g, "quintet_etcd_backup_last_success_timestamp_seconds", b)).To(gomega.BeEmpty())

			body, err := rootStore().Get(t.Context(), key)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			defer func() { _ = body.Close() }()
			g.Expect(io.ReadAll(body)).To(gomega.Equal([]byte(older)))
		})
	}
}

func TestAdmissionRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	ns := env.NewNamespace(t, "admission")
	for _, tc := range []struct {
		name    string
		change  func(s *v1beta2.EtcdBackupSpec)
		message string
	}{
		{"both a cluster and endpoints", func(s *v1beta2.EtcdBackupSpec) { s.ClusterName = "c" }, "set exactly one of clusterName"},
		{"neither a cluster nor endpoints", func(s *v1beta2.EtcdBackupSpec) { s.EtcdEndpoints = nil }, "set exactly one of clusterName"},
		{"an endpoint that is no URL", func(s *v1beta2.EtcdBackupSpec) { s.EtcdEndpoints = []string{"etcd:2379"} }, "client URL"},
		{"S3 without its section", func(s *v1beta2.EtcdBackupSpec) { s.S3 = nil }, "storageType S3 needs the s3 section"},
		{"a path without a key", func(s *v1beta2.EtcdBackupSpec) { s.S3.Path = "bucket" }, "path must be <bucket>/<key>"},
		{"a volume without its section", func(s *v1beta2.EtcdBackupSpec) { s.StorageType, s.S3 = v1beta2.BackupStorageTypePVC, nil },
			"storageType PersistentVolumeClaim needs the persistentVolumeClaim section"},
		{"an absolute path in the volume", func(s *v1beta2.EtcdBackupSpec) {
			s.StorageType, s.S3, s.PersistentVolumeClaim = v1beta2.BackupStorageTypePVC, nil, &v1beta2.PVCBackupSource{ClaimName: "c", Path: "/etc/x"}
		}, "path is a relative file path in the volume"},
		{"a path out of the volume", func(s *v1beta2.EtcdBackupSpec) {
			s.StorageType, s.S3, s.PersistentVolumeClaim = v1beta2.BackupStorageTypePVC, nil, &v1beta2.PVCBackupSource{ClaimName: "c", Path: "a/../../x"}
		}, "without . or .. parts"},
		{"an interval and a schedule", func(s *v1beta2.EtcdBackupSpec) {
			s.BackupPolicy = &v1beta2.BackupPolicy{BackupIntervalInSecond: 60, Schedule: "@hourly"}
		}, "not both"},
		{"a schedule of four fields", func(s *v1beta2.EtcdBackupSpec) { s.BackupPolicy = &v1beta2.BackupPolicy{Schedule: "0 * * *"} }, "five fields"},
		{"retention of a one-shot backup", func(s *v1beta2.EtcdBackupSpec) { s.BackupPolicy = &v1beta2.BackupPolicy{MaxBackups: 3} }, "prune periodic backups"},
		{"clientTLSSecret with a cluster", func(s *v1beta2.EtcdBackupSpec) {
			s.EtcdEndpoints, s.ClusterName, s.ClientTLSSecret = nil, "c", "tls"
		}, "clientTLSSecret is for etcdEndpoints"},
	} {
		b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"}, Spec: v1beta2.EtcdBackupSpec{
			EtcdEndpoints: []string{member.URL}, StorageType: v1beta2.BackupStorageTypeS3, S3: store.Source(bucket+"/k", "aws"),
		}}
		tc.change(&b.Spec)
		err := env.Client.Create(t.Context(), b)
		if err == nil || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("%s: Create = %v, want a refusal saying %q", tc.name, err, tc.message)
		}
	}
	// and the CoreOS operator's one-shot example is accepted as written
	ok := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coreos"}, Spec: v1beta2.EtcdBackupSpec{
		EtcdEndpoints: []string{"https://example-client:2379"}, StorageType: v1beta2.BackupStorageTypeS3,
		S3: &v1beta2.S3BackupSource{Path: "mybucket/etcd.backup", AWSSecret: "aws"},
	}}
	if err := env.Client.Create(t.Context(), ok); err != nil {
		t.Error(fmt.Errorf("the CoreOS example: %w", err))
	}
}

func TestFirstBackupWaitsForItsClusterToBeAvailable(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "waits")
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "new"}}
	g.Expect(env.Client.Create(t.Context(), c)).To(gomega.Succeed())
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"}, Spec: v1beta2.EtcdBackupSpec{
		ClusterName: c.Name, StorageType: v1beta2.BackupStorageTypeS3, S3: store.Source(bucket+"/"+ns+"/etcd", awsSecret(t, ns, "")),
	}}
	g.Expect(env.Client.Create(t.Context(), b)).To(gomega.Succeed())

	waiting := func(g gomega.Gomega) {
		p := condition(g, b, conditions.ProgressingCondition)
		g.Expect(p.Status).To(gomega.Equal(metav1.ConditionTrue))
		g.Expect(p.Reason).To(gomega.Equal(v1beta2.ReasonWaitingForCluster))
		g.Expect(condition(g, b, conditions.ReadyCondition).Reason).To(gomega.Equal(v1beta2.ReasonWaitingForCluster))
		g.Expect(condition(g, b, conditions.DegradedCondition).Status).To(gomega.Equal(metav1.ConditionFalse))
	}
	g.Eventually(waiting).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	g.Consistently(waiting).WithTimeout(6 * time.Second).Should(gomega.Succeed())

	// Available, but its members' DNS names answer nowhere here: the backup is tried, and fails.
	conditions.Set(c, v1beta2.AvailableCondition, metav1.ConditionTrue, v1beta2.ReasonQuorumAvailable, "test")
	g.Expect(env.Client.Status().Update(t.Context(), c)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		d := condition(g, b, conditions.DegradedCondition)
		g.Expect(d.Reason).To(gomega.Equal(v1beta2.ReasonClusterUnreachable), d.Message)
		g.Expect(d.Message).To(gomega.ContainSubstring("new-0.new." + ns + ".svc"))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
}

func TestFirstBackupOfAClusterThatLostItsQuorumIsTriedAtOnce(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "lost")
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lost"}}
	g.Expect(env.Client.Create(t.Context(), c)).To(gomega.Succeed())
	// It had members; none answers now (not Available).
	c.Status.Members = []v1beta2.MemberStatus{{Name: "lost-0", ID: "a0"}, {Name: "lost-1", ID: "a1"}, {Name: "lost-2", ID: "a2"}}
	g.Expect(env.Client.Status().Update(t.Context(), c)).To(gomega.Succeed())
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"}, Spec: v1beta2.EtcdBackupSpec{
		ClusterName: c.Name, StorageType: v1beta2.BackupStorageTypeS3, S3: store.Source(bucket+"/"+ns+"/etcd", awsSecret(t, ns, "")),
	}}
	g.Expect(env.Client.Create(t.Context(), b)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		d := condition(g, b, conditions.DegradedCondition)
		g.Expect(d.Reason).To(gomega.Equal(v1beta2.ReasonClusterUnreachable), "tried, not waiting: %s", d.Message)
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
}

// The attack a tenant tried: an EtcdBackup in its own namespace whose etcdEndpoints name
// another namespace's EtcdCluster, to its own bucket. The manager, which that cluster's
// NetworkPolicy admits, connects to nothing and stores nothing.
func TestABackupReachesOnlyTheClustersOfItsOwnNamespace(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	victim, tenant := env.NewNamespace(t, "victim"), env.NewNamespace(t, "tenant")
	g.Expect(env.Client.Create(t.Context(), &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "example"}})).To(gomega.Succeed())
	mine := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "mine"}, Spec: v1beta2.EtcdClusterSpec{Size: 1}}
	g.Expect(env.Client.Create(t.Context(), mine)).To(gomega.Succeed())
	secret := awsSecret(t, tenant, "")
	backupOf := func(name string, endpoints ...string) *v1beta2.EtcdBackup {
		b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: name}, Spec: v1beta2.EtcdBackupSpec{
			EtcdEndpoints: endpoints, StorageType: v1beta2.BackupStorageTypeS3, S3: store.Source(bucket+"/"+tenant+"/"+name+".db", secret),
		}}
		g.Expect(env.Client.Create(t.Context(), b)).To(gomega.Succeed())
		return b
	}
	degraded := func(b *v1beta2.EtcdBackup, reason, message string) {
		g.Eventually(func(g gomega.Gomega) {
			c := condition(g, b, conditions.DegradedCondition)
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(gomega.Equal(reason), c.Message)
			g.Expect(c.Message).To(gomega.ContainSubstring(message))
		}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	}
	for name, endpoint := range map[string]string{
		"stolen":       "http://example-client." + victim + ".svc:2379",
		"stolen-fqdn":  "http://example-client." + victim + ".svc.cluster.local:2379",
		"stolen-short": "http://example-client." + victim + ":2379",
		"stolen-pod":   "http://example-0.example." + victim + ".svc:2379",
	} {
		b := backupOf(name, endpoint)
		degraded(b, v1beta2.ReasonEndpointNotAllowed, "names no EtcdCluster of namespace "+tenant)
		g.Expect(events.Emitted(b, v1beta2.ReasonEndpointNotAllowed)).To(gomega.BeNumerically(">=", 1))
	}
	objects, err := rootStore().List(t.Context(), tenant+"/")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(objects).To(gomega.BeEmpty(), "nothing of another namespace's cluster is stored")

	// Its own cluster, named as a pod of its namespace writes it, is reached at the
	// addresses the operator gives its members, never at what was written.
	own := backupOf("own", "http://mine-client:2379")
	degraded(own, v1beta2.ReasonClusterUnreachable, "mine-0.mine."+tenant+".svc:2379")
}
