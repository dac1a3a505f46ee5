package release

import (
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// testMapper maps the chart's kinds, namespaced, and a cluster-scoped one.
func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{{Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "Secret"},
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}} {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	m.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, meta.RESTScopeRoot)
	return m
}

// A tenant who may write Secrets in its namespace can forge a revision of a Minimart's
// release there: the manager reads none that reaches outside the namespace.
func TestAForgedRevisionThatReachesOutsideItsNamespaceIsRefused(t *testing.T) {
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: corner\n"
	for name, tc := range map[string]struct {
		manifest, namespace, refused string
	}{
		"another namespace's Deployment": {deployment + "  namespace: kube-system\n", "shop", "Deployment corner in namespace kube-system"},
		"a cluster-scoped object": {"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: tenant-admin\n",
			"shop", "ClusterRoleBinding tenant-admin, which is cluster-scoped"},
		"a kind the API server does not serve": {"apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: x\n", "shop", "does not serve"},
		"a release of another namespace":       {deployment, "kube-system", `a release of namespace "kube-system"`},
		"the chart's own objects":              {deployment + "  namespace: shop\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: corner\n", "shop", ""},
	} {
		t.Run(name, func(t *testing.T) {
			d := newReleaseSecrets(fake.NewClientset().CoreV1().Secrets("shop"), "shop", testMapper())
			rel := rendered(t, 1, release.StatusDeployed)
			rel.Manifest, rel.Namespace = tc.manifest, tc.namespace
			if err := d.Create("sh.helm.release.v1.corner.v1", rel); err != nil {
				t.Fatal(err)
			}
			_, getErr := d.Get("sh.helm.release.v1.corner.v1")
			_, queryErr := d.Query(map[string]string{"name": "corner", "owner": "helm"})
			_, listErr := d.List(func(*release.Release) bool { return true })
			for what, err := range map[string]error{"Get": getErr, "Query": queryErr, "List": listErr} {
				var untrusted *UntrustedError
				switch {
				case tc.refused == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case tc.refused != "" && (!errors.As(err, &untrusted) || !strings.Contains(err.Error(), tc.refused)):
					t.Errorf("%s: got %v, want a refusal naming %q", what, err, tc.refused)
				}
			}
		})
	}
}
