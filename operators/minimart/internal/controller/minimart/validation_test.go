package minimart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
)

// Bad values are refused when the Minimart is written, each naming its field, instead of
// failing when Helm renders the chart.
func TestBadValuesAreRejectedAtAdmissionWithTheirFieldPath(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name, spec, want string
	}{
		{"negative replicas", `{replicaCount: -1}`, "spec.replicaCount: Invalid value: -1: spec.replicaCount in body should be greater than or equal to 0"},
		{"too many replicas", `{replicaCount: 21}`, "spec.replicaCount: Invalid value: 21: spec.replicaCount in body should be less than or equal to 20"},
		{"replicas as text", `{replicaCount: "two"}`, `spec.replicaCount: Invalid value: "string": spec.replicaCount in body must be of type integer`},
		{"empty store name", `{storeName: ""}`, "spec.storeName: Invalid value: \"\": spec.storeName in body should be at least 1 chars long"},
		{"long store name", `{storeName: ` + strings.Repeat("x", 64) + `}`, "spec.storeName: Too long: may not be more than 63 bytes"},
		{"price without cents", `{products: [{name: apples, price: "3.5"}]}`, "spec.products[0].price: Invalid value: \"3.5\": spec.products[0].price in body should match"},
		{"product without price", `{products: [{name: apples}]}`, "spec.products[0].price: Required value"},
		{"product twice", `{products: [{name: apples, price: "1.00"}, {name: apples, price: "2.00"}]}`, "spec.products[1]: Duplicate value"},
		{"unknown pull policy", `{image: {pullPolicy: Sometimes}}`, "spec.image.pullPolicy: Unsupported value: \"Sometimes\""},
		{"bad repository", `{image: {repository: "Not A Repo"}}`, "spec.image.repository: Invalid value: \"Not A Repo\""},
		{"bad tag", `{image: {tag: ":latest"}}`, "spec.image.tag: Invalid value: \":latest\""},
		{"LoadBalancer", `{service: {type: LoadBalancer}}`, "spec.service.type: Unsupported value: \"LoadBalancer\""},
		{"port 0", `{service: {port: 0}}`, "spec.service.port: Invalid value: 0: spec.service.port in body should be greater than or equal to 1"},
		{"node port out of range", `{service: {nodePort: 80}}`, "spec.service.nodePort: Invalid value: 80: spec.service.nodePort in body should be greater than or equal to 30000"},
		{"node port of a ClusterIP", `{service: {type: ClusterIP, nodePort: 30080}}`, "spec.service.nodePort: Invalid value: nodePort is only allowed when type is NodePort"},
		{"unknown value", `{colour: blue}`, `unknown field "spec.colour"`},
		{"bad toleration operator", `{tolerations: [{key: a, operator: Maybe}]}`, "spec.tolerations: Invalid value: a toleration's operator is Exists or Equal"},
		{"bad toleration effect", `{tolerations: [{key: a, effect: Sometimes}]}`, "spec.tolerations: Invalid value: a toleration's effect is NoSchedule, PreferNoSchedule or NoExecute"},
		{"too many node labels", `{nodeSelector: {` + nodeLabels(21) + `}}`, "spec.nodeSelector: Too many: 21: must have at most 20 items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), newMinimart(g, ns, "bad", c.spec), client.FieldValidation("Strict"))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(c.want))
		})
	}
	t.Run("a name longer than a Helm release's", func(t *testing.T) {
		g := NewWithT(t)
		err := env.Client.Create(context.Background(), newMinimart(g, ns, strings.Repeat("a", 54), "{}"))
		g.Expect(err).To(MatchError(ContainSubstring("metadata.name must be at most 53 characters: it is the Helm release's name")))
	})
}

// A Minimart with an empty spec gets the chart's values.yaml, field by field.
func TestTheCRDDefaultsAreTheChartsValues(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	m := newMinimart(g, ns, "defaults", "{}")
	g.Expect(env.Client.Create(context.Background(), m, client.DryRunAll)).To(Succeed())
	defaulted, _, _ := unstructured.NestedMap(m.Object, "spec")

	data, err := os.ReadFile(filepath.Join("..", "..", "..", "helm-charts", "minimart", "values.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	values := map[string]any{}
	g.Expect(yaml.Unmarshal(data, &values)).To(Succeed())
	for _, empty := range []string{"products", "nodeSelector", "tolerations"} {
		g.Expect(values).To(HaveKeyWithValue(empty, BeEmpty()))
		delete(values, empty) // an empty list or map: the same as none
	}
	g.Expect(asJSON(defaulted)).To(Equal(asJSON(values)))
}

// nodeLabels is n labels of a nodeSelector, in YAML flow style.
func nodeLabels(n int) string {
	labels := make([]string, n)
	for i := range labels {
		labels[i] = fmt.Sprintf("l%d: v", i)
	}
	return strings.Join(labels, ", ")
}

// newMinimart is a Minimart named name with spec, a YAML map.
func newMinimart(g Gomega, ns, name, spec string) *unstructured.Unstructured {
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Minimart"))
	m.SetNamespace(ns)
	m.SetName(name)
	s := map[string]any{}
	g.Expect(yaml.Unmarshal([]byte(spec), &s)).To(Succeed())
	m.Object["spec"] = s
	return m
}
