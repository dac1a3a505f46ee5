package runtimeversion

import (
	"cmp"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/shared/pods"
)

// EntrypointComponent names the entrypoint among a version's components.
const EntrypointComponent = "entrypoint"

// entrypointHTTPPort is the port the entrypoint container serves `POST /predict` on.
const entrypointHTTPPort = 8080

// gpuResource is what a node with gpu: true asks for, one per replica.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// labels of a component of rv (the entrypoint or a node); they also select its pods.
func labels(rv *v1alpha1.RuntimeVersion, component string) map[string]string {
	return map[string]string{
		v1alpha1.VersionLabel:        rv.Name,
		v1alpha1.ComponentLabel:      component,
		"app.kubernetes.io/name":     component,
		"app.kubernetes.io/instance": rv.Name,
		"app.kubernetes.io/part-of":  "kre-runtime",
		kreruntime.ManagedByLabel:    kreruntime.ManagedBy,
	}
}

// deploymentName is the name of a component's Deployment.
func deploymentName(rv *v1alpha1.RuntimeVersion, component string) string {
	return rv.Name + "-" + component
}

// replicas is how many pods a component runs: none while the version is Stopped or waits for
// its Runtime's servers (waiting).
func replicas(rv *v1alpha1.RuntimeVersion, waiting bool, started int32) int32 {
	if rv.Spec.State == v1alpha1.StateStopped || waiting {
		return 0
	}
	return started
}

// entrypointDeployment serves rv's workflows over HTTP and hands requests to NATS.
func entrypointDeployment(rv *v1alpha1.RuntimeVersion, rt *v1alpha1.Runtime, waiting bool) *appsv1.Deployment {
	env := slices.Concat(runtimeEnv(rv, rt), []corev1.EnvVar{
		{Name: EnvNodeName, Value: EntrypointComponent},
		{Name: EnvEntrypoints, Value: entrypoints(rv)},
		{Name: "KRT_ENTRYPOINT_PROTO", Value: rv.Spec.Entrypoint.Proto},
	}, configEnv(rv))
	c := container(EntrypointComponent, rv.Spec.Entrypoint.Image, env)
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: entrypointHTTPPort, Protocol: corev1.ProtocolTCP}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3,
	}
	return deployment(rv, EntrypointComponent, replicas(rv, waiting, 1), c)
}

// nodeDeployment runs one node of rv, reading its workflow's input subject and writing the next.
func nodeDeployment(rv *v1alpha1.RuntimeVersion, rt *v1alpha1.Runtime, n v1alpha1.Node, wire nodeWiring, waiting bool) *appsv1.Deployment {
	env := slices.Concat(runtimeEnv(rv, rt), []corev1.EnvVar{
		{Name: EnvWorkflow, Value: wire.workflow},
		{Name: EnvNodeName, Value: n.Name},
		{Name: EnvNodeSrc, Value: n.Src},
		{Name: EnvNATSInput, Value: wire.input},
		{Name: EnvNATSOutput, Value: wire.output},
	}, configEnv(rv))
	c := container(n.Name, n.Image, env)
	c.ReadinessProbe = withProbeDefaults(n.ReadinessProbe)
	if n.GPU {
		one := resource.MustParse("1")
		c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuResource: one}, Requests: corev1.ResourceList{gpuResource: one}}
	}
	return deployment(rv, n.Name, replicas(rv, waiting, ptr.Deref(n.Replicas, 1)), c)
}

// withProbeDefaults is a copy of p with the numbers the API server would default, so that
// comparing the desired Deployment with the existing one sees no change.
func withProbeDefaults(p *corev1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	p = p.DeepCopy()
	p.TimeoutSeconds = cmp.Or(p.TimeoutSeconds, 1)
	p.PeriodSeconds = cmp.Or(p.PeriodSeconds, 10)
	p.SuccessThreshold = cmp.Or(p.SuccessThreshold, 1)
	p.FailureThreshold = cmp.Or(p.FailureThreshold, 3)
	if p.HTTPGet != nil {
		p.HTTPGet.Scheme = cmp.Or(p.HTTPGet.Scheme, corev1.URISchemeHTTP)
	}
	return p
}

// container is a component's container, meeting the restricted Pod Security level.
func container(name, image string, env []corev1.EnvVar) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Env: env,
		SecurityContext:          pods.RestrictedContainerSecurityContext(nil),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}

func deployment(rv *v1alpha1.RuntimeVersion, component string, replicas int32, c corev1.Container) *appsv1.Deployment {
	l := labels(rv, component)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName(rv, component), Namespace: rv.Namespace, Labels: l},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              pods.RestrictedPodSecurityContext(65532),
					Containers:                   []corev1.Container{c},
					NodeSelector:                 rv.Spec.Placement.NodeSelector,
					Tolerations:                  rv.Spec.Placement.Tolerations,
				},
			},
		},
	}
}

// entrypointService publishes the entrypoint inside the cluster, where the Runtime's
// Ingress routes to it.
func entrypointService(rv *v1alpha1.RuntimeVersion) *corev1.Service {
	l := labels(rv, EntrypointComponent)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kreruntime.EntrypointService(rv.Name), Namespace: rv.Namespace, Labels: l},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: l, Ports: []corev1.ServicePort{{
			Name: "http", Port: kreruntime.EntrypointPort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}},
	}
}
