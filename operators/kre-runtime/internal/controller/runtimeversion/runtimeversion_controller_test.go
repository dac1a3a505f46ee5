package runtimeversion

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
)

const (
	timeout = 20 * time.Second
	tick    = 100 * time.Millisecond
)

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "kre-version-test") }

// sample reads a file of config/samples.
func sample(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// createRuntime makes the sample Runtime with the status the Runtime controller would report
// once its servers answer (this package runs only the RuntimeVersion controller).
func createRuntime(g Gomega, ns string) *v1alpha1.Runtime {
	ctx := context.Background()
	rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "example4", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, rt)).To(Succeed())
	rt.Status.NATSStreaming = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 1, Ready: true}
	rt.Status.Mongo = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 1, Ready: true, CredentialsSecret: "kre-mongo-credentials"}
	rt.Status.MinIO = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 1, Ready: true, CredentialsSecret: "kre-minio-credentials"}
	g.Expect(env.Client.Status().Update(ctx, rt)).To(Succeed())
	return rt
}

// startSample creates the sample Runtime (with its status) and RuntimeVersion in ns.
func startSample(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	g := NewWithT(t)
	createRuntime(g, ns)
	rv := sample(t, "kre_v1alpha1_runtimeversion.yaml")
	rv.SetNamespace(ns)
	g.Expect(env.Client.Create(context.Background(), rv)).To(Succeed())
	return rv
}

func getVersion(g Gomega, ns string) *v1alpha1.RuntimeVersion {
	rv := &v1alpha1.RuntimeVersion{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "greeter-v1"}, rv)).To(Succeed())
	return rv
}

// deploymentsOf waits for the version's four Deployments and returns them by component.
func deploymentsOf(t *testing.T, ns string) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		for _, c := range []string{EntrypointComponent, "prepare", "greet", "stamp"} {
			d := &appsv1.Deployment{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "greeter-v1-" + c}, d)).To(Succeed())
			out[c] = d
		}
	}, timeout, tick).Should(Succeed())
	return out
}

// markAvailable reports every Deployment's replicas ready, as the Deployment controller and
// kubelets would; envtest runs neither.
func markAvailable(g Gomega, ns string) {
	ctx := context.Background()
	list := &appsv1.DeploymentList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		d := &list.Items[i]
		n := ptr.Deref(d.Spec.Replicas, 1)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, ReadyReplicas: n, UpdatedReplicas: n, AvailableReplicas: n}
		g.Expect(env.Client.Status().Update(ctx, d)).To(Succeed())
	}
}

func envOf(d *appsv1.Deployment) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

func TestAVersionWaitsForItsRuntimeThenWiresItsNodesAlongTheWorkflow(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rv := sample(t, "kre_v1alpha1_runtimeversion.yaml")
	rv.SetNamespace(ns)
	g.Expect(env.Client.Create(ctx, rv, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(getVersion(g, ns), conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(v1alpha1.ReasonRuntimeNotFound))
		g.Expect(ready.Message).To(Equal("Runtime example4 does not exist (yet): the version starts once it does"))
	}, timeout, tick).Should(Succeed())
	g.Expect(env.Client.List(ctx, &appsv1.DeploymentList{}, client.InNamespace(ns))).To(Succeed())

	createRuntime(g, ns)
	deployments := deploymentsOf(t, ns)
	prepare, greet, stamp, entry := envOf(deployments["prepare"]), envOf(deployments["greet"]), envOf(deployments["stamp"]), envOf(deployments[EntrypointComponent])
	g.Expect(prepare[EnvNATSInput].Value).To(Equal("greeter-v1.greeting.prepare"))
	g.Expect(prepare[EnvNATSOutput].Value).To(Equal("greeter-v1.greeting.greet"))
	g.Expect(greet[EnvNATSOutput].Value).To(Equal("greeter-v1.greeting.stamp"))
	g.Expect(stamp[EnvNATSOutput].Value).To(BeEmpty(), "the last node answers the entrypoint")
	g.Expect(stamp[EnvWorkflow].Value).To(Equal("greeting"))
	g.Expect(entry[EnvEntrypoints].Value).To(Equal("Greet=greeter-v1.greeting.prepare"))
	g.Expect(entry[EnvNATSServer].Value).To(Equal("nats://kre-nats:4222"))
	g.Expect(entry["GREETING"].Value).To(Equal("hello"))
	g.Expect(entry["KRT_MONGO_PASSWORD"].ValueFrom.SecretKeyRef.Name).To(Equal("kre-mongo-credentials"))
	g.Expect(entry[EnvMongoURI].Value).To(Equal("mongodb://$(KRT_MONGO_USERNAME):$(KRT_MONGO_PASSWORD)@kre-mongo:27017/admin"))
	g.Expect(stamp[EnvMongoDB].Value).To(Equal("data"))
	g.Expect(stamp[EnvMinIOBucket].Value).To(Equal("kre"), "the Runtime's bucket, by default")
	// A node's readiness probe is the spec's, with the API server's defaults.
	g.Expect(deployments["stamp"].Spec.Template.Spec.Containers[0].ReadinessProbe).To(Equal(&corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeter-v1-entrypoint"}, &corev1.Service{})).To(Succeed())

	markAvailable(g, ns)
	g.Eventually(func(g Gomega) {
		v := getVersion(g, ns)
		g.Expect(conditions.Get(v, conditions.ReadyCondition)).To(HaveField("Status", metav1.ConditionTrue))
		g.Expect(v.Status.Workflows).To(Equal([]v1alpha1.WorkflowStatus{{Name: "greeting",
			Subjects: []string{"greeter-v1.greeting.prepare", "greeter-v1.greeting.greet", "greeter-v1.greeting.stamp"}}}))
		g.Expect(v.Status.Nodes).To(ContainElement(v1alpha1.NodeStatus{Name: "greet", Replicas: 1, ReadyReplicas: 1}))
	}, timeout, tick).Should(Succeed())
}

func TestAStartingVersionWaitsForItsRuntimesServersThenKeepsRunning(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rt := createRuntime(g, ns)
	rt.Status.Mongo.ReadyReplicas, rt.Status.Mongo.Ready = 0, false // MongoDB does not answer its ping yet
	g.Expect(env.Client.Status().Update(ctx, rt)).To(Succeed())
	rv := sample(t, "kre_v1alpha1_runtimeversion.yaml")
	rv.SetNamespace(ns)
	g.Expect(env.Client.Create(ctx, rv)).To(Succeed())

	g.Eventually(func(g Gomega) {
		ready := conditions.Get(getVersion(g, ns), conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(v1alpha1.ReasonWaitingForDependencies))
		g.Expect(ready.Message).To(HaveSuffix(": MongoDB 0/1 ready"))
	}, timeout, tick).Should(Succeed())
	for c, d := range deploymentsOf(t, ns) {
		g.Expect(d.Spec.Replicas).To(HaveValue(BeZero()), c+" is made, but runs nothing yet")
	}

	rt.Status.Mongo.ReadyReplicas, rt.Status.Mongo.Ready = 1, true
	g.Expect(env.Client.Status().Update(ctx, rt)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for c, d := range deploymentsOf(t, ns) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)), c)
		}
	}, timeout, tick).Should(Succeed())

	// Started, it keeps running while MongoDB restarts.
	rt.Status.Mongo.ReadyReplicas, rt.Status.Mongo.Ready = 0, false
	g.Expect(env.Client.Status().Update(ctx, rt)).To(Succeed())
	markAvailable(g, ns)
	g.Consistently(func(g Gomega) {
		for c, d := range deploymentsOf(t, ns) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)), c)
		}
		g.Expect(conditions.Get(getVersion(g, ns), conditions.ReadyCondition).Reason).NotTo(Equal(v1alpha1.ReasonWaitingForDependencies))
	}, 2*time.Second, tick).Should(Succeed())
}

func TestAStoppedVersionScalesToZeroAndAStartedOneComesBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rv := startSample(t, ns)
	deploymentsOf(t, ns)
	markAvailable(g, ns)

	setState := func(state string) {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"state":%q}}`, state))
		g.Expect(env.Client.Patch(ctx, rv, patch)).To(Succeed())
	}
	setState("Stopped")
	g.Eventually(func(g Gomega) {
		for c, d := range deploymentsOf(t, ns) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeZero()), c)
		}
	}, timeout, tick).Should(Succeed())
	markAvailable(g, ns)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.Get(getVersion(g, ns), conditions.ReadyCondition).Reason).To(Equal(v1alpha1.ReasonStopped))
	}, timeout, tick).Should(Succeed())

	setState("Started")
	g.Eventually(func(g Gomega) {
		for c, d := range deploymentsOf(t, ns) {
			g.Expect(d.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)), c)
		}
	}, timeout, tick).Should(Succeed())
}

func TestAVersionMakesAgainADeletedDeploymentAndWritesNothingInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rv := startSample(t, ns)
	deploymentsOf(t, ns)

	// A placement reaches every pod template (and, unchanged, writes nothing after).
	place := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"placement":{"nodeSelector":{"example.com/pool":"inference"},`+
		`"tolerations":[{"key":"example.com/pool","operator":"Exists","effect":"NoSchedule"}]}}}`))
	g.Expect(env.Client.Patch(ctx, rv, place)).To(Succeed())
	var deployments map[string]*appsv1.Deployment
	g.Eventually(func(g Gomega) {
		deployments = deploymentsOf(t, ns)
		for c, d := range deployments {
			g.Expect(d.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"example.com/pool": "inference"}), c)
			g.Expect(d.Spec.Template.Spec.Tolerations).To(Equal([]corev1.Toleration{
				{Key: "example.com/pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}), c)
		}
	}, timeout, tick).Should(Succeed())

	markAvailable(g, ns)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getVersion(g, ns), conditions.ReadyCondition)).To(BeTrue())
	}, timeout, tick).Should(Succeed())

	// What a pass wrote was one Normal Event per reason on the version: the Service and
	// Deployments created, the Deployments updated with the placement.
	created, updated := events.Emitted(rv, ensure.EventCreated), events.Emitted(rv, ensure.EventUpdated)
	g.Expect(strings.Count(strings.Join(events.Notes(rv, ensure.EventCreated), ","), "Deployment ")).To(Equal(len(deployments)))
	g.Expect(events.Notes(rv, ensure.EventCreated)[0]).To(HavePrefix("Created Service "))
	g.Expect(created).To(BeNumerically("<", len(deployments)+1), "fewer Events than objects created")
	g.Expect(updated).To(BeNumerically(">=", 1))

	time.Sleep(time.Second)
	before, mark := writes.WritesIn(ns), logs.Len()
	for i := range 5 {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"poke":"%d"}}}`, i))
		g.Expect(env.Client.Patch(ctx, rv, patch)).To(Succeed())
	}
	time.Sleep(2 * time.Second)
	g.Expect(writes.WritesIn(ns) - before).To(BeZero())
	g.Expect(logs.Since(mark, ns)).To(BeEmpty())
	g.Expect(events.Emitted(rv, ensure.EventCreated)+events.Emitted(rv, ensure.EventUpdated)).To(Equal(created+updated), "no Event without a write")

	g.Expect(env.Client.Delete(ctx, deployments["greet"])).To(Succeed())
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(deployments["greet"]), d)).To(Succeed())
		g.Expect(d.UID).NotTo(Equal(deployments["greet"].UID))
		g.Expect(events.Notes(rv, ensure.EventCreated)[created:]).To(Equal([]string{"Created Deployment " + deployments["greet"].Name}))
	}, timeout, tick).Should(Succeed())
}

func TestRuntimeVersionAdmissionRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	valid := func() map[string]any {
		return map[string]any{
			"runtimeRef": map[string]any{"name": "example4"},
			"entrypoint": map[string]any{"image": "krt-runner:v1"},
			"nodes":      []any{map[string]any{"name": "a", "image": "krt-runner:v1"}, map[string]any{"name": "b", "image": "krt-runner:v1"}},
			"workflows":  []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a", "b"}}},
		}
	}
	tests := []struct {
		name   string
		change func(spec map[string]any)
		want   string
	}{
		{"valid", func(map[string]any) {}, ""},
		{"a node in no declared list", func(s map[string]any) {
			s["workflows"] = []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a", "b", "c"}}}
		}, "spec.workflows: Invalid value: every name in a workflow's sequential must be a declared node"},
		{"two nodes of one name", func(s map[string]any) {
			s["nodes"] = []any{map[string]any{"name": "a", "image": "x:1"}, map[string]any{"name": "a", "image": "x:2"}}
		}, `spec.nodes[1]: Duplicate value: {"name":"a"}`},
		{"negative replicas", func(s map[string]any) {
			s["nodes"].([]any)[0].(map[string]any)["replicas"] = -1
		}, "spec.nodes[0].replicas: Invalid value: -1"},
		{"a probe of another host", func(s map[string]any) {
			s["nodes"].([]any)[0].(map[string]any)["readinessProbe"] = map[string]any{"httpGet": map[string]any{"host": "10.0.0.1", "port": 8080}}
		}, "readinessProbe must not set a host: the kubelet would connect from the node to wherever it names"},
		{"an untagged image", func(s map[string]any) {
			s["nodes"].([]any)[1].(map[string]any)["image"] = "registry:5000/krt-runner"
		}, `spec.nodes[1].image: Invalid value: "registry:5000/krt-runner": image must carry a tag or a digest`},
		{"no runtimeRef", func(s map[string]any) { delete(s, "runtimeRef") }, "spec.runtimeRef: Required value"},
		{"a workflow without nodes", func(s map[string]any) {
			s["workflows"] = []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{}}}
		}, "spec.workflows[0].sequential: Invalid value: 0: spec.workflows[0].sequential in body should have at least 1 items"},
		{"one entrypoint for two workflows", func(s map[string]any) {
			s["workflows"] = []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a"}},
				map[string]any{"name": "v", "entrypoint": "W", "sequential": []any{"b"}}}
		}, "each workflow needs its own entrypoint name"},
		{"a node in no workflow", func(s map[string]any) {
			s["workflows"] = []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a"}}}
		}, "spec.nodes: Invalid value: every node must be in exactly one workflow"},
		{"a config entry with value and secret", func(s map[string]any) {
			s["config"] = []any{map[string]any{"key": "K", "value": "v", "secretKeyRef": map[string]any{"name": "s", "key": "k"}}}
		}, "set exactly one of value and secretKeyRef"},
		{"an unknown state", func(s map[string]any) { s["state"] = "Paused" }, `Unsupported value: "Paused"`},
		{"a node named entrypoint", func(s map[string]any) {
			s["nodes"].([]any)[1].(map[string]any)["name"] = "entrypoint"
			s["workflows"] = []any{map[string]any{"name": "w", "entrypoint": "W", "sequential": []any{"a", "entrypoint"}}}
		}, `spec.nodes[1].name: Invalid value: "entrypoint": entrypoint is the entrypoint's own name: call the node something else`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := valid()
			tt.change(spec)
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1alpha1.GroupVersion.String(), "kind": "RuntimeVersion",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns}, "spec": spec,
			}}
			err := env.Client.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict))
			if tt.want == "" {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestAVersionNamesItsPodsThatCannotRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rv := &v1alpha1.RuntimeVersion{ObjectMeta: metav1.ObjectMeta{Name: "greeter-v1", Namespace: ns}}
	startSample(t, ns)
	greet := deploymentsOf(t, ns)["greet"]
	markAvailable(g, ns)

	// A rollout of the greet node whose new pod cannot pull its image: the Deployment's surge
	// pod, unready beside the ready one of the earlier spec. What the kubelet reports of it;
	// envtest runs no kubelet nor kube-controller-manager.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(greet), greet)).To(Succeed())
	greet.Status = appsv1.DeploymentStatus{ObservedGeneration: greet.Generation, Replicas: 2, ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
	g.Expect(env.Client.Status().Update(ctx, greet)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "greeter-v1-greet-abc", Namespace: ns, Labels: labels(rv, "greet")},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "greet", Image: "127.0.0.1:5000/quintet/krt-runner:v0.1.0"}}}}
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "greet", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}
	g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	// No watch wakes the version for its pod: a pass of a version whose Deployment has not
	// settled looks again within kreruntime.UnsettledRecheck, and reads its pods then.
	g.Eventually(func(g Gomega) {
		v := getVersion(g, ns)
		degraded := conditions.Get(v, conditions.DegradedCondition)
		g.Expect(degraded.Reason).To(Equal(conditions.ReasonPodsFailing))
		g.Expect(degraded.Message).To(Equal("pod greeter-v1-greet-abc: ImagePullBackOff: Back-off pulling image"))
		g.Expect(conditions.Get(v, conditions.ReadyCondition).Reason).To(Equal(conditions.ReasonPodsFailing))
	}, kreruntime.UnsettledRecheck+timeout, tick).Should(Succeed())

	// The rollout is undone: the pod goes, the Deployment settles.
	g.Expect(env.Client.Delete(ctx, pod)).To(Succeed())
	markAvailable(g, ns)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getVersion(g, ns), conditions.ReadyCondition)).To(BeTrue())
	}, timeout, tick).Should(Succeed())
}
