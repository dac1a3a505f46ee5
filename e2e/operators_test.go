//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// operatorDir is the folder of an operator module, from the e2e module.
func operatorDir(name string) string { return filepath.Join("..", "operators", name) }

// startOperator installs an operator's CRDs, builds its manager and runs it as a local
// process against the cluster until the suite ends, with its log in E2E_LOG_DIR. env is
// added to the manager's environment (e.g. WATCH_NAMESPACE).
func startOperator(name string, env []string, args ...string) {
	By("installing the " + name + " CRDs")
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(operatorDir(name), "config", "crd", "bases")}, ErrorIfPathMissing: true,
	})
	Expect(err).NotTo(HaveOccurred())

	By("building and starting the " + name + " manager")
	bin := filepath.Join(GinkgoT().TempDir(), name+"-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = operatorDir(name)
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))

	logFile, err := os.CreateTemp(logDir(), name+"-manager-*.log")
	Expect(err).NotTo(HaveOccurred())
	// Metrics and probes off: several managers share this host. One replica: no election.
	args = append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = logFile.Close()
	})
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
	data, err := os.ReadFile(filepath.Join(operatorDir(operator), "config", "samples", file))
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(data, &u.Object)).To(Succeed())
	u.SetNamespace(namespace)
	Expect(k8sClient.Create(ctx, u)).To(Succeed())
	return u
}

// conditionStatus returns the status of a condition of an unstructured object, or "".
func conditionStatus(ctx context.Context, u *unstructured.Unstructured, condType string) string {
	got := u.DeepCopy()
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
