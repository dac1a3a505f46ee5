//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// operatorDir is the folder of an operator module, from the e2e module.
func operatorDir(name string) string { return filepath.Join("..", "operators", name) }

// operators are the names of the workspace's operators (the folders under operators/).
func operators() []string {
	entries, err := os.ReadDir(filepath.Join("..", "operators"))
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// installCRDs installs an operator's CRDs, as `make install-<operator>` does, with
// server-side apply: specs on other ginkgo processes may apply the same CRDs at the same
// time, and the marks other owners (OLM, Helm) put on them stay.
func installCRDs(operator string) {
	By("installing the " + operator + " CRDs")
	ctx := context.Background()
	dir := filepath.Join(operatorDir(operator), "config", "crd", "bases")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty(), "no CRDs in %s", dir)
	for _, file := range files {
		data, err := os.ReadFile(file) //nolint:gosec // a file of the repository
		Expect(err).NotTo(HaveOccurred())
		crd := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal(data, &crd.Object)).To(Succeed())
		Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("quintet-e2e"), client.ForceOwnership)).
			To(Succeed(), file)
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			g.Expect(conditions).To(ContainElement(SatisfyAll(HaveKeyWithValue("type", "Established"), HaveKeyWithValue("status", "True"))),
				"CRD %s is not established", crd.GetName())
		}).Should(Succeed())
	}
}

// startOperator installs an operator's CRDs, builds its manager and runs it as a local
// process against the cluster until the suite ends, with its log in E2E_LOG_DIR. env is
// added to the manager's environment (e.g. WATCH_NAMESPACE).
func startOperator(name string, env []string, args ...string) {
	installCRDs(name)
	runManager(name, env, args...)
}

// runManager builds an operator's manager and runs it as a local process until the suite's
// node ends; it returns the path of its log (in E2E_LOG_DIR).
func runManager(name string, env []string, args ...string) string {
	m := startManager(buildManager(name), name, env, args...)
	DeferCleanup(m.stop)
	return m.log
}

// buildManager builds an operator's manager and returns the path of its binary.
func buildManager(name string) string {
	By("building the " + name + " manager")
	bin := filepath.Join(GinkgoT().TempDir(), name+"-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = operatorDir(name)
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return bin
}

// managerProcess is a manager running as a local process.
type managerProcess struct {
	cmd     *exec.Cmd
	log     string
	logFile *os.File
	done    chan struct{}
}

// operatorEnv is what an administrator of the local cluster gives each operator's manager,
// wherever it runs: etcd-cluster's backups may reach the local cluster's S3 store, which is
// inside the cluster (make s3-up).
var operatorEnv = map[string][]string{"etcd-cluster": {"BACKUP_S3_ENDPOINTS=s3.quintet-s3.svc"}}

// startManager runs the manager binary bin of operator name, with its log in E2E_LOG_DIR,
// until stopped or killed: the caller stops it (DeferCleanup(m.stop)). env is added to its
// environment (e.g. WATCH_NAMESPACE).
func startManager(bin, name string, env []string, args ...string) *managerProcess {
	By("starting the " + name + " manager")
	logFile, err := os.CreateTemp(logDir(), name+"-manager-*.log")
	Expect(err).NotTo(HaveOccurred())
	// Metrics and probes off: several managers share this host. One replica: no election.
	args = append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(append(os.Environ(), operatorEnv[name]...), env...)
	Expect(cmd.Start()).To(Succeed())
	m := &managerProcess{cmd: cmd, log: logFile.Name(), logFile: logFile, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(m.done) }()
	return m
}

// stop asks the manager to stop (SIGTERM), kills it after 10 s, and closes its log.
func (m *managerProcess) stop() {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
	_ = m.logFile.Close()
}

// kill stops the manager at once (SIGKILL), as a node failure or an OOM kill would.
func (m *managerProcess) kill() {
	Expect(m.cmd.Process.Kill()).To(Succeed())
	<-m.done
	_ = m.logFile.Close()
}

// logDir is where e2e writes the logs of the processes it starts.
func logDir() string {
	dir := os.Getenv("E2E_LOG_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	return dir
}

// applySample creates an operator's sample (a file under config/samples) in namespace.
func applySample(ctx context.Context, operator, file, namespace string) *unstructured.Unstructured {
	u := readSample(operator, file)
	u.SetNamespace(namespace)
	Expect(k8sClient.Create(ctx, u)).To(Succeed())
	return u
}

// readSample reads one of an operator's samples (config/samples/file).
func readSample(operator, file string) *unstructured.Unstructured {
	data, err := os.ReadFile(filepath.Join(operatorDir(operator), "config", "samples", file))
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
	return u
}

// conditionStatus returns the status of a condition of an unstructured object, or "".
func conditionStatus(ctx context.Context, u *unstructured.Unstructured, condType string) string {
	return conditionField(ctx, u, condType, "status")
}

// readyReason returns the reason of the Ready condition of an unstructured object, or "".
func readyReason(ctx context.Context, u *unstructured.Unstructured) string {
	return conditionField(ctx, u, "Ready", "reason")
}

// conditionField reads one field of a condition of an unstructured object, as it is now.
func conditionField(ctx context.Context, u *unstructured.Unstructured, condType, field string) string {
	got := u.DeepCopy()
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			s, _ := m[field].(string)
			return s
		}
	}
	return ""
}

// deployOperatorOnRealNode installs an operator as a platform team would, from its
// config/default (kustomize, through kubectl), with the manager image of its config (which
// `make images` built for the operator's version), in
// a namespace whose pods land on the real node, watching watchNamespace. The manager then runs
// in a pod: in-cluster configuration, cluster DNS, the RBAC of its config. Everything but the
// CRDs is removed when the suite's node ends.
func deployOperatorOnRealNode(ctx context.Context, name, watchNamespace string) {
	deployOperatorCopyOnRealNode(ctx, name, "", watchNamespace)
}

// deployOperatorCopyOnRealNode is deployOperatorOnRealNode for another copy of the operator,
// beside the first (suffix "" is the first): its namespace and its cluster-scoped objects
// are named with -suffix; the CRDs are shared. components are the operator's optional
// kustomize components (config/<component>) to turn on, as an overlay of config/default would.
func deployOperatorCopyOnRealNode(ctx context.Context, name, suffix, watchNamespace string, components ...string) {
	By(fmt.Sprintf("deploying %s from config/default %v on the real node (copy %q)", name, components, suffix))
	var applied []*unstructured.Unstructured
	for _, u := range renderKustomization(ctx, operatorOverlay(name, components...)) {
		switch u.GetKind() {
		case "Namespace":
			u.SetAnnotations(realNodeAnnotations())
		case "Deployment":
			setManagerContainer(u, watchNamespace)
		}
		if suffix != "" {
			renameCopy(u, "-"+suffix)
		}
		Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("quintet-e2e"), client.ForceOwnership)).
			To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		if u.GetKind() != "CustomResourceDefinition" {
			applied = append(applied, u)
		}
	}
	DeferCleanup(func(ctx SpecContext) {
		for i := len(applied) - 1; i >= 0; i-- {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, applied[i]))).To(Succeed())
		}
	})

	for _, u := range applied {
		if u.GetKind() != "Deployment" {
			continue
		}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
			available, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
			g.Expect(available).To(BeEquivalentTo(1), "manager %s/%s is not available", u.GetNamespace(), u.GetName())
		}).WithContext(ctx).Should(Succeed())
	}
}

// operatorOverlay is the operator's config/default, as an absolute path, or with components
// an overlay of it that turns them on (in a folder of the spec's own).
func operatorOverlay(name string, components ...string) string {
	base, err := filepath.Abs(filepath.Join(operatorDir(name), "config"))
	Expect(err).NotTo(HaveOccurred())
	if len(components) == 0 {
		return filepath.Join(base, "default")
	}
	overlay := GinkgoT().TempDir()
	rel, err := filepath.Rel(overlay, base)
	Expect(err).NotTo(HaveOccurred())
	kustomization := "resources:\n- " + filepath.Join(rel, "default") + "\ncomponents:\n"
	for _, c := range components {
		kustomization += "- " + filepath.Join(rel, c) + "\n"
	}
	Expect(os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644)).To(Succeed())
	return overlay
}

// renameCopy names an object of a copy of an operator's config/default: its namespace, and
// its name when it is cluster-scoped (but a CRD's), with suffix, and so what binds to them.
func renameCopy(u *unstructured.Unstructured, suffix string) {
	switch u.GetKind() {
	case "CustomResourceDefinition":
		return
	case "Namespace", "ClusterRole":
		u.SetName(u.GetName() + suffix)
	case "ClusterRoleBinding":
		u.SetName(u.GetName() + suffix)
		roleRef, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		Expect(unstructured.SetNestedField(u.Object, roleRef+suffix, "roleRef", "name")).To(Succeed())
	}
	if u.GetNamespace() != "" {
		u.SetNamespace(u.GetNamespace() + suffix)
	}
	subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
	for _, s := range subjects {
		if subject := s.(map[string]any); subject["namespace"] != nil {
			subject["namespace"] = subject["namespace"].(string) + suffix
		}
	}
	if subjects != nil {
		Expect(unstructured.SetNestedSlice(u.Object, subjects, "subjects")).To(Succeed())
	}
}

// setManagerContainer makes the manager container use its image as loaded (never pulled) and
// watch watchNamespace.
func setManagerContainer(deployment *unstructured.Unstructured, watchNamespace string) {
	containers, _, err := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	Expect(err).NotTo(HaveOccurred())
	for i := range containers {
		c := containers[i].(map[string]any)
		if c["name"] != "manager" {
			continue
		}
		c["imagePullPolicy"] = "Never"
		env, _ := c["env"].([]any)
		env = slices.DeleteFunc(env, func(e any) bool { return e.(map[string]any)["name"] == "WATCH_NAMESPACE" })
		env = append(env, map[string]any{"name": "WATCH_NAMESPACE", "value": watchNamespace})
		for _, e := range operatorEnv[strings.TrimSuffix(deployment.GetLabels()["app.kubernetes.io/name"], "-operator")] {
			name, value, _ := strings.Cut(e, "=")
			env = append(env, map[string]any{"name": name, "value": value})
		}
		c["env"] = env
	}
	Expect(unstructured.SetNestedSlice(deployment.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
}
