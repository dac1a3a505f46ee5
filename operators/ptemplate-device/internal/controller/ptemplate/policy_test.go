package ptemplate

import (
	"testing"

	. "github.com/onsi/gomega"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
)

func TestThePolicyAllowsListedModulesAndPluginsOnlyOnItsNodes(t *testing.T) {
	policy := testPolicy()
	policy.NodeSelector = map[string]string{"kmm": "allowed"}
	allowed := func() *v1alpha.Ptemplate {
		return &v1alpha.Ptemplate{Spec: v1alpha.PtemplateSpec{
			Selector:          map[string]v1alpha.LabelValue{"pool": "gpu"},
			DevicePluginImage: v1alpha.DefaultDevicePluginImage,
			KernelModule:      v1alpha.KernelModule{Name: v1alpha.DefaultModuleName, Image: v1alpha.DefaultModuleImage},
		}}
	}
	for _, tt := range []struct {
		name    string
		change  func(*v1alpha.Ptemplate)
		refusal string // "" when allowed
	}{
		{"the example's module and plugin", func(*v1alpha.Ptemplate) {}, ""},
		{"the example's module by digest", func(pt *v1alpha.Ptemplate) {
			pt.Spec.KernelModule.Image = "quay.io/chrisp262/pt-char-dev@sha256:" + sha256Zeros
		}, ""},
		{"a listed module from a repository under a listed path", func(pt *v1alpha.Ptemplate) {
			pt.Spec.KernelModule = v1alpha.KernelModule{Name: "gpu", Image: "registry.example.com/kmods/nvidia:${KERNEL_FULL_VERSION}"}
		}, ""},
		{"the selector repeating the policy's label", func(pt *v1alpha.Ptemplate) { pt.Spec.Selector["kmm"] = "allowed" }, ""},
		{"a module nobody listed", func(pt *v1alpha.Ptemplate) { pt.Spec.KernelModule.Name = "rootkit" },
			"kernel module rootkit is not one this operator loads (allowed: gpu, ptemplate_char_dev)"},
		{"a listed module from another repository", func(pt *v1alpha.Ptemplate) {
			pt.Spec.KernelModule.Image = "quay.io/attacker/pt-char-dev:${KERNEL_FULL_VERSION}"
		}, "kernelModule.image quay.io/attacker/pt-char-dev:${KERNEL_FULL_VERSION} is not from a repository allowed for ptemplate_char_dev (quay.io/chrisp262/pt-char-dev)"},
		{"a repository named like a listed one", func(pt *v1alpha.Ptemplate) {
			pt.Spec.KernelModule = v1alpha.KernelModule{Name: "gpu", Image: "registry.example.com/kmods-evil/nvidia:1"}
		}, "is not from a repository allowed for gpu (registry.example.com/kmods/*)"},
		{"a listed repository's path as a tag", func(pt *v1alpha.Ptemplate) {
			pt.Spec.KernelModule = v1alpha.KernelModule{Name: "gpu", Image: "registry.example.com/kmods:nvidia"}
		}, "is not from a repository allowed for gpu"},
		{"a device plugin from elsewhere", func(pt *v1alpha.Ptemplate) { pt.Spec.DevicePluginImage = "docker.io/attacker/plugin:1" },
			"devicePluginImage docker.io/attacker/plugin:1 is not from an allowed repository (quay.io/chrisp262/pt-device-plugin)"},
		{"nodes outside the policy's", func(pt *v1alpha.Ptemplate) { pt.Spec.Selector["kmm"] = "denied" },
			"selector kmm=denied selects nodes outside those modules may be loaded on (kmm=allowed)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			pt := allowed()
			tt.change(pt)
			refusal := policy.Refusal(pt)
			if tt.refusal == "" {
				g.Expect(refusal).To(BeEmpty())
				g.Expect(policy.nodeSelector(pt)).To(HaveKeyWithValue("kmm", "allowed"), "modules are loaded only on the policy's nodes")
				return
			}
			g.Expect(refusal).To(ContainSubstring(tt.refusal))
			g.Expect(refusal).To(HaveSuffix("ask the operator's administrator (--kernel-modules, --device-plugin-images, --module-node-selector)"))
		})
	}
}

func TestImageRepositoryDropsTagAndDigestButNotARegistryPort(t *testing.T) {
	g := NewWithT(t)
	for image, repo := range map[string]string{
		"quay.io/a/b:1":                             "quay.io/a/b",
		"quay.io/a/b@sha256:" + sha256Zeros:         "quay.io/a/b",
		"quay.io/a/b:1@sha256:" + sha256Zeros:       "quay.io/a/b",
		"localhost:5000/a/b":                        "localhost:5000/a/b",
		"localhost:5000/a/b:${KERNEL_FULL_VERSION}": "localhost:5000/a/b",
	} {
		g.Expect(imageRepository(image)).To(Equal(repo), image)
	}
}

const sha256Zeros = "0000000000000000000000000000000000000000000000000000000000000000"
