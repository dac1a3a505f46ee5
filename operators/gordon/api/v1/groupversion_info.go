// Package v1 contains the operator.prgcont.cz/v1 API: Gordon.
// +kubebuilder:object:generate=true
// +groupName=operator.prgcont.cz
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Gordon.
	GroupVersion = schema.GroupVersion{Group: "operator.prgcont.cz", Version: "v1"}

	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Gordon{}, &GordonList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
