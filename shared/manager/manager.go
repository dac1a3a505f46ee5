// Package manager builds the controller-runtime manager every Quintet operator runs: secure
// metrics, health and readiness probes, leader election, structured logs, and a cache scoped
// to the namespaces OLM (or WATCH_NAMESPACE) says the operator watches.
package manager

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/quintet-operators/quintet/shared/console"
	"github.com/quintet-operators/quintet/shared/monitoring"
	"github.com/quintet-operators/quintet/shared/restapi"
)

// WatchNamespaceEnv names the namespaces to watch, comma-separated; empty means all. OLM's
// CSV sets it from the `olm.targetNamespaces` annotation of the operator's pod.
const WatchNamespaceEnv = "WATCH_NAMESPACE"

// Flags are the command-line settings every manager shares.
type Flags struct {
	MetricsAddr   string
	SecureMetrics bool
	ProbeAddr     string
	// PprofAddr serves Go's profiles (/debug/pprof/) over plain HTTP; "0" (the default) turns them off.
	PprofAddr   string
	LeaderElect bool
	// LeaderElectionNamespace holds the Lease; empty: the manager's own namespace (in a cluster).
	LeaderElectionNamespace string
	EnableHTTP2             bool
	// MaxConcurrentReconciles is how many objects of a kind a controller reconciles at once.
	MaxConcurrentReconciles int
	// KubeAPIQPS and KubeAPIBurst limit the manager's requests on the client side; 0 leaves
	// controller-runtime's default (no client-side limit: the API server's Priority and
	// Fairness shapes the load).
	KubeAPIQPS   float64
	KubeAPIBurst int
	// API is the REST API (with Swagger UI) over the operator's kinds; off unless given an address.
	API restapi.Options
	// InstallMonitoring: the manager applies its ServiceMonitor, PrometheusRule and dashboard
	// ConfigMap in its own namespace whenever prometheus-operator's kinds are served (package
	// monitoring). Only the OLM bundle's CSV sets it.
	InstallMonitoring bool
	Zap               zap.Options
}

// Bind registers the flags with the defaults of an in-cluster deployment, but for leader
// election, which is off unless asked for.
func (f *Flags) Bind(flags *flag.FlagSet) {
	flags.StringVar(&f.MetricsAddr, "metrics-bind-address", ":8443",
		"Address of the metrics endpoint (:8443 for HTTPS, :8080 for HTTP); 0 turns it off.")
	flags.BoolVar(&f.SecureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorized through the API server.")
	flags.StringVar(&f.ProbeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 turns them off.")
	flags.StringVar(&f.PprofAddr, "pprof-bind-address", "0",
		"Address of Go's profiles, /debug/pprof/ over plain HTTP, unauthenticated: bind it to loopback (127.0.0.1:6060); 0 turns them off.")
	// Off by default, as in kubebuilder's scaffold: a manager run outside a cluster (`make run`)
	// has no namespace for the lease. config/manager's Deployment passes --leader-elect.
	flags.BoolVar(&f.LeaderElect, "leader-elect", false,
		"Elect a leader, so that only one replica reconciles at a time (the Deployments set it).")
	flags.StringVar(&f.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease; empty: the manager's own, which only a manager in a cluster has.")
	flags.BoolVar(&f.EnableHTTP2, "enable-http2", false,
		"Serve metrics over HTTP/2 too (off by default: HTTP/2 Stream Cancellation and Rapid Reset CVEs).")
	flags.IntVar(&f.MaxConcurrentReconciles, "max-concurrent-reconciles", 4,
		"How many custom resources of a kind are reconciled at once (each object is only ever reconciled by one worker).")
	flags.Float64Var(&f.KubeAPIQPS, "kube-api-qps", 0,
		"Client-side limit on API requests per second (0: none, API Priority and Fairness applies); kube-controller-manager uses 50 (burst 100) by default.")
	flags.IntVar(&f.KubeAPIBurst, "kube-api-burst", 0, "Burst above --kube-api-qps (0: none).")
	flags.BoolVar(&f.InstallMonitoring, "install-monitoring", false,
		"Apply the operator's ServiceMonitor, PrometheusRule and Grafana dashboard ConfigMap in the manager's namespace whenever "+
			"the cluster serves prometheus-operator's kinds (the OLM bundle sets it; Helm and kustomize install them themselves).")
	f.API.Bind(flags)
	f.Zap = zap.Options{Development: false}
	f.Zap.BindFlags(flags)
}

// WatchNamespaces parses a WATCH_NAMESPACE value: names separated by commas, blanks ignored.
func WatchNamespaces(value string) []string { return commaList(value) }

// New builds a manager for the operator named name (also its leader-election ID prefix),
// with Options, against the cluster of the kubeconfig or the pod's service account.
func New(name string, f Flags, scheme *runtime.Scheme, customize ...func(*ctrl.Options)) (ctrl.Manager, error) {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.Zap)))
	limitMemory(ctrl.Log.WithName("setup"))
	adviseRandomReads(ctrl.Log.WithName("setup"))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	if f.KubeAPIQPS > 0 {
		cfg.QPS, cfg.Burst = float32(f.KubeAPIQPS), max(f.KubeAPIBurst, int(f.KubeAPIQPS))
	}
	mgr, err := ctrl.NewManager(cfg, Options(name, f, scheme, customize...))
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// Options are the manager options the flags give: metrics, probes, leader election, the
// workers of every controller (--max-concurrent-reconciles, controller-runtime's default for
// each controller the manager builds) and the cache's namespaces. Each customize function
// may adjust them last, e.g. to narrow what the cache holds.
func Options(name string, f Flags, scheme *runtime.Scheme, customize ...func(*ctrl.Options)) ctrl.Options {
	var tlsOpts []func(*tls.Config)
	if !f.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metrics := metricsserver.Options{BindAddress: f.MetricsAddr, SecureServing: f.SecureMetrics, TLSOpts: tlsOpts,
		FilterProvider: metricsFilters(f.SecureMetrics)}
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metrics,
		WebhookServer:           webhook.NewServer(webhook.Options{TLSOpts: tlsOpts}),
		HealthProbeBindAddress:  f.ProbeAddr,
		PprofBindAddress:        f.PprofAddr,
		LeaderElection:          f.LeaderElect,
		LeaderElectionID:        name + ".quintet.dev",
		LeaderElectionNamespace: f.LeaderElectionNamespace,
		// The manager exits right after losing the lease, so stepping down early is safe.
		LeaderElectionReleaseOnCancel: true,
		Controller: config.Controller{
			MaxConcurrentReconciles: max(1, f.MaxConcurrentReconciles),
			// A first-in, first-out queue, as kube-controller-manager's controllers have.
			// controller-runtime's priority queue puts the objects a manager finds when it
			// starts (and resyncs) behind every other event, and a pass's requeue keeps the
			// priority it was taken at: a few objects that keep changing or polling (etcd
			// clusters whose members do not answer yet) then hold every worker while the rest
			// of a thousand, found at a restart, wait without a first pass.
			UsePriorityQueue: ptr.To(false),
		},
		Cache: cache.Options{DefaultTransform: cacheTransform(newStringPool(stringPoolGeneration, mapPoolGeneration))},
	}
	if namespaces := WatchNamespaces(os.Getenv(WatchNamespaceEnv)); len(namespaces) > 0 {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
		ctrl.Log.Info("Watching namespaces", "namespaces", namespaces)
	} else {
		ctrl.Log.Info("Watching all namespaces")
	}
	for _, c := range customize {
		c(&opts)
	}
	return opts
}

// Assets are what an operator embeds for the manager: its CRDs (config/crd/bases), which the
// REST API serves, and its monitoring objects (config/prometheus).
type Assets struct {
	CRDs       fs.FS
	Monitoring monitoring.Set
}

// Run builds the manager, lets setup add the controllers, adds the REST API over the CRDs
// and the monitoring objects' installer when the flags turn them on, and runs until SIGTERM
// or SIGINT. It logs and exits the process with status 1 on any error, as a main function
// would.
func Run(name string, f Flags, scheme *runtime.Scheme, assets Assets, setup func(ctrl.Manager) error, customize ...func(*ctrl.Options)) {
	mgr, err := New(name, f, scheme, customize...)
	if err != nil {
		ctrl.Log.Error(err, "Unable to create the manager")
		os.Exit(1)
	}
	if err := setup(mgr); err != nil {
		ctrl.Log.Error(err, "Unable to set up the controllers")
		os.Exit(1)
	}
	if err := addAPI(mgr, name, f.API, assets.CRDs); err != nil {
		ctrl.Log.Error(err, "Unable to set up the REST API")
		os.Exit(1)
	}
	if f.InstallMonitoring {
		if err := monitoring.Add(mgr, assets.Monitoring); err != nil {
			ctrl.Log.Error(err, "Unable to set up the monitoring objects' installer")
			os.Exit(1)
		}
	}
	ctrl.Log.Info("Starting the manager", "operator", name)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		ctrl.Log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}

// addAPI adds the REST API to the manager when o gives it an address, and beside it the web
// console (the address's root leads there) unless --api-console=false. Both reach the API
// server at the manager's address with each caller's token, never the manager's.
func addAPI(mgr ctrl.Manager, name string, o restapi.Options, crds fs.FS) error {
	if !o.Enabled() {
		return nil
	}
	opts := APIOptions(name)
	opts.Log = ctrl.Log.WithName("restapi")
	server, err := restapi.NewServer(mgr.GetConfig(), crds, o, opts)
	if err != nil {
		return err
	}
	if o.Console {
		web, err := console.New(mgr.GetConfig(), console.Options{Log: ctrl.Log.WithName("console")})
		if err != nil {
			return err
		}
		server.Handle(console.Path, web)
		server.Handle("GET /{$}", http.RedirectHandler(console.Path, http.StatusFound))
	}
	return mgr.Add(server)
}

// APIOptions are the REST API's settings in the manager of the operator named name: what
// its OpenAPI document says of it. `make docs-api` writes the document with these, and each
// operator's test compares that file with what the API serves.
func APIOptions(name string) restapi.HandlerOptions {
	return restapi.HandlerOptions{Title: name + " REST API"}
}
