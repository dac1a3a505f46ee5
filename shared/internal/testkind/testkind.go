// Package testkind is a custom resource of shared/'s own tests, Widget (test.quintet.dev/v1):
// its CRD for the API servers they start, and its Go type, whose status carries conditions.
package testkind

import (
	"embed"
	"io/fs"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:embed crd/*.yaml
var crdFiles embed.FS

// CRDs holds the Widget CRD, as an operator's config/crd package embeds its bases.
var CRDs = func() fs.FS {
	sub, err := fs.Sub(crdFiles, "crd")
	if err != nil {
		panic(err)
	}
	return sub
}()

// CRDDir is the folder of the CRD, relative to a test package under shared/ one level down
// (shared/<package>).
const CRDDir = "../internal/testkind/crd"

// GroupVersion is the Widget's API group and version.
var GroupVersion = schema.GroupVersion{Group: "test.quintet.dev", Version: "v1"}

// Widget is a test object with conditions in its status.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what a Widget asks for.
type WidgetSpec struct {
	Widget struct {
		Replicas int32 `json:"replicas,omitempty"`
	} `json:"widget,omitzero"`
}

// WidgetStatus is what a test reports of a Widget.
type WidgetStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// DeepCopyObject copies w.
func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = nil
	for _, c := range w.Status.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, *c.DeepCopy())
	}
	return &out
}

// DeepCopyObject copies l.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Widget))
	}
	return out
}

// AddToScheme registers Widget and WidgetList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
