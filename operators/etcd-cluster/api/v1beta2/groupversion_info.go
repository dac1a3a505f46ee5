// Package v1beta2 contains the etcd.database.coreos.com/v1beta2 API: EtcdCluster, as the
// CoreOS etcd operator defined it.
// +kubebuilder:object:generate=true
// +groupName=etcd.database.coreos.com
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of EtcdCluster.
	GroupVersion = schema.GroupVersion{Group: "etcd.database.coreos.com", Version: "v1beta2"}

	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &EtcdCluster{}, &EtcdClusterList{}, &EtcdBackup{}, &EtcdBackupList{},
		&EtcdRestore{}, &EtcdRestoreList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
