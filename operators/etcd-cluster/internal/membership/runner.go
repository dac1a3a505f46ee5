package membership

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Runner runs the workloads of members, ordinals 0..n-1: a StatefulSet in a cluster,
// processes in tests. A workload never starts on its own: it waits until Release says how
// it joins, so a member never starts with empty data under an ID etcd still lists.
type Runner interface {
	// Workloads describes the workloads, ordinals 0..n-1, and past them every ordinal whose
	// volume is still there (Exists false): a deleted StatefulSet leaves its volumes.
	Workloads(ctx context.Context) ([]Workload, error)
	// Scale makes n workloads exist. New ones wait for Release; the ones removed go with
	// their volumes.
	Scale(ctx context.Context, n int) error
	// Release lets a waiting workload start. On empty data it joins initialCluster
	// ("name=peerURL,...") with state "new" or "existing"; on existing data etcd ignores both.
	Release(ctx context.Context, ordinal int, initialCluster, state string) error
	// Wipe deletes the workload's volume and restarts it: it comes back waiting, empty. Only
	// the workload of a member etcd no longer lists is wiped, so a stranded one is deleted
	// without waiting for its node: the member it ran can no longer rejoin.
	Wipe(ctx context.Context, ordinal int) error
	// Restart restarts the workload onto the current spec: it comes back waiting, with its volume.
	Restart(ctx context.Context, ordinal int) error
	// RecordData notes that the workload's volume holds the data of member id.
	RecordData(ctx context.Context, ordinal int, id uint64) error
}

// Workload is what the runner knows of one member's workload.
type Workload struct {
	Ordinal int
	// Exists: the runner runs this ordinal (below the StatefulSet's replicas). False for a
	// volume left without its workload.
	Exists bool
	// Waiting: the workload waits for Release (a pod behind its scheduling gate).
	Waiting bool
	// DataOf is the ID of the member whose data the volume holds; 0 for a new volume, or one
	// never seen serving.
	DataOf uint64
	// VolumeGone: the volume is deleted or being deleted.
	VolumeGone bool
	// EarlierVolume: the volume is an earlier cluster's of the same name, deleted or not yet:
	// its owner is gone, and the garbage collector deletes it once no pod uses it. Its data
	// is no member's of this cluster (DataOf is 0), and nothing may start on it.
	EarlierVolume bool
	// Outdated: the workload runs an earlier spec (image, flags, resources) than the current one.
	Outdated bool
	// Unready: the workload runs but does not pass its readiness probe yet (or is being
	// stopped). A rolling restart waits for it, as a StatefulSet's rolling update does;
	// whether a member is lost is told by etcd, never by this.
	Unready bool
	// Failure says why the workload cannot run for a reason of its spec (an image that cannot
	// be pulled, a crash at start); such a member is never replaced: its data is fine.
	Failure string
	// Stranded: the workload is being stopped, and long past its grace period nothing has
	// confirmed it stopped: it was on a node that is down or cut off (a pod whose kubelet
	// does not answer). Its replacement waits until it is gone.
	Stranded bool
}

// Outages remembers since when each member has been unreachable, across passes; a member
// is replaced only after it has been for the cluster's replacement delay. A restarted
// manager starts counting again: the safe direction.
type Outages struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// Down records that the member key is unreachable at now and returns for how long it has been.
func (o *Outages) Down(key string, now time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since == nil {
		o.since = map[string]time.Time{}
	}
	since, ok := o.since[key]
	if !ok {
		o.since[key] = now
		return 0
	}
	return now.Sub(since)
}

// Up forgets the outage of the member key.
func (o *Outages) Up(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.since, key)
}

// Forget forgets the outages of every member under key, the key of a cluster gone.
func (o *Outages) Forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.since {
		if strings.HasPrefix(k, key+"/") {
			delete(o.since, k)
		}
	}
}
