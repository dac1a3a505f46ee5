package gordon

import (
	"sync"
	"time"
)

// expectationsTTL bounds how long a pass waits for the cache to show its own writes; after
// that the controller trusts the cache again (as the ReplicaSet controller does).
const expectationsTTL = 5 * time.Minute

// expectations remembers, per Gordon, the pod creations and deletions a reconcile made that
// the informer cache has not shown yet. While any are outstanding the controller does not
// scale, so a burst of events against a stale cache cannot create pods twice.
// The model is kube-controller-manager's UIDTrackingControllerExpectations.
type expectations struct {
	mu    sync.Mutex
	byKey map[string]*expectation
	now   func() time.Time
}

type expectation struct {
	adds    int
	deletes map[string]struct{} // namespace/name of pods whose deletion is not yet observed
	setAt   time.Time
}

func newExpectations() *expectations {
	return &expectations{byKey: map[string]*expectation{}, now: time.Now}
}

// satisfied reports whether the cache has caught up with this Gordon's last writes, or the
// expectations expired.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.byKey[key]
	if !ok {
		return true
	}
	return (exp.adds <= 0 && len(exp.deletes) == 0) || e.now().Sub(exp.setAt) > expectationsTTL
}

// expect records that n pods are about to be created and these pods deleted, replacing
// what was expected before (satisfied or expired).
func (e *expectations) expect(key string, n int, deletions []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp := &expectation{adds: n, deletes: make(map[string]struct{}, len(deletions)), setAt: e.now()}
	for _, p := range deletions {
		exp.deletes[p] = struct{}{}
	}
	e.byKey[key] = exp
}

// creationObserved lowers the expected creations: the cache showed one, or a create failed.
func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.byKey[key]; ok {
		exp.adds--
	}
}

// deletionObserved clears the expected deletion of a pod: the cache showed it terminating or
// gone, or the delete failed.
func (e *expectations) deletionObserved(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.byKey[key]; ok {
		delete(exp.deletes, pod)
	}
}

// forget drops a Gordon that no longer exists.
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}
