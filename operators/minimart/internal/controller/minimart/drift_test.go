package minimart

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const manifest = `---
# Source: minimart/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: shop
  labels: {app: shop}
spec:
  type: NodePort
  ports:
  - {name: http, port: 80, targetPort: http}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  replicas: 2
  template:
    metadata:
      creationTimestamp: null
    spec:
      containers:
      - name: minimart
        image: minimart-app:v1
        resources:
          requests: {cpu: 5m}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: shop
spec:
  podSelector:
    matchLabels: {app: shop}
  policyTypes: [Ingress, Egress]
  ingress:
  - ports:
    - {port: http, protocol: TCP}
`

// live are the manifest's objects as the API server returns them: defaults filled in, a
// node port picked, status.
func live() map[objectKey]client.Object {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"app": "shop", "extra": "x"}, ResourceVersion: "7"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{
			Name: "http", Port: 80, TargetPort: intstr.FromString("http"), NodePort: 31000, Protocol: corev1.ProtocolTCP,
		}}},
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Generation: 3},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "minimart", Image: "minimart-app:v1", ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5m")}}}},
			RestartPolicy: corev1.RestartPolicyAlways,
		}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2},
	}
	http := intstr.FromString("http")
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Generation: 1},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{
				Port: &http, Protocol: ptr.To(corev1.ProtocolTCP),
			}}}},
		},
	}
	return map[objectKey]client.Object{{"Service", "shop"}: svc, {"Deployment", "shop"}: d, {"NetworkPolicy", "shop"}: np}
}

func TestDrift(t *testing.T) {
	objects, err := manifestObjects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 3 {
		t.Fatalf("%d objects in the manifest, want 3", len(objects))
	}
	cases := []struct {
		name string
		edit func(map[objectKey]client.Object)
		want []objectKey
	}{
		{"as the release has them, with defaults", func(map[objectKey]client.Object) {}, nil},
		{"Service deleted", func(l map[objectKey]client.Object) { delete(l, objectKey{"Service", "shop"}) }, []objectKey{{"Service", "shop"}}},
		{"replicas edited", func(l map[objectKey]client.Object) {
			l[objectKey{"Deployment", "shop"}].(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](5)
		}, []objectKey{{"Deployment", "shop"}}},
		{"image edited", func(l map[objectKey]client.Object) {
			l[objectKey{"Deployment", "shop"}].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image = "other"
		}, []objectKey{{"Deployment", "shop"}}},
		{"a container added", func(l map[objectKey]client.Object) {
			d := l[objectKey{"Deployment", "shop"}].(*appsv1.Deployment)
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar"})
		}, []objectKey{{"Deployment", "shop"}}},
		{"a label removed", func(l map[objectKey]client.Object) {
			l[objectKey{"Service", "shop"}].(*corev1.Service).Labels = nil
		}, []objectKey{{"Service", "shop"}}},
		{"Service type changed", func(l map[objectKey]client.Object) {
			l[objectKey{"Service", "shop"}].(*corev1.Service).Spec.Type = corev1.ServiceTypeClusterIP
		}, []objectKey{{"Service", "shop"}}},
		{"NetworkPolicy deleted", func(l map[objectKey]client.Object) { delete(l, objectKey{"NetworkPolicy", "shop"}) }, []objectKey{{"NetworkPolicy", "shop"}}},
		{"a source added to the NetworkPolicy's rule: a field the chart does not set", func(l map[objectKey]client.Object) {
			np := l[objectKey{"NetworkPolicy", "shop"}].(*networkingv1.NetworkPolicy)
			np.Spec.Ingress[0].From = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}}}
		}, nil},
		{"a port added to the NetworkPolicy's rule", func(l map[objectKey]client.Object) {
			np := l[objectKey{"NetworkPolicy", "shop"}].(*networkingv1.NetworkPolicy)
			np.Spec.Ingress[0].Ports = append(np.Spec.Ingress[0].Ports, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(22))})
		}, []objectKey{{"NetworkPolicy", "shop"}}},
		{"the NetworkPolicy's Egress type removed", func(l map[objectKey]client.Object) {
			np := l[objectKey{"NetworkPolicy", "shop"}].(*networkingv1.NetworkPolicy)
			np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		}, []objectKey{{"NetworkPolicy", "shop"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := live()
			c.edit(l)
			got := drifted(objects, l)
			slices.SortFunc(got, func(a, b objectKey) int { return compareKeys(a, b) })
			if !slices.Equal(got, c.want) {
				t.Errorf("drifted = %v, want %v", got, c.want)
			}
		})
	}
}

func compareKeys(a, b objectKey) int {
	if a.String() < b.String() {
		return -1
	}
	if a.String() > b.String() {
		return 1
	}
	return 0
}
