package etcdcluster

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/shared/ensure"
)

// source is where a connection comes from: a pod (its namespace's and its own labels), or
// an address outside the cluster (ip).
type source struct {
	namespace string
	nsLabels  map[string]string
	podLabels map[string]string
	ip        string
}

func pod(namespace string, podLabels map[string]string, nsLabels ...string) source {
	l := map[string]string{corev1.LabelMetadataName: namespace}
	for i := 0; i+1 < len(nsLabels); i += 2 {
		l[nsLabels[i]] = nsLabels[i+1]
	}
	return source{namespace: namespace, nsLabels: l, podLabels: podLabels}
}

// admits says whether np lets s connect to port of the pods it selects, as a NetworkPolicy
// implementation decides: some rule lists the port (or no ports) and no peers (everyone)
// or a peer s matches. The local cluster's network enforces nothing: this is the check.
func admits(t *testing.T, np *networkingv1.NetworkPolicy, s source, port int32) bool {
	t.Helper()
	matches := func(sel *metav1.LabelSelector, l map[string]string) bool {
		selector, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		return selector.Matches(labels.Set(l))
	}
	peerMatches := func(p networkingv1.NetworkPolicyPeer) bool {
		switch {
		case p.IPBlock != nil:
			if s.ip == "" {
				return false // ipBlock is meant for addresses outside the cluster
			}
			in := func(cidr string) bool { return netip.MustParsePrefix(cidr).Contains(netip.MustParseAddr(s.ip)) }
			for _, e := range p.IPBlock.Except {
				if in(e) {
					return false
				}
			}
			return in(p.IPBlock.CIDR)
		case s.ip != "":
			return false
		case p.NamespaceSelector == nil:
			return s.namespace == np.Namespace && matches(p.PodSelector, s.podLabels)
		default:
			return matches(p.NamespaceSelector, s.nsLabels) && (p.PodSelector == nil || matches(p.PodSelector, s.podLabels))
		}
	}
	for _, rule := range np.Spec.Ingress {
		portMatches := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			portMatches = portMatches || (p.Port.IntVal == port && *p.Protocol == corev1.ProtocolTCP)
		}
		if !portMatches {
			continue
		}
		if len(rule.From) == 0 {
			return true
		}
		for _, p := range rule.From {
			if peerMatches(p) {
				return true
			}
		}
	}
	return false
}

func TestNetworkPolicyLetsInPeersOnlyFromTheClusterAndClientsFromWhatTheSpecAllows(t *testing.T) {
	const ns, managerNS = "db", "etcd-cluster-system"
	cluster := func(access *v1beta2.ClientAccess, tls bool) *v1beta2.EtcdCluster {
		c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: ns},
			Spec: v1beta2.EtcdClusterSpec{Size: 3, ClientAccess: access}}
		if tls {
			c.Spec.TLS = &v1beta2.TLSPolicy{}
		}
		return c
	}
	var (
		member        = pod(ns, map[string]string{v1beta2.ClusterLabel: "example", "app": "etcd"})
		otherMember   = pod(ns, map[string]string{v1beta2.ClusterLabel: "other", "app": "etcd"})
		app           = pod(ns, map[string]string{"app": "web"})
		appElsewhere  = pod("web", map[string]string{"app": "web"})
		teamA         = pod("team-a", map[string]string{"app": "api"}, "team", "a")
		manager       = pod(managerNS, ManagerPodLabels)
		managerNSPod  = pod(managerNS, map[string]string{"app": "other"})
		managerHere   = pod(ns, ManagerPodLabels) // the manager's labels, in the wrong namespace
		backupJob     = pod(ns, map[string]string{jobs.ManagedByLabel: jobs.ManagedBy, v1beta2.BackupLabel: "nightly"})
		backupJobAway = pod("web", map[string]string{jobs.ManagedByLabel: jobs.ManagedBy, v1beta2.BackupLabel: "nightly"})
		prometheus    = pod("monitoring", map[string]string{"app": "prometheus"})
		outside       = source{ip: "203.0.113.7"}
	)
	selected := &v1beta2.ClientAccess{Allow: v1beta2.ClientAccessSelected, From: []networkingv1.NetworkPolicyPeer{
		{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "203.0.113.0/24", Except: []string{"203.0.113.128/25"}}},
	}}
	tests := []struct {
		name      string
		c         *v1beta2.EtcdCluster
		managerNS string
		from      source
		port      int32
		want      bool
	}{
		// The peer port: the cluster's own members only, whatever clientAccess says.
		{"a member reaches another's peer port", cluster(nil, false), managerNS, member, peerPort, true},
		{"another cluster's member is kept off the peer port", cluster(nil, false), managerNS, otherMember, peerPort, false},
		{"a pod of the namespace is kept off the peer port", cluster(nil, false), managerNS, app, peerPort, false},
		{"the manager is kept off the peer port", cluster(nil, false), managerNS, manager, peerPort, false},
		{"All leaves the peer port to members", cluster(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessAll}, false), managerNS, appElsewhere, peerPort, false},
		// The client port by default: the namespace, and the operator from its own.
		{"a member reaches the client port", cluster(nil, false), managerNS, member, clientPort, true},
		{"a pod of the namespace reaches the client port", cluster(nil, false), managerNS, app, clientPort, true},
		{"Namespace is the default when allow is set", cluster(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessNamespace}, false), managerNS, app, clientPort, true},
		{"another cluster's member of the namespace is a pod of the namespace", cluster(nil, false), managerNS, otherMember, clientPort, true},
		{"a pod of another namespace is kept off the client port", cluster(nil, false), managerNS, appElsewhere, clientPort, false},
		{"an address outside the cluster is kept off", cluster(nil, false), managerNS, outside, clientPort, false},
		{"the manager reaches the client port from its namespace", cluster(nil, false), managerNS, manager, clientPort, true},
		{"another pod of the manager's namespace is kept off", cluster(nil, false), managerNS, managerNSPod, clientPort, false},
		{"a manager outside the cluster gets no rule (it comes from a node)", cluster(nil, false), "", manager, clientPort, false},
		// Selected: the user's peers, and still members, the manager and backup Jobs.
		{"Selected lets in a pod of a selected namespace", cluster(selected, false), managerNS, teamA, clientPort, true},
		{"Selected lets in a selected address", cluster(selected, false), managerNS, outside, clientPort, true},
		{"Selected keeps out an excepted address", cluster(selected, false), managerNS, source{ip: "203.0.113.200"}, clientPort, false},
		{"Selected keeps out the namespace unless listed", cluster(selected, false), managerNS, app, clientPort, false},
		{"Selected still lets members in", cluster(selected, false), managerNS, member, clientPort, true},
		{"Selected still lets the manager in", cluster(selected, false), managerNS, manager, clientPort, true},
		{"Selected does not take the manager's labels elsewhere for the manager", cluster(selected, false), managerNS, managerHere, clientPort, false},
		{"Selected still lets the operator's backup Jobs in", cluster(selected, false), managerNS, backupJob, clientPort, true},
		{"Selected keeps out backup Jobs of another namespace", cluster(selected, false), managerNS, backupJobAway, clientPort, false},
		{"Selected keeps out another cluster's member", cluster(selected, false), managerNS, otherMember, clientPort, false},
		// All: anything that reaches the pods.
		{"All lets in another namespace", cluster(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessAll}, false), managerNS, appElsewhere, clientPort, true},
		{"All lets in an outside address", cluster(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessAll}, false), managerNS, outside, clientPort, true},
		// The metrics port: only with TLS (etcd serves it then), from anywhere.
		{"with TLS, Prometheus anywhere reaches the metrics port", cluster(nil, true), managerNS, prometheus, metricsPort, true},
		{"without TLS there is no metrics port to open", cluster(nil, false), managerNS, prometheus, metricsPort, false},
		{"with TLS, Prometheus elsewhere is still kept off the client port", cluster(nil, true), managerNS, prometheus, clientPort, false},
		{"another port stays closed", cluster(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessAll}, true), managerNS, appElsewhere, 8080, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			np := networkPolicy(tt.c, managerPeer(tt.managerNS))
			if got := admits(t, np, tt.from, tt.port); got != tt.want {
				out, _ := yaml.Marshal(np.Spec)
				t.Errorf("admits port %d: %v, want %v; policy:\n%s", tt.port, got, tt.want, out)
			}
		})
	}
}

func TestNetworkPolicySelectsTheMembersForIngressOnly(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "db"}}
	np := networkPolicy(c, managerPeer("etcd-cluster-system"))
	if np.Name != "example-members" || np.Namespace != "db" || np.Labels[v1beta2.ClusterLabel] != "example" {
		t.Errorf("metadata %+v: want example-members in db, labelled for the cluster (the cache holds only those)", np.ObjectMeta)
	}
	if got := np.Spec.PodSelector.MatchLabels; !labels.Equals(got, selectorLabels(c)) {
		t.Errorf("pod selector %v, want the members' %v", got, selectorLabels(c))
	}
	if got := np.Spec.PolicyTypes; len(got) != 1 || got[0] != networkingv1.PolicyTypeIngress || len(np.Spec.Egress) != 0 {
		t.Errorf("policy types %v, egress %v: want ingress only (members reach S3, DNS and each other as before)", got, np.Spec.Egress)
	}
}

func TestNetworkPolicyIsWrittenOnlyWhenTheSpecChanges(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "db"}}
	manager := managerPeer("etcd-cluster-system")
	existing := networkPolicy(c, manager)
	if changed, err := ensure.CopyManagedFields(networkPolicy(c, manager), existing); err != nil || changed {
		t.Fatalf("changed %v, err %v: an unchanged policy must not be written", changed, err)
	}
	c.Spec.ClientAccess = &v1beta2.ClientAccess{Allow: v1beta2.ClientAccessAll}
	if changed, err := ensure.CopyManagedFields(networkPolicy(c, manager), existing); err != nil || !changed {
		t.Fatalf("changed %v, err %v: opening client access must update the policy", changed, err)
	}
	if rule := existing.Spec.Ingress[1]; len(rule.From) != 0 {
		t.Fatalf("client rule %+v: the peers of Namespace left behind", rule)
	}
}

func TestManagerPodLabelsAreTheManagerDeploymentsSelector(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var deployment struct {
		Kind string `json:"kind"`
		Spec struct {
			Selector metav1.LabelSelector `json:"selector"`
		} `json:"spec"`
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if err := yaml.Unmarshal([]byte(doc), &deployment); err != nil {
			t.Fatal(err)
		}
		if deployment.Kind == "Deployment" {
			break
		}
	}
	if !labels.Equals(deployment.Spec.Selector.MatchLabels, ManagerPodLabels) {
		t.Fatalf("config/manager selects %v; members' policies let in %v", deployment.Spec.Selector.MatchLabels, ManagerPodLabels)
	}
}

func TestEtcdClusterOwnsANetworkPolicyThatFollowsItsSpec(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := applySample(t, "etcd_v1beta2_etcdcluster.yaml", ns)
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-members", Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, np) }, timeout, tick).Should(Succeed())
	get(g, c)
	g.Expect(metav1.IsControlledBy(np, c)).To(BeTrue(), "owned by the cluster: deleted with it")
	g.Expect(np.Finalizers).To(BeEmpty())
	g.Expect(c.Spec.ClientAccess).To(Equal(&v1beta2.ClientAccess{Allow: v1beta2.ClientAccessNamespace}), "the default, visible on the cluster")
	g.Expect(c.Spec.NetworkPolicy).To(Equal(v1beta2.NetworkPolicyManaged))
	g.Expect(np.Spec).To(Equal(networkPolicy(c, managerPeer(reconciler.ManagerNamespace)).Spec), "as built, defaults included")

	patchSpec := func(patch string) {
		t.Helper()
		g.Expect(env.Client.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed(), patch)
	}
	// Client access narrowed to a namespace: the policy follows.
	patchSpec(`{"spec":{"clientAccess":{"allow":"Selected","from":[{"namespaceSelector":{"matchLabels":{"team":"a"}}}]}}}`)
	g.Eventually(func(g Gomega) {
		get(g, np)
		get(g, c)
		g.Expect(np.Spec).To(Equal(networkPolicy(c, managerPeer(reconciler.ManagerNamespace)).Spec))
		g.Expect(admits(t, np, pod("team-a", nil, "team", "a"), clientPort)).To(BeTrue())
		g.Expect(admits(t, np, pod(ns, map[string]string{"app": "web"}), clientPort)).To(BeFalse())
	}, timeout, tick).Should(Succeed())
	// The pass's Updated Event is recorded when it ends, after its write.
	g.Eventually(func() int { return events.Emitted(c, ensure.EventUpdated) }, timeout, tick).Should(BeNumerically(">=", 1))

	// None: the operator's policy goes; Managed again: it comes back.
	patchSpec(`{"spec":{"networkPolicy":"None","clientAccess":null}}`)
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(np), &networkingv1.NetworkPolicy{})
	}, timeout, tick).
		Should(MatchError(ContainSubstring("not found")))
	patchSpec(`{"spec":{"networkPolicy":"Managed"}}`)
	g.Eventually(func(g Gomega) {
		get(g, np)
		g.Expect(admits(t, np, pod(ns, map[string]string{"app": "web"}), clientPort)).To(BeTrue(), "back to the namespace")
	}, timeout, tick).Should(Succeed())

	// None leaves a policy of someone else's alone.
	theirs := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "theirs-members", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{}}}
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	other := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns},
		Spec: v1beta2.EtcdClusterSpec{NetworkPolicy: v1beta2.NetworkPolicyNone}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, other)
		g.Expect(other.Status.ObservedGeneration).To(Equal(other.Generation))
	}, timeout, tick).Should(Succeed())
	g.Consistently(func(g Gomega) { get(g, theirs) }, 2*time.Second, tick).Should(Succeed())
}

func TestEtcdClusterRefusesClientAccessThatSaysTwoThingsAtAdmission(t *testing.T) {
	ns := newNamespace(t)
	peers := []any{map[string]any{"podSelector": map[string]any{}}}
	tests := []struct {
		name   string
		access map[string]any
		want   string
	}{
		{"Selected without peers", map[string]any{"allow": "Selected"}, "clientAccess.from is required with allow: Selected"},
		{"Selected with an empty list", map[string]any{"allow": "Selected", "from": []any{}}, "should have at least 1 items"},
		{"peers without Selected", map[string]any{"from": peers}, "clientAccess.from is only read with allow: Selected"},
		{"peers with All", map[string]any{"allow": "All", "from": peers}, "clientAccess.from is only read with allow: Selected"},
		{"an unknown allow", map[string]any{"allow": "Everyone"}, `supported values: "Namespace", "Selected", "All"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
				"spec":     map[string]any{"paused": true, "clientAccess": tt.access},
			}}
			NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
		"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
		"spec":     map[string]any{"paused": true, "networkPolicy": "Off"},
	}}
	NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring(`supported values: "Managed", "None"`)))
}
