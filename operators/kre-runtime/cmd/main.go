// Command manager runs the kre-runtime operator.
package main

import (
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/config/crd"
	"github.com/quintet-operators/quintet/operators/kre-runtime/config/prometheus"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/runtimeversion"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	var entrypoints kreruntime.EntrypointPolicy
	bindEntrypointPolicy(flag.CommandLine, &entrypoints)
	manager.ParseFlags(map[string]string{"entrypoint-hosts": "ENTRYPOINT_HOSTS", "ingress-classes": "INGRESS_CLASSES"})
	manager.Run("kre-runtime", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring},
		setup(entrypoints), kreruntime.CacheOptions)
}

// bindEntrypointPolicy registers the flags of what Runtimes' entrypoints may take.
func bindEntrypointPolicy(fs *flag.FlagSet, p *kreruntime.EntrypointPolicy) {
	fs.Func("entrypoint-hosts", "Comma-separated Ingress hosts Runtimes' entrypoints may take: a host name, or *.<domain> for any name "+
		"under domain, "+kreruntime.NamespacePlaceholder+" standing for the Runtime's namespace (e.g. *."+kreruntime.NamespacePlaceholder+
		".apps.example.com). Default any host, or $ENTRYPOINT_HOSTS. A host is the cluster's: any namespace may otherwise take another's.",
		manager.ListFlag(&p.Hosts))
	fs.Func("ingress-classes", "Comma-separated ingress classes Runtimes' entrypoints may name (default any, or $INGRESS_CLASSES); "+
		"an entrypoint naming none gets the cluster's default class.", manager.ListFlag(&p.IngressClasses))
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controllers, the Runtimes' acting within entrypoints, to a manager.
func setup(entrypoints kreruntime.EntrypointPolicy) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		c := client.WithFieldOwner(mgr.GetClient(), "kre-runtime")
		recorder := mgr.GetEventRecorder("kre-runtime-controller")
		runtimes := &kreruntime.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: recorder, Entrypoints: entrypoints}
		if err := runtimes.SetupWithManager(mgr); err != nil {
			return err
		}
		return (&runtimeversion.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: recorder}).SetupWithManager(mgr)
	}
}
