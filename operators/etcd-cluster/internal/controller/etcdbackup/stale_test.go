package etcdbackup

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// staleCache is a manager's client whose cache has not yet seen the newest version of one
// EtcdBackup: it reads stale for it, and its status writes go nowhere.
type staleCache struct {
	client.Client
	stale *v1beta2.EtcdBackup
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if b, ok := obj.(*v1beta2.EtcdBackup); ok && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(b)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c staleCache) Status() client.SubResourceWriter { return discardStatus{} }

type discardStatus struct{ client.SubResourceWriter }

func (discardStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return nil
}

// A pass that reads its EtcdBackup from a cache that has not yet seen the status of the backup
// just taken (it still says BackingUp) takes no second backup.
func TestAPassOnAStaleReadTakesNoSecondBackup(t *testing.T) {
	t.Parallel()
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "stale-read")
	b := newBackup(t, ns, bucket+"/"+ns+"/etcd.db", awsSecret(t, ns, ""), nil)
	stale := b.DeepCopy() // as created: its resourceVersion is older than the API server's now
	g.Eventually(func(g gomega.Gomega) {
		c := condition(g, b, conditions.ReadyCondition)
		g.Expect(c.Reason).To(gomega.Equal(v1beta2.ReasonBackupSucceeded), c.Message)
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	g.Expect(events.Emitted(b, v1beta2.ReasonBackupSucceeded)).To(gomega.Equal(1))

	setBackingUp(stale)
	r := &Reconciler{Client: staleCache{Client: env.Client, stale: stale}, APIReader: env.Client, Recorder: events}
	_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(events.Emitted(b, v1beta2.ReasonBackupSucceeded)).To(gomega.Equal(1), "a second backup was taken")
	g.Expect(condition(g, b, conditions.ReadyCondition).Reason).To(gomega.Equal(v1beta2.ReasonBackupSucceeded))
}
