//go:build e2e

package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	// An Eventually given the spec's context would otherwise wait until the suite's timeout:
	// bound every wait, and give the few longer ones their own WithTimeout.
	SetDefaultEventuallyTimeout(5 * time.Minute)
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "Quintet e2e")
}

var _ = BeforeSuite(func() {
	var err error
	cfg, err = clusterconfig.Config()
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	_, err = discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerVersion()
	Expect(err).NotTo(HaveOccurred(), "the cluster at %s does not answer", cfg.Host)
})

// createNamespace makes a namespace for one spec, with extra labels, and deletes it after.
func createNamespace(ctx context.Context, prefix string, labels map[string]string) string {
	return createAnnotatedNamespace(ctx, prefix, labels, nil)
}

// createAnnotatedNamespace is createNamespace with annotations set at creation. Admission
// plugins that read a namespace's annotations (PodNodeSelector, PodTolerationRestriction)
// read them from an informer, so annotations added by a later update may not be seen by
// the first pods created after it.
func createAnnotatedNamespace(ctx context.Context, prefix string, labels, annotations map[string]string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels, Annotations: annotations}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ns))).To(Succeed())
	})
	return ns.Name
}

func itoa(i int) string { return strconv.Itoa(i) }
