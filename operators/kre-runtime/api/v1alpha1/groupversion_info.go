// Package v1alpha1 contains the kre.konstellation.io/v1alpha1 API: Runtime and RuntimeVersion.
// +kubebuilder:object:generate=true
// +groupName=kre.konstellation.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Runtime and RuntimeVersion.
	GroupVersion = schema.GroupVersion{Group: "kre.konstellation.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Runtime{}, &RuntimeList{}, &RuntimeVersion{}, &RuntimeVersionList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
