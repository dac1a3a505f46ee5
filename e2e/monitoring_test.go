//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The monitoring stack make prometheus-up runs (config/monitoring): prometheus-operator and
// one Prometheus, which selects every ServiceMonitor and PrometheusRule.
const (
	monitoringNamespace = "quintet-monitoring"
	prometheusPod       = "prometheus-quintet-0"
)

// prometheusAPI reads path (with query) from the Prometheus server's HTTP API, on its pod's
// IP, into data (the answer's "data").
func prometheusAPI(ctx context.Context, g Gomega, path string, query url.Values, data any) {
	pod := &corev1.Pod{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: monitoringNamespace, Name: prometheusPod}, pod)).To(Succeed())
	g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
	u := "http://" + pod.Status.PodIP + ":9090" + path + "?" + query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET %s: %s", u, body)
	answer := struct{ Data json.RawMessage }{}
	g.Expect(json.Unmarshal(body, &answer)).To(Succeed())
	g.Expect(json.Unmarshal(answer.Data, data)).To(Succeed())
}

// promTarget is a scrape target, as /api/v1/targets lists it.
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

// promAlert is an alert, pending or firing, as /api/v1/alerts lists it.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// targetsOf are the targets of job whose services are in namespace.
func targetsOf(targets []promTarget, job, namespace string) []promTarget {
	var mine []promTarget
	for _, t := range targets {
		if t.Labels["job"] == job && t.Labels["namespace"] == namespace {
			mine = append(mine, t)
		}
	}
	return mine
}

// expectScrapedUp waits until Prometheus scrapes job's one target in namespace, up.
func expectScrapedUp(ctx context.Context, job, namespace string) {
	By(fmt.Sprintf("finding the target of %s in %s up", job, namespace))
	Eventually(func(g Gomega) {
		var data struct{ ActiveTargets []promTarget }
		prometheusAPI(ctx, g, "/api/v1/targets", url.Values{"state": {"active"}}, &data)
		mine := targetsOf(data.ActiveTargets, job, namespace)
		g.Expect(mine).To(HaveLen(1), "the targets of job %s in %s", job, namespace)
		g.Expect(mine[0].ScrapeURL).To(HavePrefix("https://"))
		g.Expect(mine[0].Health).To(Equal("up"), mine[0].LastError)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}

// firingAlerts are the alerts named name that fire, by their labels.
func firingAlerts(ctx context.Context, g Gomega, name string) []map[string]string {
	var data struct{ Alerts []promAlert }
	prometheusAPI(ctx, g, "/api/v1/alerts", nil, &data)
	var firing []map[string]string
	for _, a := range data.Alerts {
		if a.Labels["alertname"] == name && a.State == "firing" {
			firing = append(firing, a.Labels)
		}
	}
	return firing
}

// queryValues are the values of an instant PromQL query's series, by their labels' String.
func queryValues(ctx context.Context, g Gomega, query string) map[string]string {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	prometheusAPI(ctx, g, "/api/v1/query", url.Values{"query": {query}}, &data)
	values := map[string]string{}
	for _, r := range data.Result {
		values[fmt.Sprint(r.Metric)] = fmt.Sprint(r.Value[1])
	}
	return values
}

// expectAlert waits until alert fires for the object namespace/name (alerts about the
// operators' own objects carry their namespace and name), within within.
func expectAlert(ctx context.Context, alert, namespace, name string, within time.Duration) {
	By(fmt.Sprintf("waiting for %s to fire for %s/%s (at most %s)", alert, namespace, name, within))
	Eventually(func(g Gomega) {
		g.Expect(firingAlerts(ctx, g, alert)).To(ContainElement(SatisfyAll(
			HaveKeyWithValue("namespace", namespace), HaveKeyWithValue("name", name))))
	}).WithContext(ctx).WithTimeout(within).WithPolling(5 * time.Second).Should(Succeed())
}

// expectAlertResolved waits until alert no longer fires for namespace/name.
func expectAlertResolved(ctx context.Context, alert, namespace, name string) {
	By(fmt.Sprintf("waiting for %s to resolve for %s/%s", alert, namespace, name))
	Eventually(func(g Gomega) {
		g.Expect(firingAlerts(ctx, g, alert)).NotTo(ContainElement(SatisfyAll(
			HaveKeyWithValue("namespace", namespace), HaveKeyWithValue("name", name))))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
}

// Every operator deployed as a platform team with prometheus-operator would: config/default
// with config/prometheus. The Prometheus consumes the ServiceMonitors and PrometheusRules, and
// the alerts fire on real faults.
var _ = Describe("Monitoring: a real Prometheus scrapes every operator and runs its alerts", Ordered, func() {
	var ns string

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		ns = createNamespace(ctx, "monitored", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		for _, op := range operators() {
			deployOperatorCopyOnRealNode(ctx, op, "monitoring", ns, "prometheus")
		}
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpForFailure(ctx, "monitoring", ns, etcdManagerNamespace+"-monitoring")
		}
	})

	It("scrapes every manager through its ServiceMonitor over HTTPS with the Prometheus's token; a scrape without one is refused", func(ctx SpecContext) {
		for _, op := range operators() {
			expectScrapedUp(ctx, op+"-operator", op+"-system-monitoring")
		}
		By("reading each manager's Go memory limit: its container's 256Mi less the 48 MiB it leaves for the binary's pages")
		Eventually(func(g Gomega) {
			limits := queryValues(ctx, g, fmt.Sprintf(`go_gc_gomemlimit_bytes{job=~"(%s)-operator"}`, strings.Join(operators(), "|")))
			g.Expect(limits).To(HaveLen(len(operators())))
			for series, value := range limits {
				g.Expect(strconv.ParseFloat(value, 64)).To(BeNumerically("==", (256-48)<<20), series)
			}
		}).WithContext(ctx).Should(Succeed())

		manager := managerOnRealNode(ctx, "gordon-system-monitoring")
		By("scraping gordon's manager at " + manager.Status.PodIP + " without a token")
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+manager.Status.PodIP+":8443/metrics", nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := insecureClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	})

	It("loads every operator's alerting rules, all healthy, none firing for a healthy operator", func(ctx SpecContext) {
		for _, op := range operators() {
			Eventually(func(g Gomega) {
				var data struct {
					Groups []struct {
						Name  string
						Rules []struct{ Name, Health, LastError string }
					}
				}
				prometheusAPI(ctx, g, "/api/v1/rules", url.Values{"type": {"alert"}}, &data)
				var rules int
				for _, group := range data.Groups {
					if group.Name != op+"-operator" {
						continue
					}
					for _, r := range group.Rules {
						g.Expect(r.Health).NotTo(Equal("err"), "%s: %s", r.Name, r.LastError)
						rules++
					}
				}
				g.Expect(rules).To(BeNumerically(">=", 2), "the rules of group %s-operator", op)
			}).WithContext(ctx).Should(Succeed())
		}
		Consistently(func(g Gomega) {
			g.Expect(queryValues(ctx, g, `ALERTS{alertname=~".*OperatorDown", alertstate="firing"}`)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(5 * time.Second).Should(Succeed())
	})

	It("answers every query of every operator's dashboard; each shows its manager up", func(ctx SpecContext) {
		// Grafana's variables as a user who picked "All" and the default range has them.
		variables := strings.NewReplacer("$__rate_interval", "1m", "$namespace", ".*", "$name", ".*")
		for _, op := range operators() {
			data, err := os.ReadFile(filepath.Join(operatorDir(op), "config", "prometheus", "dashboard.json"))
			Expect(err).NotTo(HaveOccurred())
			var dashboard struct {
				Panels []struct {
					Title   string
					Targets []struct{ Expr string }
				}
			}
			Expect(json.Unmarshal(data, &dashboard)).To(Succeed())
			By(fmt.Sprintf("querying the %d panels of %s's dashboard", len(dashboard.Panels), op))
			for _, panel := range dashboard.Panels {
				for _, target := range panel.Targets {
					Eventually(func(g Gomega) {
						values := queryValues(ctx, g, variables.Replace(target.Expr))
						if panel.Title == "Managers up" { // this spec's, and any other spec's installed meanwhile
							g.Expect(values).To(ConsistOf(Not(Equal("0"))), "%s: %s", op, target.Expr)
						}
					}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
				}
			}
		}
	})

	It("fires GordonPodsNotReady for a Gordon whose pods cannot be scheduled and EtcdClusterMembersDown for an etcd member whose pod is gone; both resolve", func(ctx SpecContext) {
		gordon := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operator.prgcont.cz/v1", "kind": "Gordon",
			"metadata": map[string]any{"name": "nowhere", "namespace": ns},
			"spec": map[string]any{"gordon": map[string]any{"replicas": int64(2),
				"nodeSelector": map[string]any{"quintet.dev/no-such-node": "true"}}},
		}}
		Expect(k8sClient.Create(ctx, gordon)).To(Succeed())

		cluster := harnessEtcdCluster(ns, "monitored", requiredEnv("E2E_ETCD_VERSION"), nil)
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		expectEtcdReady(ctx, cluster, 3, requiredEnv("E2E_ETCD_VERSION"))
		Eventually(func(g Gomega) {
			ready := queryValues(ctx, g, fmt.Sprintf(`quintet_etcd_cluster_members{namespace=%q, name="monitored", state="ready"}`, ns))
			g.Expect(ready).To(HaveLen(1))
			g.Expect(ready).To(ContainElement("3"), "the operator's members gauge, scraped with the cluster's own namespace")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		member := cluster.GetName() + "-2"
		By("deleting member pod " + member + " and refusing its re-creation at admission")
		release := holdAtAdmission(ctx, "monitoring-hold-"+ns, ns, admissionv1.Create,
			admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			fmt.Sprintf("object.metadata.name != %q", member), "the monitoring spec keeps this etcd member down")
		Eventually(func() error {
			return k8sClient.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: member}, Spec: restrictedPodSpec()}, client.DryRunAll)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("keeps this etcd member down")))
		Expect(k8sClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: member}}, client.GracePeriodSeconds(0))).To(Succeed())

		// Each alert's for, plus scrapes, evaluations and the operator's own look (every 10 s).
		expectAlert(ctx, "EtcdClusterMembersDown", ns, cluster.GetName(), 3*time.Minute+2*time.Minute)
		expectAlert(ctx, "GordonPodsNotReady", ns, gordon.GetName(), 5*time.Minute+2*time.Minute)

		By("letting the member's pod be made again, and the Gordon's pods go anywhere")
		release(ctx)
		Expect(k8sClient.Patch(ctx, gordon, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"gordon":{"nodeSelector":null}}}`)))).To(Succeed())
		expectAlertResolved(ctx, "EtcdClusterMembersDown", ns, cluster.GetName())
		expectAlertResolved(ctx, "GordonPodsNotReady", ns, gordon.GetName())
	})
})
