package etcdcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// restoreStore writes objects to the test store with its root credentials, and the
// CoreOS-style awsSecret "aws" in ns.
func restoreStore(t *testing.T, ns string) *backup.Store {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: ns},
		Data: map[string][]byte{backup.CredentialsKey: backuptest.CredentialsFile(store.AccessKey, store.SecretKey)}}
	if err := env.Client.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	return store.Store("restores")
}

// restoringCluster is a cluster of 3 that starts from restores/key.
func restoringCluster(t *testing.T, ns, name, key, awsSecret string) *v1beta2.EtcdCluster {
	t.Helper()
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{
		Restore: &v1beta2.RestoreSource{BackupStorageType: v1beta2.BackupStorageTypeS3, S3: store.Source("restores/"+key, awsSecret)}}}
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func statefulSetOf(t *testing.T, c *v1beta2.EtcdCluster) *appsv1.StatefulSet {
	t.Helper()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}}
	NewWithT(t).Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	return sts
}

func TestEtcdClusterStartsItsFirstMemberOnASnapshotOnlyOnceItIsChecked(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	s := restoreStore(t, ns)
	record, err := backup.Take(t.Context(), backup.Target{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second}, s,
		func(int64) string { return ns + "/good.db" })
	g.Expect(err).NotTo(HaveOccurred())
	// A periodic backup's path: the restore takes the newest backup under it.
	body, err := s.Get(t.Context(), ns+"/good.db")
	g.Expect(err).NotTo(HaveOccurred())
	snapshot, err := io.ReadAll(body)
	g.Expect(err).NotTo(HaveOccurred())
	periodic := backup.PeriodicKey(ns+"/good", 7, time.Now())
	_, err = s.Put(t.Context(), periodic, bytes.NewReader(snapshot), func() error { return nil })
	g.Expect(err).NotTo(HaveOccurred())
	c := restoringCluster(t, ns, "restored", ns+"/good", "aws")

	sts := statefulSetOf(t, c)
	init := sts.Spec.Template.Spec.InitContainers
	g.Expect(init).To(HaveLen(1))
	g.Expect(init[0].Image).To(Equal(testOperatorImage))
	g.Expect(init[0].Command).To(Equal([]string{"/etcd-snapshot", "restore-member"}))
	g.Expect(init[0].SecurityContext.RunAsNonRoot).To(BeNil(), "the pod's restricted context applies")
	g.Expect(*init[0].SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
	g.Expect(sts.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.Secret.Optional", HaveValue(BeTrue()))),
		"a member restarting after the awsSecret is gone still starts")

	pod := expectStarted(t, sts, 0, "new")
	g.Expect(pod.Annotations).To(HaveKeyWithValue(v1beta2.RestoreKeyAnnotation, periodic))
	g.Expect(pod.Annotations).To(HaveKeyWithValue(v1beta2.RestoreSHA256Annotation, record.SHA256))
	g.Eventually(func(g Gomega) {
		get(g, c)
		restored := conditions.Get(c, v1beta2.RestoredCondition)
		g.Expect(restored).NotTo(BeNil())
		g.Expect(restored.Reason).To(Equal(v1beta2.ReasonRestoring))
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterKeepsItsFirstMemberWaitingOnASnapshotItCannotUse(t *testing.T) {
	ns := newNamespace(t)
	s := restoreStore(t, ns)
	garbage := make([]byte, 4096+32)
	_, _ = rand.Read(garbage)
	if _, err := s.Put(t.Context(), ns+"/corrupt.db", bytes.NewReader(garbage), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, key, secret, reason, message string }{
		{"corrupt", ns + "/corrupt.db", "aws", v1beta2.ReasonSnapshotCorrupt, "the database's SHA-256 is"},
		{"missing", ns + "/none.db", "aws", v1beta2.ReasonSnapshotNotFound, "nor a periodic backup under it"},
		{"no-secret", ns + "/corrupt.db", "nope", v1beta2.ReasonCredentialsInvalid, `no Secret "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			c := restoringCluster(t, ns, tt.name, tt.key, tt.secret)
			pod := memberPod(t, statefulSetOf(t, c), 0)
			expectRestoreRefused(t, c, tt.reason, tt.message)
			get(g, pod)
			g.Expect(pod.Spec.SchedulingGates).NotTo(BeEmpty(), "the first member waits behind its gate")
			g.Expect(events.Emitted(c, tt.reason)).To(BeNumerically(">=", 1), "a Warning Event says why")
		})
	}
}

// expectRestoreRefused waits until c's Restored and Degraded conditions say why its first
// member cannot start from the snapshot.
func expectRestoreRefused(t *testing.T, c *v1beta2.EtcdCluster, reason, message string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, c)
		for _, cond := range []string{v1beta2.RestoredCondition, conditions.DegradedCondition} {
			got := conditions.Get(c, cond)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Reason).To(Equal(reason), cond)
			g.Expect(got.Message).To(ContainSubstring(message), cond)
		}
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterRefusesARestoreAddedOrChangedLater(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}}
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	before := c.DeepCopy()
	c.Spec.Restore = &v1beta2.RestoreSource{BackupStorageType: v1beta2.BackupStorageTypeS3, S3: store.Source("restores/x", "aws")}
	// A merge patch carries no resourceVersion, so the reconciler's own writes cannot make it fail for a conflict.
	g.Expect(env.Client.Patch(context.Background(), c, client.MergeFrom(before))).
		To(MatchError(ContainSubstring("restore cannot be added, changed or removed")))

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
		"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
		"spec":     map[string]any{"restore": map[string]any{"backupStorageType": "S3"}},
	}}
	g.Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring("backupStorageType S3 needs the s3 section")))
	u.Object["spec"] = map[string]any{"restore": map[string]any{"backupStorageType": "PersistentVolumeClaim"}}
	g.Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring("backupStorageType PersistentVolumeClaim needs the persistentVolumeClaim section")))
}
