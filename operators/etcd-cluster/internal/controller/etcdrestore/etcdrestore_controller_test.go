package etcdrestore

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

const (
	timeout = 20 * time.Second
	tick    = 100 * time.Millisecond
)

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// coreOSRestore is an EtcdRestore with the CoreOS operator's fields only.
func coreOSRestore(t *testing.T, ns, cluster string, clusterSpec *v1beta2.EtcdClusterSpec) *v1beta2.EtcdRestore {
	t.Helper()
	er := &v1beta2.EtcdRestore{ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: ns}, Spec: v1beta2.EtcdRestoreSpec{
		EtcdCluster: v1beta2.EtcdClusterRef{Name: cluster},
		RestoreSource: v1beta2.RestoreSource{BackupStorageType: v1beta2.BackupStorageTypeS3,
			S3: &v1beta2.S3BackupSource{Path: "backups/" + cluster, AWSSecret: "aws"}},
		ClusterSpec: clusterSpec,
	}}
	if err := env.Client.Create(context.Background(), er); err != nil {
		t.Fatal(err)
	}
	return er
}

// setRestored writes the cluster's Restored condition, as the EtcdCluster reconciler does.
func setRestored(g Gomega, c *v1beta2.EtcdCluster, status metav1.ConditionStatus, reason, message string) {
	get(g, c)
	conditions.Set(c, v1beta2.RestoredCondition, status, reason, message)
	g.Expect(env.Client.Status().Update(context.Background(), c)).To(Succeed())
}

func expectReady(t *testing.T, er *v1beta2.EtcdRestore, status metav1.ConditionStatus, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, er)
		ready := conditions.Get(er, conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(status))
		g.Expect(ready.Reason).To(Equal(reason))
	}, timeout, tick).Should(Succeed())
}

func TestEtcdRestoreMakesItsClusterAndFollowsItsRestore(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "restore-test")
	er := coreOSRestore(t, ns, "phoenix", &v1beta2.EtcdClusterSpec{Size: 5, Version: "3.6.7"})

	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "phoenix", Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, c) }, timeout, tick).Should(Succeed())
	g.Expect(c.Spec.Size).To(BeEquivalentTo(5))
	g.Expect(c.Spec.Version).To(Equal("3.6.7"))
	g.Expect(c.Spec.Restore).To(Equal(&er.Spec.RestoreSource))
	g.Expect(c.Labels).To(HaveKeyWithValue(v1beta2.RestoredByLabel, er.Name))
	g.Expect(c.OwnerReferences).To(BeEmpty(), "the cluster stays when the EtcdRestore goes")
	expectReady(t, er, metav1.ConditionFalse, v1beta2.ReasonRestoring)
	g.Expect(er.Status.ClusterUID).To(Equal(c.UID))

	setRestored(g, c, metav1.ConditionFalse, v1beta2.ReasonSnapshotCorrupt, "the first member waits: snapshot corrupt")
	expectReady(t, er, metav1.ConditionFalse, v1beta2.ReasonSnapshotCorrupt)
	g.Expect(conditions.IsTrue(er, conditions.DegradedCondition)).To(BeTrue())
	g.Expect(er.Status.Reason).To(ContainSubstring("snapshot corrupt"))
	g.Expect(events.Emitted(er, v1beta2.ReasonSnapshotCorrupt)).To(Equal(1), "a Warning Event says why")

	setRestored(g, c, metav1.ConditionTrue, v1beta2.ReasonRestored, "the cluster started from backups/phoenix")
	expectReady(t, er, metav1.ConditionTrue, v1beta2.ReasonRestored)
	g.Expect(er.Status.Succeeded).To(BeTrue())
	g.Expect(er.Status.Reason).To(BeEmpty())

	By := "deleting the cluster after it was restored leaves the restore succeeded, and makes nothing again"
	g.Expect(env.Client.Delete(context.Background(), c)).To(Succeed(), By)
	g.Consistently(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), &v1beta2.EtcdCluster{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), By)
		get(g, er)
		g.Expect(er.Status.Succeeded).To(BeTrue(), By)
	}, 2*time.Second, tick).Should(Succeed())
}

func TestEtcdRestoreOfTheCoreOSOperatorMakesThreeMembers(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "restore-test")
	coreOSRestore(t, ns, "coreos", nil)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "coreos", Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, c) }, timeout, tick).Should(Succeed())
	g.Expect(c.Spec.Size).To(BeEquivalentTo(3))
	g.Expect(c.Spec.Version).To(Equal(v1beta2.DefaultVersion))
}

// A restore from a volume has no s3 section: the Event naming the snapshot says claim/path.
func TestEtcdRestoreFromAVolumeMakesItsClusterAndSaysSo(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "restore-test")
	er := &v1beta2.EtcdRestore{ObjectMeta: metav1.ObjectMeta{Name: "from-claim", Namespace: ns}, Spec: v1beta2.EtcdRestoreSpec{
		EtcdCluster: v1beta2.EtcdClusterRef{Name: "from-claim"},
		RestoreSource: v1beta2.RestoreSource{BackupStorageType: v1beta2.BackupStorageTypePVC,
			PersistentVolumeClaim: &v1beta2.PVCBackupSource{ClaimName: "backups", Path: "etcd/snapshot.db"}},
	}}
	g.Expect(env.Client.Create(context.Background(), er)).To(Succeed())
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "from-claim", Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, c) }, timeout, tick).Should(Succeed())
	g.Eventually(func() int { return events.Emitted(er, "Created") }, timeout, tick).Should(Equal(1))
	g.Expect(er.Spec.Location()).To(Equal("backups/etcd/snapshot.db"))
}

func TestEtcdRestoreNeverTouchesAClusterItDidNotMake(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "restore-test")
	existing := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{Size: 1}}
	g.Expect(env.Client.Create(context.Background(), existing)).To(Succeed())
	er := coreOSRestore(t, ns, "busy", nil)
	expectReady(t, er, metav1.ConditionFalse, v1beta2.ReasonClusterExists)
	g.Expect(er.Status.Reason).To(ContainSubstring("never overwrites a cluster"))
	g.Expect(er.Status.ClusterUID).To(BeEmpty())
	get(g, existing)
	g.Expect(existing.Spec.Restore).To(BeNil())
	g.Expect(existing.Spec.Size).To(BeEquivalentTo(1))
	g.Expect(existing.Labels).NotTo(HaveKey(v1beta2.RestoredByLabel))

	By := "once that cluster is deleted, the restore makes its own (it looks again every 30s; here a change of the EtcdRestore makes it look)"
	g.Expect(env.Client.Delete(context.Background(), existing)).To(Succeed())
	get(g, er)
	metav1.SetMetaDataAnnotation(&er.ObjectMeta, "test/poke", "1")
	g.Expect(env.Client.Update(context.Background(), er)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: ns}}
		get(g, c)
		g.Expect(c.Labels).To(HaveKeyWithValue(v1beta2.RestoredByLabel, er.Name), By)
	}, timeout, tick).Should(Succeed())
}

func TestEtcdRestoreRejectsBadInputAtAdmission(t *testing.T) {
	ns := env.NewNamespace(t, "restore-test")
	s3 := map[string]any{"path": "backups/x", "awsSecret": "aws"}
	for _, tt := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"no cluster", map[string]any{"backupStorageType": "S3", "s3": s3}, "spec.etcdCluster: Required value"},
		{"no s3", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "S3"}, "backupStorageType S3 needs the s3 section"},
		{"no claim", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "PersistentVolumeClaim"}, "needs the persistentVolumeClaim section"},
		{"a claim path out of the volume", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "PersistentVolumeClaim",
			"persistentVolumeClaim": map[string]any{"claimName": "b", "path": "../etc/x.db"}}, "path is a relative file path in the volume"},
		{"another store", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "GCS", "s3": s3}, "supported values: \"S3\", \"PersistentVolumeClaim\""},
		{"a restore in the cluster spec", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "S3", "s3": s3,
			"clusterSpec": map[string]any{"restore": map[string]any{"backupStorageType": "S3", "s3": s3}}}, "clusterSpec.restore is set by the EtcdRestore"},
		{"a bad sha256", map[string]any{"etcdCluster": map[string]any{"name": "x"}, "backupStorageType": "S3", "s3": s3, "sha256": "abc"}, "sha256 is 64 lowercase hexadecimal digits"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdRestore",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
				"spec":     tt.spec,
			}}
			NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	g := NewWithT(t)
	er := coreOSRestore(t, ns, "fixed", nil)
	before := er.DeepCopy()
	er.Spec.S3.Path = "backups/other"
	// A merge patch without a resourceVersion: the reconciler may write the restore's status at any time,
	// and an update would then be refused for the conflict, not for the change.
	g.Expect(env.Client.Patch(context.Background(), er, client.MergeFrom(before))).
		To(MatchError(ContainSubstring("an EtcdRestore is one restore and cannot change")))
}
