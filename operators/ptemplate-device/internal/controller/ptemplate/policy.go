package ptemplate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
)

// KMM loads a Module's kernel module from its image with a privileged worker pod on every
// node its selector matches, and runs its device plugin privileged beside it. Whoever
// writes a Ptemplate would so choose kernel code and privileged containers for the cluster's
// nodes, a right far beyond the namespace they write it in. A Policy is what the operator's
// administrator lets Ptemplates ask for (the manager's flags); anything else is refused
// before a Module is written.

// Policy is the kernel modules, device plugins and nodes Ptemplates may ask KMM for.
type Policy struct {
	// KernelModules maps each module name to the image repositories it may be loaded from.
	KernelModules map[string][]string
	// DevicePluginImages are the image repositories device plugins may come from.
	DevicePluginImages []string
	// NodeSelector is added to every Module's and consumer's node selector: modules are
	// loaded only on nodes with these labels. Empty: on any node a Ptemplate selects.
	NodeSelector map[string]string
}

// DefaultPolicy allows the example's module and device plugin, on any node.
func DefaultPolicy() Policy {
	return Policy{
		KernelModules:      map[string][]string{v1alpha.DefaultModuleName: {imageRepository(v1alpha.DefaultModuleImage)}},
		DevicePluginImages: []string{imageRepository(v1alpha.DefaultDevicePluginImage)},
	}
}

// ParseKernelModules reads a comma-separated list of <module>=<image repository> entries; a
// module may be listed with several repositories. A repository ending in /* stands for every
// repository under it.
func ParseKernelModules(list string) (map[string][]string, error) {
	modules := map[string][]string{}
	for entry := range strings.SplitSeq(list, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		name, repo, ok := strings.Cut(entry, "=")
		if !ok || name == "" || repo == "" {
			return nil, fmt.Errorf("%q is not <module>=<image repository>", entry)
		}
		modules[name] = append(modules[name], repo)
	}
	return modules, nil
}

// Refusal says why the policy refuses pt's spec, or is "" when it allows it.
func (p Policy) Refusal(pt *v1alpha.Ptemplate) string {
	spec := pt.Spec
	var refused []string
	repos, listed := p.KernelModules[spec.KernelModule.Name]
	switch {
	case !listed:
		refused = append(refused, fmt.Sprintf("kernel module %s is not one this operator loads (allowed: %s)",
			spec.KernelModule.Name, strings.Join(slices.Sorted(maps.Keys(p.KernelModules)), ", ")))
	case !repositoryAllowed(repos, spec.KernelModule.Image):
		refused = append(refused, fmt.Sprintf("kernelModule.image %s is not from a repository allowed for %s (%s)",
			spec.KernelModule.Image, spec.KernelModule.Name, strings.Join(repos, ", ")))
	}
	if !repositoryAllowed(p.DevicePluginImages, spec.DevicePluginImage) {
		refused = append(refused, fmt.Sprintf("devicePluginImage %s is not from an allowed repository (%s)",
			spec.DevicePluginImage, strings.Join(p.DevicePluginImages, ", ")))
	}
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		if v, set := spec.Selector[k]; set && string(v) != p.NodeSelector[k] {
			refused = append(refused, fmt.Sprintf("selector %s=%s selects nodes outside those modules may be loaded on (%s=%s)",
				k, v, k, p.NodeSelector[k]))
		}
	}
	if len(refused) == 0 {
		return ""
	}
	return strings.Join(refused, "; ") + ": ask the operator's administrator (--kernel-modules, --device-plugin-images, --module-node-selector)"
}

// nodeSelector is the node selector of pt's Module and consumers: its own, within the policy's.
func (p Policy) nodeSelector(pt *v1alpha.Ptemplate) map[string]string {
	selector := make(map[string]string, len(pt.Spec.Selector)+len(p.NodeSelector))
	for k, v := range pt.Spec.Selector {
		selector[k] = string(v)
	}
	maps.Copy(selector, p.NodeSelector)
	return selector
}

// repositoryAllowed says whether image (with its tag or digest) is from one of repos.
func repositoryAllowed(repos []string, image string) bool {
	repo := imageRepository(image)
	return slices.ContainsFunc(repos, func(allowed string) bool {
		if under, ok := strings.CutSuffix(allowed, "/*"); ok {
			return strings.HasPrefix(repo, under+"/")
		}
		return repo == allowed
	})
}

// imageRepository is image without its digest or tag.
func imageRepository(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}
