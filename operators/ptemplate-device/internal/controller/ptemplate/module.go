package ptemplate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
)

// KMM's Module (kmm.sigs.x-k8s.io/v1beta1). KMM's Go module is not served here, so the
// operator writes Modules as unstructured objects, all in this file; module_test.go holds
// this shape against a Module CRD written from KMM's v1beta1 field list
// (test/kmm-module-crd.yaml), with strict field validation.
var moduleGVK = schema.GroupVersionKind{Group: "kmm.sigs.x-k8s.io", Version: "v1beta1", Kind: "Module"}

// moduleDirName is where KMM's module images keep their modules (modprobe -d); KMM's CRD
// defaults it, the operator sets it so that its Module equals what the API server stores.
const moduleDirName = "/opt"

// The node label KMM sets where a Module's kernel module is loaded:
// kmm.node.kubernetes.io/<namespace>.<module>.ready.
const moduleLabelPrefix, moduleLabelSuffix = "kmm.node.kubernetes.io/", ".ready"

// ModuleReadyLabel is the node label KMM sets where a Module's kernel module is loaded.
func ModuleReadyLabel(namespace, module string) string {
	return moduleLabelPrefix + namespace + "." + module + moduleLabelSuffix
}

// newModule is an empty Module object (for reads).
func newModule() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(moduleGVK)
	return u
}

// module is the Module KMM acts on for pt: load the kernel module with pt's parameters on
// the nodes with labels nodes, and run the device plugin beside it.
func module(pt *v1alpha.Ptemplate, nodes map[string]string) *unstructured.Unstructured {
	spec := pt.Spec
	selector := make(map[string]any, len(nodes))
	for k, v := range nodes {
		selector[k] = v
	}
	moduleSpec := map[string]any{
		"selector": selector,
		"moduleLoader": map[string]any{
			"container": map[string]any{
				"modprobe": map[string]any{
					"moduleName": spec.KernelModule.Name,
					"dirName":    moduleDirName,
					"parameters": []any{fmt.Sprintf("max_dev=%d", spec.MaxDev), "default_msg=" + spec.DefaultMsg},
				},
				"kernelMappings": []any{map[string]any{
					"regexp":         spec.KernelModule.KernelRegexp,
					"containerImage": spec.KernelModule.Image,
				}},
			},
		},
		"devicePlugin": map[string]any{
			"container": map[string]any{"image": spec.DevicePluginImage},
		},
	}
	if spec.ImageRepoSecret != nil {
		moduleSpec["imageRepoSecret"] = map[string]any{"name": spec.ImageRepoSecret.Name}
	}
	m := newModule()
	m.SetName(pt.Name)
	m.SetNamespace(pt.Namespace)
	m.SetLabels(objectLabels(pt))
	m.Object["spec"] = moduleSpec
	return m
}
