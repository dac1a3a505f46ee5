package manager

import (
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// serverService is the i-th Service as kre-runtime makes them and the API server returns
// them: six per Runtime (a client and a headless one per server), each Runtime in its own
// namespace.
func serverService(i int) *corev1.Service {
	r, component := i/6, []string{"mongo", "nats", "minio"}[i%6/2]
	name, owner := "kre-"+component, fmt.Sprintf("bench-%d", r%10)
	if i%2 == 1 {
		name += "-headless"
	}
	labels := map[string]string{"kre.konstellation.io/runtime": owner, "kre.konstellation.io/component": component,
		"app.kubernetes.io/name": "kre-" + component, "app.kubernetes.io/instance": owner, "app.kubernetes.io/part-of": "kre-runtime",
		"app.kubernetes.io/managed-by": "quintet-kre-runtime"}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fmt.Sprintf("bench-kre-runtime-%d", r), Labels: labels,
			UID: types.UID(fmt.Sprintf("0b5a4c6e-8d0f-4a8e-9d5e-%012d", i)), ResourceVersion: fmt.Sprint(100000 + i),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kre.konstellation.io/v1alpha1", Kind: "Runtime", Name: owner,
				UID: types.UID(fmt.Sprintf("1b5a4c6e-8d0f-4a8e-9d5e-%012d", r)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.ServiceSpec{Selector: labels, Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone,
			ClusterIP: fmt.Sprintf("10.96.%d.%d", i/250, i%250), ClusterIPs: []string{fmt.Sprintf("10.96.%d.%d", i/250, i%250)},
			Ports: []corev1.ServicePort{{Name: "client", Port: 4222, TargetPort: intstr.FromString("client"), Protocol: corev1.ProtocolTCP}}},
	}
}

// decoded is svc as an informer holds it: decoded from the API server's protobuf, each
// string its own copy.
func decoded(t testing.TB, svc *corev1.Service) *corev1.Service {
	data, err := svc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Service{}
	if err := out.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameString says whether a and b are one copy in memory.
func sameString(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b) //nolint:gosec // compares addresses, reads nothing
}

// sameMap says whether a and b are one map in memory.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// keyOf is m's key equal to key: the string the map holds.
func keyOf(m map[string]string, key string) string {
	for k := range m {
		if k == key {
			return k
		}
	}
	return ""
}

func TestTheCacheSharesTheStringsObjectsRepeatAndChangesNoValue(t *testing.T) {
	transform := Options("test", Flags{}, nil).Cache.DefaultTransform
	a, b := decoded(t, serverService(0)), decoded(t, serverService(60)) // kre-mongo of bench-0, in two namespaces
	want := []*corev1.Service{a.DeepCopy(), b.DeepCopy()}
	for i, svc := range []*corev1.Service{a, b} {
		if _, err := transform(svc); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(svc, want[i]) {
			t.Fatalf("the transform changed a value: %+v, want %+v", svc, want[i])
		}
	}
	const partOf = "app.kubernetes.io/part-of"
	shared := map[string][2]string{
		"a label's value":             {a.Labels[partOf], b.Labels[partOf]},
		"a label's key":               {keyOf(a.Labels, partOf), keyOf(b.Labels, partOf)},
		"the selector's value":        {a.Labels[partOf], a.Spec.Selector[partOf]},
		"the owner's API version":     {a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		"the owner's name":            {a.OwnerReferences[0].Name, a.Labels["kre.konstellation.io/runtime"]},
		"a port's name":               {a.Spec.Ports[0].Name, b.Spec.Ports[0].TargetPort.StrVal},
		"a value of a string type":    {string(a.Spec.Type), string(b.Spec.Type)},
		"the name, in two namespaces": {a.Name, b.Name},
	}
	for what, s := range shared {
		if !sameString(s[0], s[1]) {
			t.Errorf("%s: %q held twice", what, s[0])
		}
	}
	sharedMaps := map[string][2]map[string]string{
		"the labels, in two namespaces": {a.Labels, b.Labels},
		"the labels and their selector": {a.Labels, a.Spec.Selector},
	}
	for what, m := range sharedMaps {
		if !sameMap(m[0], m[1]) {
			t.Errorf("%s: %v held twice", what, m[0])
		}
	}

	// What only the object has is not pooled.
	pool := newStringPool(stringPoolGeneration, mapPoolGeneration)
	c := decoded(t, serverService(2))
	pool.internStrings(c)
	for _, own := range []string{string(c.UID), c.ResourceVersion} {
		if _, pooled := pool.strings.current[own]; pooled {
			t.Errorf("%q, the object's own, pooled", own)
		}
	}
}

func TestTheCacheSharesTheStringsOfUnstructuredObjects(t *testing.T) {
	transform := Options("test", Flags{}, nil).Cache.DefaultTransform
	module := func() *unstructured.Unstructured {
		// Each copy built anew: its strings are its own, as decoded from JSON.
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": string([]byte("kmm.sigs.x-k8s.io/v1beta1")), "kind": string([]byte("Module")),
			"metadata": map[string]any{"labels": map[string]any{"app": string([]byte("ptemplate"))}},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": string([]byte("Ready")), "count": int64(3)}}},
		}}
	}
	a, b := module(), module()
	for _, m := range []*unstructured.Unstructured{a, b} {
		if _, err := transform(m); err != nil {
			t.Fatal(err)
		}
	}
	if !equality.Semantic.DeepEqual(a.Object, module().Object) {
		t.Fatalf("the transform changed a value: %v", a.Object)
	}
	condition := func(u *unstructured.Unstructured) string {
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return conditions[0].(map[string]any)["type"].(string)
	}
	if !sameString(a.GetAPIVersion(), b.GetAPIVersion()) || !sameString(a.GetLabels()["app"], b.GetLabels()["app"]) ||
		!sameString(condition(a), condition(b)) {
		t.Error("two unstructured objects hold their own copies of the same strings")
	}
}

func TestTheStringPoolForgetsWhatItIsNotGivenAgain(t *testing.T) {
	pool := newStringPool(2, 2)
	first := pool.intern(string([]byte("kept")))
	pool.intern("gone")
	pool.intern("a") // a new generation: kept and gone are in the previous one
	if again := pool.intern(string([]byte("kept"))); !sameString(again, first) {
		t.Error("a string of the previous generation given again got a new copy")
	}
	for _, s := range []string{"b", "c", "d"} { // two more generations
		pool.intern(s)
	}
	if _, ok := pool.strings.current["gone"]; ok {
		t.Error(`"gone" kept in the current generation`)
	}
	if _, ok := pool.strings.previous["gone"]; ok {
		t.Error(`"gone" kept in the previous generation`)
	}
	if n := len(pool.strings.current) + len(pool.strings.previous); n > 4 {
		t.Errorf("%d strings pooled, generations of 2", n)
	}
}

func TestTheStringPoolSharesAMapOnlyWithAnEqualOne(t *testing.T) {
	pool := newStringPool(stringPoolGeneration, mapPoolGeneration)
	first := pool.shareMap(map[string]string{"app": "kre", "component": "nats"})
	if again := pool.shareMap(map[string]string{"component": "nats", "app": "kre"}); !sameMap(again, first) {
		t.Error("an equal map, made in another order, is held twice")
	}
	for _, other := range []map[string]string{{"app": "kre"}, {"app": "kre", "component": "mongo"}, {"app": "kre", "component": "nats", "x": ""}} {
		if got := pool.shareMap(other); sameMap(got, first) || !maps.Equal(got, other) {
			t.Errorf("%v given for %v", got, other)
		}
	}
	if got := pool.shareMap(map[string]string{}); len(got) != 0 {
		t.Errorf("%v given for an empty map", got)
	}
}

func TestTheStringPoolForgetsTheMapsItIsNotGivenAgain(t *testing.T) {
	pool := newStringPool(2, 2)
	kept := pool.shareMap(map[string]string{"kept": "1"})
	pool.shareMap(map[string]string{"gone": "1"})
	pool.shareMap(map[string]string{"a": "1"}) // a new generation
	if again := pool.shareMap(map[string]string{"kept": "1"}); !sameMap(again, kept) {
		t.Error("a map of the previous generation given again was not shared")
	}
	for _, k := range []string{"b", "c", "d"} { // two more generations
		pool.shareMap(map[string]string{k: "1"})
	}
	for _, generation := range []map[uint64][]map[string]string{pool.maps.current, pool.maps.previous} {
		for _, ms := range generation {
			for _, m := range ms {
				if _, ok := m["gone"]; ok {
					t.Error(`{"gone": "1"} still pooled`)
				}
			}
		}
	}
}

// BenchmarkCacheHeapPerService is the heap 12,000 Services as kre-runtime makes them take in
// a manager's cache, in bytes per Service, with managedFields dropped as before and with
// their strings and maps of strings shared too; and the ratio.
func BenchmarkCacheHeapPerService(b *testing.B) {
	const n = 12000 // the Services of 2000 Runtimes
	perService := map[string]float64{}
	for b.Loop() {
		// A fresh pool each time: one that kept the strings of a round before would not count them.
		transforms := map[string]func(any) (any, error){
			"own copies":     func(obj any) (any, error) { return obj, nil },
			"shared strings": Options("test", Flags{}, nil).Cache.DefaultTransform,
		}
		for name, transform := range transforms {
			services := make([]*corev1.Service, n)
			before := heapInUse()
			for i := range services {
				services[i] = decoded(b, serverService(i))
				if _, err := transform(services[i]); err != nil {
					b.Fatal(err)
				}
			}
			perService[name] = float64(heapInUse()-before) / n
			runtime.KeepAlive(services)
		}
	}
	b.ReportMetric(perService["own copies"], "B/service-own-copies")
	b.ReportMetric(perService["shared strings"], "B/service-shared")
	b.ReportMetric(perService["own copies"]/perService["shared strings"], "ratio")
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
