package etcdcluster

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs/jobstest"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// volumeRestoringCluster is a cluster of 3 that starts from backups/etcd/<name>.db, on the
// nodes labelled for it.
func volumeRestoringCluster(t *testing.T, ns, name string) *v1beta2.EtcdCluster {
	t.Helper()
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{
		Pod: &v1beta2.PodPolicy{NodeSelector: map[string]string{"quintet.dev/etcd": "yes"}},
		Restore: &v1beta2.RestoreSource{BackupStorageType: v1beta2.BackupStorageTypePVC, RevisionBump: 1000,
			PersistentVolumeClaim: &v1beta2.PVCBackupSource{ClaimName: "backups", Path: "etcd/" + name + ".db"}}}}
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// awaitRestoreJob waits for the Job that restores c's first member.
func awaitRestoreJob(t *testing.T, c *v1beta2.EtcdCluster) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name + "-restore"}}
	NewWithT(t).Eventually(func(g Gomega) { get(g, job) }, timeout, tick).Should(Succeed())
	return job
}

func TestEtcdClusterRestoresItsFirstMemberFromAVolumeInAJobBeforeItStarts(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c := volumeRestoringCluster(t, ns, "from-volume")
	sts := statefulSetOf(t, c)
	g.Expect(sts.Spec.Template.Spec.InitContainers).To(BeEmpty(), "members never read the claim")
	for _, v := range sts.Spec.Template.Spec.Volumes {
		g.Expect(v.PersistentVolumeClaim).To(BeNil(), "members never mount the claim")
	}
	member := memberPod(t, sts, 0)
	job := awaitRestoreJob(t, c)

	g.Expect(metav1.IsControlledBy(job, c)).To(BeTrue())
	pod := job.Spec.Template.Spec
	g.Expect(job.Spec.Template.Labels).To(HaveKeyWithValue(RestoreJobLabel, c.Name))
	g.Expect(job.Spec.Template.Labels).NotTo(HaveKey(v1beta2.ClusterLabel), "nothing that selects members selects the Job")
	g.Expect(pod.NodeSelector).To(Equal(c.Spec.Pod.NodeSelector), "where the members may run")
	g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
	g.Expect(pod.Containers[0].Command).To(Equal([]string{"/etcd-snapshot", "restore-member"}))
	vars := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		vars[e.Name] = e.Value
	}
	g.Expect(vars).To(HaveKeyWithValue("ETCD_NAME", "from-volume-0"))
	g.Expect(vars).To(HaveKeyWithValue("ETCD_INITIAL_CLUSTER_STATE", "new"))
	g.Expect(vars).To(HaveKeyWithValue("ETCD_INITIAL_CLUSTER", "from-volume-0="+DNSAddresses(c).PeerURL(0)))
	g.Expect(vars).To(HaveKeyWithValue(restore.EnvClaimPath, "etcd/from-volume.db"))
	g.Expect(vars).To(HaveKeyWithValue(restore.EnvRevisionBump, "1000"))
	claims := map[string]bool{} // claim: read-only
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.PersistentVolumeClaim.ClaimName] = v.PersistentVolumeClaim.ReadOnly
		}
	}
	g.Expect(claims).To(Equal(map[string]bool{"backups": true, "data-from-volume-0": false}), "the snapshot read-only, the member's own volume")

	g.Consistently(func(g Gomega) {
		get(g, member)
		g.Expect(member.Spec.SchedulingGates).NotTo(BeEmpty(), "the member waits for its data")
	}, 2*time.Second, tick).Should(Succeed())
	get(g, c)
	g.Expect(conditions.Get(c, v1beta2.RestoredCondition)).To(HaveField("Reason", v1beta2.ReasonRestoring))
	g.Expect(conditions.Get(c, conditions.DegradedCondition)).To(HaveField("Reason", v1beta2.ReasonMembersUnreachable),
		"restoring is no failure: as any cluster whose first member has not started")

	jobstest.Finish(t, env.Client, job, string(backup.EncodeResult(backup.JobResult{Restored: "restored"})), true)
	g.Eventually(func(g Gomega) {
		get(g, member)
		g.Expect(member.Spec.SchedulingGates).To(BeEmpty(), "the member starts on its restored data")
	}, timeout, tick).Should(Succeed())
	g.Expect(member.Annotations).To(HaveKeyWithValue(v1beta2.InitialClusterStateAnnotation, "new"))
}

func TestEtcdClusterKeepsItsFirstMemberWaitingWhenTheVolumeHoldsNoSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c := volumeRestoringCluster(t, ns, "no-file")
	member := memberPod(t, statefulSetOf(t, c), 0)
	job := awaitRestoreJob(t, c)
	missing := &backup.Error{Reason: v1beta2.ReasonSnapshotNotFound, Err: errors.New("reading etcd/no-file.db: volume backups has no such file")}
	jobstest.Finish(t, env.Client, job, string(backup.EncodeResult(backup.JobResult{Reason: missing.Reason, Message: missing.Error()})), false)
	expectRestoreRefused(t, c, v1beta2.ReasonSnapshotNotFound, "no such file")
	get(g, member)
	g.Expect(member.Spec.SchedulingGates).NotTo(BeEmpty(), "the member waits behind its gate")

	// restoreRetryAfter later, the failed Job is deleted and another tries.
	g.Eventually(func(g Gomega) {
		again := &batchv1.Job{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), again)).To(Succeed())
		g.Expect(again.UID).NotTo(Equal(job.UID))
	}, restoreRetryAfter+timeout, tick).Should(Succeed())
}
