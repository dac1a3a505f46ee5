// Package v1alpha contains the ptemplates.pt.example.com/v1alpha API: Ptemplate, the group
// and version the ptemplate-operator example's sample uses. "v1alpha" is not a Kubernetes
// version name (v1alpha1 is): it is kept because that sample, which must keep working
// unchanged, says `apiVersion: ptemplates.pt.example.com/v1alpha`.
// +kubebuilder:object:generate=true
// +groupName=ptemplates.pt.example.com
package v1alpha

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Ptemplate.
	GroupVersion = schema.GroupVersion{Group: "ptemplates.pt.example.com", Version: "v1alpha"}

	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Ptemplate{}, &PtemplateList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
