// Command manager runs the etcd-cluster operator.
package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/crd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/prometheus"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdbackup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdrestore"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/upgradeable"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/manager"
)

// options are the flags of this operator's own.
type options struct {
	clusterWide    bool
	dialTimeout    time.Duration
	requestTimeout time.Duration
	// etcdEndpoints and s3Endpoints: what backups and restores may reach beyond the
	// EtcdClusters of their own namespace and the internet.
	etcdEndpoints, s3Endpoints backup.Allowlist
	// clusterIssuers: the cert-manager ClusterIssuers EtcdClusters may name.
	clusterIssuers []string
}

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	var o options
	flag.BoolVar(&o.clusterWide, "cluster-wide", false,
		"Act on EtcdClusters in every namespace annotated etcd.database.coreos.com/scope=clusterwide, "+
			"instead of the unannotated ones in the watched namespaces (as the CoreOS etcd operator's -cluster-wide).")
	flag.DurationVar(&o.dialTimeout, "etcd-dial-timeout", etcd.DefaultDialTimeout, "How long to wait for a connection to a cluster's members.")
	flag.DurationVar(&o.requestTimeout, "etcd-request-timeout", membership.DefaultRequestTimeout,
		"How long to wait for each etcd cluster API request (member list, status, add, promote, remove).")
	flag.Func("backup-etcd-endpoints", "Comma-separated hosts and CIDR ranges an EtcdBackup's etcdEndpoints may name besides the EtcdClusters "+
		"of its own namespace (default none, or $BACKUP_ETCD_ENDPOINTS): whoever may write an EtcdBackup can then copy those clusters' data.",
		allowlistFlag(&o.etcdEndpoints))
	flag.Func("backup-s3-endpoints", "Comma-separated hosts and CIDR ranges inside the cluster or the machine (private, loopback, link-local) "+
		"the S3 endpoint of a backup or restore may be, such as s3.quintet-s3.svc (default none, or $BACKUP_S3_ENDPOINTS): addresses "+
		"on the internet need no listing; the API server's is refused whatever is listed.",
		allowlistFlag(&o.s3Endpoints))
	flag.Func("cluster-issuers", "Comma-separated cert-manager ClusterIssuers an EtcdCluster's certManager.issuerRef may name "+
		"(default none, or $CLUSTER_ISSUERS): whoever may write an EtcdCluster gets client certificates from their CAs, "+
		"which every cluster they sign for trusts. Issuers of the cluster's own namespace need no listing.",
		manager.ListFlag(&o.clusterIssuers))
	manager.ParseFlags(map[string]string{
		"backup-etcd-endpoints": "BACKUP_ETCD_ENDPOINTS", "backup-s3-endpoints": "BACKUP_S3_ENDPOINTS", "cluster-issuers": "CLUSTER_ISSUERS",
	})
	assets := manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}
	manager.Run(o.name(), flags, newScheme(), assets, o.setup, etcdcluster.CacheOptions, jobs.CacheOptions)
}

// allowlistFlag parses a flag's list into a.
func allowlistFlag(a *backup.Allowlist) func(string) error {
	return func(v string) (err error) {
		*a, err = backup.ParseAllowlist(v)
		return err
	}
}

// name is the manager's: the cluster-wide one has its own leader election, as both kinds may
// run at once.
func (o options) name() string {
	if o.clusterWide {
		return "etcd-cluster-clusterwide"
	}
	return "etcd-cluster"
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1beta2.AddToScheme(scheme))
	return scheme
}

// serviceAccountNamespace is where a pod's service account token says its namespace is.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// managerNamespace is the namespace the manager's pod runs in: POD_NAMESPACE (config/manager
// sets it from the downward API), else its service account's; empty outside a cluster.
func managerNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// setup adds the operator's controllers to mgr.
func (o options) setup(mgr ctrl.Manager) error {
	apiServer, err := backup.APIServerAddresses(mgr.GetConfig())
	if err != nil {
		return err
	}
	s3 := backup.Reach{Internal: o.s3Endpoints, APIServer: apiServer}
	err = (&etcdcluster.Reconciler{
		// Objects name the manager that wrote them (managedFields): the namespaced and the
		// cluster-wide manager can be told apart.
		Client:         client.WithFieldOwner(mgr.GetClient(), o.name()),
		APIReader:      mgr.GetAPIReader(),
		Recorder:       mgr.GetEventRecorder("etcdcluster-controller"),
		ClusterWide:    o.clusterWide,
		DialTimeout:    o.dialTimeout,
		RequestTimeout: o.requestTimeout,
		ProxyEnv:       proxy.ReadProxyVarsFromEnv(),
		OperatorImage:  os.Getenv("OPERATOR_IMAGE"),
		// Members' NetworkPolicies let the manager's pods of this namespace in.
		ManagerNamespace: managerNamespace(),
		S3:               s3,
		ClusterIssuers:   o.clusterIssuers,
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	err = (&etcdbackup.Reconciler{
		Client:        client.WithFieldOwner(mgr.GetClient(), o.name()),
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("etcdbackup-controller"),
		ClusterWide:   o.clusterWide,
		DialTimeout:   o.dialTimeout,
		OperatorImage: os.Getenv("OPERATOR_IMAGE"),
		EtcdEndpoints: o.etcdEndpoints,
		S3:            s3,
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	err = (&etcdrestore.Reconciler{
		Client:      client.WithFieldOwner(mgr.GetClient(), o.name()),
		Recorder:    mgr.GetEventRecorder("etcdrestore-controller"),
		ClusterWide: o.clusterWide,
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	return upgradeable.SetupWithManager(mgr)
}
