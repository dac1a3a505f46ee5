package gordon

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

// staleList serves pod lists from a cache that has not seen the last pass's creation, and
// delivers that creation's event just after the list was taken: the window between
// listing and checking expectations the ReplicaSet controller closes by checking first.
type staleList struct {
	client.Client
	hidden  string // the pod the list does not show yet
	arrived func() // the informer's event for it
}

func (s *staleList) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := s.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if pods, ok := list.(*corev1.PodList); ok {
		shown := pods.Items[:0]
		for _, p := range pods.Items {
			if p.Name != s.hidden {
				shown = append(shown, p)
			}
		}
		pods.Items = shown
		s.arrived()
	}
	return nil
}

func TestGordonChecksExpectationsBeforeListingPods(t *testing.T) {
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "race", Namespace: "ns", UID: "gordon-uid"}}
	g.Spec.Gordon.Replicas = ptr.To[int32](2)
	pod := func(name string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{v1.GordonLabel: g.Name}}}
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(g, v1.GroupVersion.WithKind("Gordon"))}
		p.Status.Phase = corev1.PodRunning
		return p
	}
	// The last pass created "b"; the API server has both pods, the cache only "a".
	api := fake.NewClientBuilder().WithScheme(env.Scheme).WithObjects(g, pod("a"), pod("b")).WithStatusSubresource(g).Build()
	r := &Reconciler{Recorder: events, expectations: newExpectations()}
	r.expectations.expect(keyOf(g), 1, nil)
	r.Client = &staleList{Client: api, hidden: "b", arrived: func() { r.expectations.creationObserved(keyOf(g)) }}

	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)}); err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := api.List(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		t.Fatalf("%d pods for 2 replicas: a pass that listed before its expectations were met counted a stale list", len(pods.Items))
	}
}
