package ensure

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metadataOnlyClient refuses to read a Service whole from the cache: the manager would start
// an informer holding every Service whole beside the one holding their metadata.
type metadataOnlyClient struct{ client.Client }

func (c metadataOnlyClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, whole := obj.(*corev1.Service); whole {
		return fmt.Errorf("read Service %s whole from the cache", key)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A manager whose cache holds Services as metadata alone: Ensure neither reads nor writes a
// Service it found or left as wanted; reads it whole and puts back what the operator manages
// when anyone wrote it since, or when the operator wants something else; and, with nothing
// remembered (a restart), reads each Service whole once.
func TestEnsureComparesAServiceWholeOnlyWhenItChangedSinceItWasFoundAsWanted(t *testing.T) {
	f := newWriteFixture(t, func(*ctrl.Options) {}, func() *corev1.Service { return &corev1.Service{} },
		func() client.Object { return metadataOf(corev1.SchemeGroupVersion.WithKind("Service")) })
	checked := NewCheckedVersions(&corev1.Service{})
	f.w.Client, f.w.Checked = metadataOnlyClient{f.mgr.Writes}, checked
	ctx, owner, ns := f.ctx, f.owner, f.key.Namespace
	service := func(port int32) *corev1.Service { return serviceOn(ns, "w", port) }
	port := func() int32 { return f.server().Spec.Ports[0].Port }

	if err := f.w.Ensure(ctx, owner, service(80)); err != nil {
		t.Fatal(err)
	}
	if reads, writes := f.ensure(service(80)); reads != 0 || writes != 0 {
		t.Errorf("as created: %d reads past the cache and %d writes, want none", reads, writes)
	}

	f.byHand(func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 })
	if reads, writes := f.ensure(service(80)); reads != 1 || writes != 1 || port() != 80 {
		t.Errorf("after a change by hand of a managed field: %d reads and %d writes, port %d; want 1, 1 and 80", reads, writes, port())
	}
	if reads, writes := f.ensure(service(80)); reads != 0 || writes != 0 {
		t.Errorf("after the operator's update: %d reads and %d writes, want none", reads, writes)
	}

	f.byHand(func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP })
	if reads, writes := f.ensure(service(80)); reads != 1 || writes != 0 {
		t.Errorf("after a change by hand of what the operator does not manage: %d reads and %d writes, want 1 and 0", reads, writes)
	}
	if reads, writes := f.ensure(service(80)); reads != 0 || writes != 0 {
		t.Errorf("once found as wanted: %d reads and %d writes, want none", reads, writes)
	}
	if affinity := f.server().Spec.SessionAffinity; affinity != corev1.ServiceAffinityClientIP {
		t.Errorf("session affinity %s: the change by hand of an unmanaged field is kept", affinity)
	}

	if reads, writes := f.ensure(service(8080)); reads != 1 || writes != 1 || port() != 8080 {
		t.Errorf("a new spec: %d reads and %d writes, port %d; want 1, 1 and 8080", reads, writes, port())
	}

	restarted := NewCheckedVersions(&corev1.Service{})
	f.w.Checked = restarted
	if reads, writes := f.ensure(service(8080)); reads != 1 || writes != 0 {
		t.Errorf("after a restart: %d reads and %d writes, want 1 and 0", reads, writes)
	}
	if reads, writes := f.ensure(service(8080)); reads != 0 || writes != 0 {
		t.Errorf("after a restart, once read: %d reads and %d writes, want none", reads, writes)
	}
}

// CheckedVersions forgets an object not asked about within two generations, and keeps one
// asked about in each.
func TestCheckedVersionsForgetsWhatItIsNoLongerAskedAbout(t *testing.T) {
	c := NewCheckedVersions(&corev1.Service{})
	object := func(i int) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{UID: types.UID(fmt.Sprint("uid-", i)), ResourceVersion: fmt.Sprint(i)}
	}
	var hash wantedSum
	kept, forgotten := object(-1), object(-2)
	c.record(kept, hash)
	c.record(forgotten, hash)
	for generation := range 3 {
		for i := range minCheckedGeneration {
			c.record(object(generation*minCheckedGeneration+i), hash)
		}
		if !c.asChecked(kept, hash) {
			t.Fatalf("generation %d: forgot an object asked about in each", generation)
		}
	}
	if c.asChecked(forgotten, hash) {
		t.Error("remembers an object not asked about for three generations")
	}
	if remembered := len(c.current) + len(c.previous); remembered > 2*minCheckedGeneration {
		t.Errorf("remembers %d objects, want at most two generations of %d", remembered, minCheckedGeneration)
	}
	changed := object(-1)
	changed.ResourceVersion = "later"
	if c.asChecked(changed, hash) {
		t.Error("an object written since it was found as wanted counts as checked")
	}
	if c.asChecked(kept, wantedSum{1}) {
		t.Error("an object found as the operator wanted something else counts as checked")
	}
}
