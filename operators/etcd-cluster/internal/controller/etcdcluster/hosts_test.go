package etcdcluster

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

func TestNamedBy(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "example"}}
	for host, want := range map[string]bool{
		"example-client":                           true,
		"example-client.tenant":                    true,
		"example-client.tenant.svc":                true,
		"example-client.tenant.svc.cluster.local":  true,
		"example-client.tenant.svc.cluster.local.": true,
		"EXAMPLE-CLIENT.Tenant.svc":                true,
		"example":                                  true,
		"example-2.example":                        true,
		"example-2.example.tenant.svc":             true,
		"example-client.quintet-demo.svc":          false, // another namespace's
		"example-client.quintet-demo":              false,
		"example-client.tenant.quintet-demo.svc":   false,
		"other-client":                             false,
		"example-x.example":                        false,
		"example-2.other":                          false,
		"example-client.tenant.example.com":        false,
		"10.0.0.7":                                 false,
		"kubernetes.default.svc":                   false,
		"example-client.svc":                       false,
	} {
		if got := NamedBy(c, host); got != want {
			t.Errorf("NamedBy(%q) = %v, want %v", host, got, want)
		}
	}
}
