package etcdcluster

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/ensure"
)

// ensure creates desired, controller-owned by c, or brings the fields the operator manages
// up to date, each write a Normal Event on c; an object of that name c does not control is
// refused (ensure.NotOwnedError).
func (r *Reconciler) ensure(ctx context.Context, c *v1beta2.EtcdCluster, desired client.Object) error {
	return ensure.Writer{Client: r.Client, APIReader: r.APIReader, Recorder: r.Recorder, Checked: r.checked}.Ensure(ctx, c, desired)
}
