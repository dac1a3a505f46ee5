// Command cert-manager runs cert-manager's own controllers, compiled from the
// github.com/cert-manager/cert-manager module, for the issuers the local cluster uses: SelfSigned
// and CA (Issuer and ClusterIssuer), with the Certificate controllers (trigger, key manager,
// request manager, issuing, readiness, revision manager) and the CertificateRequest approver.
//
// cert-manager's command lives in a Go module of its own (cmd/controller) that the module proxy
// does not serve, so this program does what that command does for those controllers: it builds
// cert-manager's controller context, constructs every registered controller it was asked for and
// runs them until it is stopped. ACME, Vault and Venafi are not compiled in, and there is no
// webhook: the CRDs' schemas are what the API server checks. One process, no leader election:
// `make cert-manager-up` runs it beside the control plane, as OLM's operators run.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// The issuer implementations the issuers and clusterissuers controllers set up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// controllers are the cert-manager controllers this program runs, by their registered names.
var controllers = []string{
	issuers.ControllerName, clusterissuers.ControllerName,
	approver.ControllerName, crca.CRControllerName, crselfsigned.CRControllerName,
	trigger.ControllerName, keymanager.ControllerName, requestmanager.ControllerName,
	issuing.ControllerName, readiness.ControllerName, revisionmanager.ControllerName,
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (in-cluster configuration when empty)")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager",
		"namespace holding the Secrets ClusterIssuers refer to")
	metricsAddress := flag.String("metrics-address", "", "address to serve cert-manager's Prometheus metrics on (none when empty)")
	workers := flag.Int("workers", 5, "workers per controller")
	ownerRef := flag.Bool("enable-certificate-owner-ref", false,
		"make each Certificate the owner of its Secret, so that the Secret goes with it")
	logf.InitLogs()
	flag.Parse()
	defer logf.FlushLogs()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager")
	opts := controller.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef: *ownerRef,
			// cert-manager's defaults: a failed request is retried after 1h, then up to 32h.
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
	if err := run(ctx, opts, *metricsAddress, *workers); err != nil {
		logf.Log.Error(err, "cert-manager stopped")
		logf.FlushLogs()
		os.Exit(1)
	}
}

func run(ctx context.Context, opts controller.ContextOptions, metricsAddress string, workers int) error {
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	if metricsAddress != "" {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", metricsAddress)
		if err != nil {
			return err
		}
		base.Metrics.SetupCertificateCollector(base.SharedInformerFactory.Certmanager().V1().Certificates().Lister())
		server := base.Metrics.NewServer(ln)
		g.Go(func() error { <-ctx.Done(); return server.Close() })
		g.Go(func() error { _ = server.Serve(ln); return nil })
	}
	known := controller.Known()
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %q: %w", name, err)
		}
		g.Go(func() error { return c.Run(workers, ctx) })
	}
	logf.FromContext(ctx).Info("running cert-manager controllers", "controllers", slices.Sorted(slices.Values(controllers)))
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	return g.Wait()
}
