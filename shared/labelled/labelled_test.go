package labelled

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestExistsSelectsAnyValueOfTheKeyOnly(t *testing.T) {
	s := Exists("example.com/owner")
	if !s.Matches(labels.Set{"example.com/owner": ""}) || !s.Matches(labels.Set{"example.com/owner": "a"}) || s.Matches(labels.Set{"other": "a"}) {
		t.Fatalf("selector %s", s)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid key must panic")
		}
	}()
	Exists("not a key!")
}

func TestCacheOnlyAddsToTheCacheOptions(t *testing.T) {
	var o ctrl.Options
	CacheOnly(Exists("a"), &corev1.Pod{})(&o)
	CacheOnly(labels.SelectorFromSet(labels.Set{"b": "c"}), &corev1.Secret{}, &corev1.Service{})(&o)
	if len(o.Cache.ByObject) != 3 {
		t.Fatalf("by object: %v", o.Cache.ByObject)
	}
	for obj, by := range o.Cache.ByObject {
		want := "b=c"
		if _, pod := obj.(*corev1.Pod); pod {
			want = "a"
		}
		if by.Label.String() != want {
			t.Errorf("%T selects %s, want %s", obj, by.Label, want)
		}
	}
}

func TestToOwnerMapsTheLabelToTheOwnerInTheObjectsNamespace(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := ToOwner("example.com/owner")
	h.Create(context.Background(), event.CreateEvent{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "p", Namespace: "ns", Labels: map[string]string{"example.com/owner": "db"}}}}, q)
	h.Create(context.Background(), event.CreateEvent{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", Namespace: "ns"}}}, q)
	if q.Len() != 1 {
		t.Fatalf("queued %d requests, want 1", q.Len())
	}
	if req, _ := q.Get(); req.Namespace != "ns" || req.Name != "db" {
		t.Fatalf("request %v", req)
	}
}
