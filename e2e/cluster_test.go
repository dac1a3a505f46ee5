//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// restrictedPodSpec is a pod spec that meets the `restricted` Pod Security level.
func restrictedPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.k8s.io/pause:3.10",
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

var _ = Describe("The local cluster", func() {
	It("serves the Kubernetes version the repository builds", func() {
		v, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(v.GitVersion).To(Equal("v1.36.3"))
	})

	It("has at least three Ready worker nodes", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			nodes := &corev1.NodeList{}
			g.Expect(k8sClient.List(ctx, nodes, client.HasLabels{"node-role.kubernetes.io/worker"})).To(Succeed())
			ready := 0
			for _, n := range nodes.Items {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			g.Expect(ready).To(BeNumerically(">=", 3))
		}).WithContext(ctx).Should(Succeed())
	})

	It("renews a Lease for every kwok node, so the node lifecycle controller keeps them Ready", func(ctx SpecContext) {
		nodes := &corev1.NodeList{}
		Expect(k8sClient.List(ctx, nodes, client.MatchingLabels{"quintet.dev/node": "kwok"})).To(Succeed())
		Expect(nodes.Items).NotTo(BeEmpty())
		for _, n := range nodes.Items {
			lease := &coordinationv1.Lease{}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: n.Name}, lease)).To(Succeed())
				g.Expect(lease.Spec.RenewTime).NotTo(BeNil())
				g.Expect(time.Since(lease.Spec.RenewTime.Time)).To(BeNumerically("<", 40*time.Second))
			}).WithContext(ctx).Should(Succeed(), "node %s has no fresh Lease", n.Name)
		}
	})

	It("runs a 3-replica Deployment to Available", func(ctx SpecContext) {
		ns := createNamespace(ctx, "e2e-deploy", nil)
		labels := map[string]string{"app": "e2e-deploy"}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-deploy", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       restrictedPodSpec(),
				},
			},
		}
		Expect(k8sClient.Create(ctx, dep)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.Status.AvailableReplicas).To(BeEquivalentTo(3))
		}).WithContext(ctx).Should(Succeed())

		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		for _, p := range pods.Items {
			Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			Expect(p.Spec.NodeName).NotTo(BeEmpty())
		}
	})

	It("runs a DaemonSet on every kwok node and a Job to completion", func(ctx SpecContext) {
		ns := createNamespace(ctx, "e2e-workloads", nil)
		labels := map[string]string{"app": "e2e-ds"}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-ds", Namespace: ns},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: restrictedPodSpec()},
			},
		}
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-job", Namespace: ns},
			Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: restrictedPodSpec()}},
		}
		job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		nodes := &corev1.NodeList{}
		Expect(k8sClient.List(ctx, nodes, client.MatchingLabels{"quintet.dev/node": "kwok"})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ds), ds)).To(Succeed())
			g.Expect(ds.Status.NumberReady).To(BeEquivalentTo(len(nodes.Items)))
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
			g.Expect(job.Status.Succeeded).To(BeEquivalentTo(1))
		}).WithContext(ctx).Should(Succeed())
	})

	It("rejects a pod that violates the restricted Pod Security level", func(ctx SpecContext) {
		ns := createNamespace(ctx, "e2e-restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})

		// Valid for the API server, but it runs as root if the image says so, may escalate
		// privileges, keeps all capabilities and has no seccomp profile.
		unconstrained := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "unconstrained", Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		err := k8sClient.Create(ctx, unconstrained)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`))
		Expect(err.Error()).To(ContainSubstring("runAsNonRoot != true"))

		compliant := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "compliant", Namespace: ns}, Spec: restrictedPodSpec()}
		Expect(k8sClient.Create(ctx, compliant)).To(Succeed())
	})
})
