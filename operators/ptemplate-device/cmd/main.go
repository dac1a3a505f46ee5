// Command manager runs the ptemplate-device operator.
package main

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/config/crd"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/config/prometheus"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/internal/controller/ptemplate"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	policy := ptemplate.DefaultPolicy()
	bindPolicy(flag.CommandLine, &policy)
	manager.ParseFlags(map[string]string{
		"kernel-modules": "KERNEL_MODULES", "device-plugin-images": "DEVICE_PLUGIN_IMAGES", "module-node-selector": "MODULE_NODE_SELECTOR",
	})
	manager.Run("ptemplate-device", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring},
		setup(policy), ptemplate.CacheOptions)
}

// bindPolicy registers the flags of what Ptemplates may ask KMM for.
func bindPolicy(fs *flag.FlagSet, p *ptemplate.Policy) {
	fs.Func("kernel-modules", fmt.Sprintf("Comma-separated <module>=<image repository> entries: the kernel modules Ptemplates may load "+
		"and the repositories each may come from, a trailing /* standing for every repository under it "+
		"(default %s=%s, or $KERNEL_MODULES). KMM loads them into the kernel of every node a Ptemplate selects.",
		v1alpha.DefaultModuleName, p.KernelModules[v1alpha.DefaultModuleName][0]),
		func(v string) (err error) {
			p.KernelModules, err = ptemplate.ParseKernelModules(v)
			return err
		})
	fs.Func("device-plugin-images", fmt.Sprintf("Comma-separated image repositories Ptemplates' device plugins may come from, "+
		"a trailing /* standing for every repository under it (default %s, or $DEVICE_PLUGIN_IMAGES). KMM runs them privileged.",
		strings.Join(p.DevicePluginImages, ",")),
		manager.ListFlag(&p.DevicePluginImages))
	fs.Func("module-node-selector", "Comma-separated <label>=<value> pairs added to every Module's node selector: kernel modules are "+
		"loaded only on nodes with these labels, and a Ptemplate selecting other values is refused (default none, or $MODULE_NODE_SELECTOR).",
		func(v string) (err error) {
			p.NodeSelector, err = labels.ConvertSelectorToLabelsMap(v)
			return err
		})
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controller, acting within policy, to a manager.
func setup(policy ptemplate.Policy) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		return (&ptemplate.Reconciler{
			Client:    client.WithFieldOwner(mgr.GetClient(), "ptemplate-device"),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder("ptemplate-device-controller"),
			Policy:    policy,
		}).SetupWithManager(mgr)
	}
}
