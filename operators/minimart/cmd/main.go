// Command manager runs the minimart operator: each Minimart is a release of the minimart
// Helm chart, which watches.yaml names and the binary embeds.
package main

import (
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart"
	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/minimart/config/crd"
	"github.com/quintet-operators/quintet/operators/minimart/config/prometheus"
	minimartctrl "github.com/quintet-operators/quintet/operators/minimart/internal/controller/minimart"
	"github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	maxHistory := flag.Int("max-history", release.DefaultMaxHistory, "How many revisions each release keeps (helm upgrade --history-max); 0 keeps all.")
	flag.Parse()
	manager.Run("minimart", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}, setup(*maxHistory), minimartctrl.CacheOptions)
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controller to mgr, its releases keeping maxHistory revisions.
func setup(maxHistory int) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		_, chart, err := minimart.WatchFor(v1alpha1.GroupVersion.WithKind("Minimart"))
		if err != nil {
			return err
		}
		releases, err := release.NewClient(mgr.GetConfig(), mgr.GetRESTMapper(), chart, maxHistory, ctrl.Log.WithName("helm"))
		if err != nil {
			return err
		}
		return (&minimartctrl.Reconciler{
			Client:   client.WithFieldOwner(mgr.GetClient(), "minimart"),
			Releases: releases,
			Recorder: mgr.GetEventRecorder("minimart-controller"),
		}).SetupWithManager(mgr)
	}
}
