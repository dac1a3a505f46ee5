// Package v1alpha1 contains the charts.samutup.com/v1alpha1 API: Minimart, a release of the
// minimart Helm chart.
// +kubebuilder:object:generate=true
// +groupName=charts.samutup.com
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Minimart.
	GroupVersion = schema.GroupVersion{Group: "charts.samutup.com", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Minimart{}, &MinimartList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
