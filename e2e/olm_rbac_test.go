//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// csvServiceAccount is the service account the CSV's (only) deployment runs as.
func csvServiceAccount(csv *unstructured.Unstructured) string {
	deployments, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
	Expect(deployments).To(HaveLen(1))
	sa, _, _ := unstructured.NestedString(deployments[0].(map[string]any), "spec", "template", "spec", "serviceAccountName")
	Expect(sa).NotTo(BeEmpty())
	return sa
}

// impersonatingKubeconfig writes a copy of the admin kubeconfig whose user impersonates the
// service account: a process using it has exactly that account's permissions.
func impersonatingKubeconfig(namespace, serviceAccount string) string {
	config, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
	Expect(err).NotTo(HaveOccurred())
	for _, user := range config.AuthInfos {
		user.Impersonate = "system:serviceaccount:" + namespace + ":" + serviceAccount
	}
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*config, path)).To(Succeed())
	return path
}

// expectLeastPrivilege checks every role bound to the service account: no wildcard verb,
// resource or API group, and none of the built-in superuser roles. It reads Secrets only
// where ownSecrets says: kre-runtime keeps its runtimes' credentials in Secrets of its own
// namespace, minimart its Helm releases (Helm's storage); no operator reads Secrets anywhere else.
func expectLeastPrivilege(ctx context.Context, namespace, serviceAccount string, ownSecrets bool) {
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}
	var rules []rbacv1.PolicyRule
	bindings := &rbacv1.RoleBindingList{}
	Expect(k8sClient.List(ctx, bindings, client.InNamespace(namespace))).To(Succeed())
	clusterBindings := &rbacv1.ClusterRoleBindingList{}
	Expect(k8sClient.List(ctx, clusterBindings)).To(Succeed())
	refs := map[rbacv1.RoleRef]string{} // role -> namespace it is read from ("" for ClusterRoles)
	for _, b := range bindings.Items {
		if slices.Contains(b.Subjects, subject) {
			refs[b.RoleRef] = namespace
		}
	}
	for _, b := range clusterBindings.Items {
		if slices.Contains(b.Subjects, subject) {
			refs[b.RoleRef] = ""
		}
	}
	Expect(refs).NotTo(BeEmpty(), "OLM binds roles to %s", serviceAccount)
	roles := make([]string, 0, len(refs))
	for ref, ns := range refs {
		Expect([]string{"cluster-admin", "admin", "edit"}).NotTo(ContainElement(ref.Name), "bound to a built-in superuser role")
		roles = append(roles, ref.Kind+"/"+ref.Name)
		if ref.Kind == "ClusterRole" {
			role := &rbacv1.ClusterRole{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: ref.Name}, role)).To(Succeed())
			rules = append(rules, role.Rules...)
		} else {
			role := &rbacv1.Role{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, role)).To(Succeed())
			rules = append(rules, role.Rules...)
		}
	}
	GinkgoWriter.Printf("%s/%s is bound to %v\n", namespace, serviceAccount, roles)
	for _, r := range rules {
		for _, field := range [][]string{r.Verbs, r.Resources, r.APIGroups, r.NonResourceURLs} {
			Expect(field).NotTo(ContainElement("*"), "a wildcard in %+v", r)
		}
	}
	mayGetSecrets := func(in string) bool {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               "system:serviceaccount:" + namespace + ":" + serviceAccount,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: in, Verb: "get", Resource: "secrets"},
		}}
		Expect(k8sClient.Create(ctx, review)).To(Succeed())
		return review.Status.Allowed
	}
	Expect(mayGetSecrets(namespace)).To(Equal(ownSecrets), "reads the Secrets of its namespace: want %v", ownSecrets)
	Expect(mayGetSecrets("default")).To(BeFalse(), "no Quintet operator reads Secrets outside its namespace")
}

// expectCanI asks the API server, through the real kubectl, whether the service account may
// verb resource where the flags say (-n <namespace>, --all-namespaces), as the account itself
// (its user and groups), and expects the answer: kubectl auth can-i prints yes and exits 0, or
// prints no (perhaps with a reason) and exits 1.
func expectCanI(ctx context.Context, namespace, serviceAccount, verb, resource, answer string, where ...string) {
	args := append([]string{"auth", "can-i", verb, resource, "--as", "system:serviceaccount:" + namespace + ":" + serviceAccount,
		"--as-group", "system:serviceaccounts", "--as-group", "system:serviceaccounts:" + namespace}, where...)
	cmd := exec.CommandContext(ctx, requiredEnv("E2E_KUBECTL"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	exitCode := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		exitCode = exit.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred(), "kubectl %s", strings.Join(args, " "))
	}
	GinkgoWriter.Printf("kubectl auth can-i %s %s %s as %s: %s (exit %d)\n", verb, resource, strings.Join(where, " "), serviceAccount,
		strings.TrimSpace(string(out)), exitCode)
	wantExit := map[string]int{"yes": 0, "no": 1}[answer]
	Expect(strings.TrimSpace(string(out))).To(MatchRegexp("^"+answer+"($| - )"), "can-i %s %s %v; stderr: %s", verb, resource, where, stderr.String())
	Expect(exitCode).To(Equal(wantExit), "can-i %s %s %v: exit code", verb, resource, where)
}

var _ = Describe("An operator OLM installs OwnNamespace", func() {
	DescribeTable("may do its work in its own namespace and nowhere else",
		func(ctx SpecContext, operator, workload, kind string) {
			pkg := "quintet-" + operator
			ns := createNamespace(ctx, "olm-own-"+operator, nil)
			other := createNamespace(ctx, "olm-other-"+operator, nil)
			subscribe(ctx, ns, pkg, nil) // an OperatorGroup targeting ns alone
			csv := expectInstalled(ctx, ns, installedCSV(ctx, ns, pkg))
			sa := csvServiceAccount(csv)
			By(csv.GetName() + ": " + ns + "/" + sa + " may create " + workload + " and list " + kind + " in " + ns + ", not in " + other)
			for _, verbResource := range [][2]string{{"create", workload}, {"list", kind}} {
				expectCanI(ctx, ns, sa, verbResource[0], verbResource[1], "yes", "--namespace", ns)
				expectCanI(ctx, ns, sa, verbResource[0], verbResource[1], "no", "--namespace", other)
			}
			By("nor list pods across the cluster")
			expectCanI(ctx, ns, sa, "list", "pods", "no", "--all-namespaces")
		},
		Entry("gordon creates pods", "gordon", "pods", "gordons.operator.prgcont.cz"),
		Entry("etcd-cluster creates StatefulSets", "etcd-cluster", "statefulsets.apps", "etcdclusters.etcd.database.coreos.com"),
		Entry("kre-runtime creates StatefulSets", "kre-runtime", "statefulsets.apps", "runtimes.kre.konstellation.io"),
		Entry("ptemplate-device creates DaemonSets", "ptemplate-device", "daemonsets.apps", "ptemplates.ptemplates.pt.example.com"),
		Entry("minimart creates Deployments", "minimart", "deployments.apps", "minimarts.charts.samutup.com"),
	)
})

var _ = Describe("The RBAC OLM grants from a CSV", func() {
	DescribeTable("is enough for the manager, and no more",
		func(ctx SpecContext, operator, sample string, ownSecrets bool, reconciled func(ctx context.Context, sample *unstructured.Unstructured)) {
			pkg := "quintet-" + operator
			ns := createNamespace(ctx, "olm-rbac-"+operator, nil)
			subscribe(ctx, ns, pkg, nil)
			csv := expectInstalled(ctx, ns, installedCSV(ctx, ns, pkg))
			sa := csvServiceAccount(csv)
			expectLeastPrivilege(ctx, ns, sa, ownSecrets)

			By("running the manager locally as " + ns + "/" + sa + " (the one OLM deployed runs on a kwok node, so it does nothing)")
			log := runManager(operator, []string{"KUBECONFIG=" + impersonatingKubeconfig(ns, sa), "WATCH_NAMESPACE=" + ns})
			reconciled(ctx, applySample(ctx, operator, sample, ns))
			data, err := os.ReadFile(log)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(data)).NotTo(ContainSubstring("forbidden"), "the manager's log (%s) reports a denied request", log)
		},
		Entry("gordon", "gordon", "operator_v1_gordon.yaml", false, func(ctx context.Context, gordon *unstructured.Unstructured) {
			expectGordonRunning(ctx, gordon, 3)
		}),
		// etcd-cluster keeps the certificates of TLS clusters in Secrets, and reads users' static ones.
		Entry("etcd-cluster", "etcd-cluster", "etcd_v1beta2_etcdcluster.yaml", true, func(ctx context.Context, cluster *unstructured.Unstructured) {
			expectEtcdObjects(ctx, cluster.GetNamespace())
			expectMembersUnreachable(ctx, cluster.GetNamespace()) // its status is written; no etcd runs on kwok
		}),
		Entry("kre-runtime", "kre-runtime", "kre_v1alpha1_runtime.yaml", true, func(ctx context.Context, runtime *unstructured.Unstructured) {
			Eventually(func() string { return conditionStatus(ctx, runtime, "Ready") }).WithContext(ctx).Should(Equal("True"))
		}),
		Entry("ptemplate-device", "ptemplate-device", "ptemplates_v1alpha_ptemplate.yaml", false, func(ctx context.Context, pt *unstructured.Unstructured) {
			expectWaitingForKMM(ctx, pt) // either way it read, wrote and reported with the CSV's permissions
		}),
		Entry("minimart", "minimart", "charts_v1alpha1_minimart.yaml", true, func(ctx context.Context, minimart *unstructured.Unstructured) {
			// Helm installed the release: its storage, the Deployment and the Service.
			Eventually(func() string { return conditionStatus(ctx, minimart, "Ready") }).WithContext(ctx).Should(Equal("True"))
		}),
	)
})
