package optionalkind

import (
	"context"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainEnv(m, testenv.Options{
		CRDDirectoryPaths: []string{testkind.CRDDir}, AddToScheme: []func(*runtime.Scheme) error{testkind.AddToScheme, apiextensionsv1.AddToScheme},
	}, func(e *testenv.Env) { env = e }))
}

// gadgetGVK is a kind the API server does not serve until the test installs its CRD.
var gadgetGVK = schema.GroupVersionKind{Group: "optional.quintet.dev", Version: "v1", Kind: "Gadget"}

func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.optional.quintet.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gadgetGVK.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

func TestOwnedWatchStartsOnceTheKindIsServedAndMapsObjectsToTheirOwner(t *testing.T) {
	ctx := t.Context()
	mgr, err := env.NewManager(testenv.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	requests := make(chan reconcile.Request, 100)
	c, err := ctrl.NewControllerManagedBy(mgr).For(&testkind.Widget{}).Named("optionalkind").
		Build(reconcile.Func(func(_ context.Context, r reconcile.Request) (reconcile.Result, error) {
			requests <- r
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	w := Owned(mgr, c, gadgetGVK, &testkind.Widget{})
	mgr.RunForTest(t)

	if served, err := w.Served(); err != nil || served {
		t.Fatalf("before the CRD: served %v, err %v", served, err)
	}
	if err := env.Client.Create(ctx, gadgetCRD()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Client.Delete(context.Background(), gadgetCRD()) }()
	eventually(t, "the kind is served", func() bool { served, err := w.Served(); return err == nil && served })

	ns := env.NewNamespace(t, "optionalkind")
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	drain(requests)
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	gadget.SetName("g")
	gadget.SetNamespace(ns)
	if err := controllerutil.SetControllerReference(owner, gadget, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, gadget); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-requests:
		if r.NamespacedName != client.ObjectKeyFromObject(owner) {
			t.Fatalf("a Gadget woke %v, want its owner %v", r.NamespacedName, client.ObjectKeyFromObject(owner))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a Gadget made after the watch started did not wake its owner")
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting until " + what)
		}
	}
}

// drain empties ch of the requests made so far, after they settle.
func drain(ch chan reconcile.Request) {
	for {
		select {
		case <-ch:
		case <-time.After(time.Second):
			return
		}
	}
}

// countingMapper finds no kind, and counts how often it is asked.
type countingMapper struct {
	meta.RESTMapper
	asked int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, _ ...string) (*meta.RESTMapping, error) {
	m.asked++
	return nil, &meta.NoKindMatchError{GroupKind: gk}
}

func TestServedAsksAgainOnlyAfterRecheck(t *testing.T) {
	mapper := &countingMapper{}
	w := &Watch{mapper: mapper, gvk: gadgetGVK, Recheck: 200 * time.Millisecond, start: func() error { return nil }}
	for range 100 { // a hundred objects' passes
		if served, err := w.Served(); err != nil || served {
			t.Fatalf("served %v, err %v", served, err)
		}
	}
	if mapper.asked != 1 {
		t.Errorf("asked the API server %d times in the recheck interval, want once", mapper.asked)
	}
	time.Sleep(250 * time.Millisecond)
	_, _ = w.Served()
	if mapper.asked != 2 {
		t.Errorf("asked %d times after the interval, want twice", mapper.asked)
	}
}
