package release

import (
	"context"
	"errors"
	"io"
	"maps"
	"runtime"
	"strconv"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart"
	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
)

// rendered is release "corner" of the operator's own chart as Helm makes it (rendered without
// a cluster, as `helm template` does), at revision version with status.
func rendered(t testing.TB, version int, status release.Status) *release.Release {
	t.Helper()
	_, chart, err := minimart.WatchFor(v1alpha1.GroupVersion.WithKind("Minimart"))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ReleaseName, install.Namespace = "corner", "shop"
	install.DryRun, install.ClientOnly = true, true
	rel, err := install.Run(chart, map[string]any{"replicaCount": version})
	if err != nil {
		t.Fatal(err)
	}
	rel.Version = version
	rel.Labels = map[string]string{"team": "checkout"}
	rel.SetStatus(status, "a description of revision "+strconv.Itoa(version))
	return rel
}

// stamps are the labels holding the second of a write, which two writes need not share.
var stamps = []string{"createdAt", "modifiedAt"}

// stored is the Secret under key in clientset, without the values of its time stamps.
func stored(t *testing.T, clientset *fake.Clientset, key string) *corev1.Secret {
	t.Helper()
	s, err := clientset.CoreV1().Secrets("shop").Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range stamps {
		if _, ok := s.Labels[l]; ok {
			s.Labels[l] = "(a second)"
		}
	}
	return s
}

func TestReleaseSecretsWriteWhatHelmsDriverWritesAndHelmReadsIt(t *testing.T) {
	// The same writes through Helm's driver and through ours, into two API servers' worth of
	// Secrets: two releases, the second revision created then updated (as an upgrade does,
	// pending then deployed), so that a compressor kept from one release writes the next.
	first := rendered(t, 1, release.StatusDeployed)
	second := rendered(t, 2, release.StatusPendingUpgrade)
	deployed := rendered(t, 2, release.StatusDeployed)
	helms, ours := fake.NewClientset(), fake.NewClientset()
	writers := map[*fake.Clientset]driver.Driver{
		helms: driver.NewSecrets(helms.CoreV1().Secrets("shop")),
		ours:  newReleaseSecrets(ours.CoreV1().Secrets("shop"), "shop", testMapper()),
	}
	for clientset, d := range writers {
		for _, err := range []error{
			d.Create("sh.helm.release.v1.corner.v1", first),
			d.Create("sh.helm.release.v1.corner.v2", second),
			d.Update("sh.helm.release.v1.corner.v2", deployed),
		} {
			if err != nil {
				t.Fatalf("%s driver: %v", map[*fake.Clientset]string{helms: "Helm's", ours: "our"}[clientset], err)
			}
		}
	}

	for _, key := range []string{"sh.helm.release.v1.corner.v1", "sh.helm.release.v1.corner.v2"} {
		want, got := stored(t, helms, key), stored(t, ours, key)
		if !maps.Equal(got.Labels, want.Labels) || got.Type != want.Type || !maps.EqualFunc(got.Data, want.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Errorf("%s differs from what Helm's driver writes (- Helm's, + ours):\n%s", key, diff.Diff(want, got))
		}
	}
	read, err := driver.NewSecrets(ours.CoreV1().Secrets("shop")).Get("sh.helm.release.v1.corner.v2")
	if err != nil {
		t.Fatalf("Helm's driver reading what ours wrote: %v", err)
	}
	if read.Info.Status != release.StatusDeployed || read.Manifest != deployed.Manifest || read.Config["replicaCount"] != float64(2) {
		t.Errorf("Helm's driver read back status %s, values %v and a manifest of %d bytes; want deployed, replicaCount 2 and %d bytes",
			read.Info.Status, read.Config, len(read.Manifest), len(deployed.Manifest))
	}
}

func TestReleaseSecretsCreateSaysARevisionIsThereAsHelmsDriverDoes(t *testing.T) {
	d := newReleaseSecrets(fake.NewClientset().CoreV1().Secrets("shop"), "shop", testMapper())
	rel := rendered(t, 1, release.StatusDeployed)
	if err := d.Create("sh.helm.release.v1.corner.v1", rel); err != nil {
		t.Fatal(err)
	}
	if err := d.Create("sh.helm.release.v1.corner.v1", rel); !errors.Is(err, driver.ErrReleaseExists) {
		t.Errorf("creating a revision that is there: %v, want %v", err, driver.ErrReleaseExists)
	}
}

// The namespace's controller deletes a release's Secrets while its Minimart's uninstall runs:
// the uninstall succeeds with nothing of the release left. Helm's driver read each revision
// before deleting it and failed the purge ("release: not found").
func TestAnUninstallSucceedsWhenTheNamespacesControllerDeletedARevisionFirst(t *testing.T) {
	clientset := fake.NewClientset()
	d := newReleaseSecrets(clientset.CoreV1().Secrets("shop"), "shop", testMapper())
	for v, status := range map[int]release.Status{1: release.StatusSuperseded, 2: release.StatusDeployed} {
		if err := d.Create("sh.helm.release.v1.corner.v"+strconv.Itoa(v), rendered(t, v, status)); err != nil {
			t.Fatal(err)
		}
	}
	// Once the uninstall has marked the release uninstalling, the first revision goes.
	clientset.PrependReactor("update", "secrets", func(k8stesting.Action) (bool, apiruntime.Object, error) {
		err := clientset.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("secrets"), "shop", "sh.helm.release.v1.corner.v1")
		return false, nil, client.IgnoreNotFound(err)
	})
	cfg := &action.Configuration{Releases: storage.Init(d), KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities, Log: func(string, ...any) {}}
	if _, err := action.NewUninstall(cfg).Run("corner"); err != nil {
		t.Fatalf("uninstalling: %v", err)
	}
	if left, err := clientset.CoreV1().Secrets("shop").List(context.Background(), metav1.ListOptions{}); err != nil || len(left.Items) > 0 {
		t.Errorf("after the uninstall: %v, %d Secrets left", err, len(left.Items))
	}
}

// discardedSecrets takes every write and keeps nothing: what a write allocates is then the
// driver's own.
type discardedSecrets struct{ corev1client.SecretInterface }

func (discardedSecrets) Update(_ context.Context, s *corev1.Secret, _ metav1.UpdateOptions) (*corev1.Secret, error) {
	return s, nil
}

// BenchmarkReleaseWrite is what writing a revision of the operator's chart allocates, in bytes
// per write, with Helm's Secrets driver and with releaseSecrets, and their ratio, in one run.
func BenchmarkReleaseWrite(b *testing.B) {
	rel := rendered(b, 1, release.StatusDeployed)
	helms, ours := driver.NewSecrets(discardedSecrets{}), newReleaseSecrets(discardedSecrets{}, "shop", testMapper())
	var helmBytes, ourBytes float64
	for b.Loop() {
		helmBytes = bytesPerWrite(b, helms, rel)
		ourBytes = bytesPerWrite(b, ours, rel)
	}
	b.ReportMetric(helmBytes, "B/write-helm")
	b.ReportMetric(ourBytes, "B/write")
	b.ReportMetric(helmBytes/ourBytes, "ratio")
}

// bytesPerWrite updates rel through d 100 times: the bytes allocated per write.
func bytesPerWrite(b *testing.B, d driver.Driver, rel *release.Release) float64 {
	const writes = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range writes {
		if err := d.Update("sh.helm.release.v1.corner.v1", rel); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / writes
}
