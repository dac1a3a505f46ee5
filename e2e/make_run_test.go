//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository's root, from the e2e module: where the README's commands run.
const repoRoot = ".."

// makeRun is `make run` started as a user starts it in a terminal: from the repository root,
// in a process group of its own (the terminal's foreground group), output in a log file.
type makeRun struct {
	cmd     *exec.Cmd
	log     string
	exited  chan struct{} // closed once make has exited and waitErr is set
	waitErr error         // cmd.Wait's answer: how make exited
}

// startMakeRun runs `make run OPERATOR=<operator> [ARGS=<args>]` with the environment of this
// suite (KUBECONFIG among it) plus env. It does not wait for the manager to start.
func startMakeRun(operator, args string, env ...string) *makeRun {
	By(fmt.Sprintf("running make run OPERATOR=%s ARGS=%q with %v", operator, args, env))
	logFile, err := os.CreateTemp(logDir(), "make-run-"+operator+"-*.log")
	Expect(err).NotTo(HaveOccurred())
	makeArgs := []string{"run", "OPERATOR=" + operator}
	if args != "" {
		makeArgs = append(makeArgs, "ARGS="+args)
	}
	cmd := exec.Command("make", makeArgs...)
	cmd.Dir = repoRoot
	cmd.Env = append(newUserEnv(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	r := &makeRun{cmd: cmd, log: logFile.Name(), exited: make(chan struct{})}
	go func() {
		r.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(r.exited)
	}()
	// When the spec fails before stop: the group goes, as after a Ctrl-C that did not work.
	DeferCleanup(func() {
		if r.interrupt(30 * time.Second) {
			return
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	})
	return r
}

// newUserEnv is this suite's environment without what the `make e2e` that runs it adds for its
// own sub-makes (flags, jobserver, level): `make run` starts as it does in a terminal.
func newUserEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR":
		default:
			env = append(env, kv)
		}
	}
	return env
}

// output is what make and the manager printed so far.
func (r *makeRun) output() string {
	data, err := os.ReadFile(r.log)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

func (r *makeRun) hasExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// waitForWorkers waits until the manager's controllers run, failing at once when make exits.
func (r *makeRun) waitForWorkers(ctx context.Context) {
	Eventually(func(g Gomega) {
		if r.hasExited() {
			StopTrying("make run exited: " + fmt.Sprint(r.waitErr) + "\n" + r.output()).Now()
		}
		g.Expect(r.output()).To(ContainSubstring("Starting workers"))
	}).WithContext(ctx).WithTimeout(5*time.Minute).Should(Succeed(), "the manager's controllers did not start (make builds it first)")
}

// interrupt sends SIGINT to the process group, as Ctrl-C in the terminal does, and reports
// whether make exited within grace.
func (r *makeRun) interrupt(grace time.Duration) bool {
	if !r.hasExited() {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
	}
	select {
	case <-r.exited:
		return true
	case <-time.After(grace):
		return false
	}
}

// stop is Ctrl-C, and expects a clean stop: make itself always dies of the SIGINT it is sent
// (GNU make re-raises it), but it reports a recipe that failed or was killed ("make: ***
// [...] Error 1" or "Interrupt"); the manager logs that it shut down and no error.
func (r *makeRun) stop() {
	By("stopping make run with SIGINT to its process group (Ctrl-C)")
	Expect(r.interrupt(30*time.Second)).To(BeTrue(), "make run did not stop within 30 s of SIGINT:\n%s", r.output())
	out := r.output()
	if r.waitErr != nil {
		var exit *exec.ExitError
		Expect(errors.As(r.waitErr, &exit)).To(BeTrue(), "%v", r.waitErr)
		status := exit.Sys().(syscall.WaitStatus)
		Expect(status.Signaled() && status.Signal() == syscall.SIGINT).To(BeTrue(), "make run ended with %v, not by the SIGINT it was sent:\n%s", r.waitErr, out)
	}
	Expect(out).NotTo(ContainSubstring("make: ***"), "make reports the manager failed or was killed")
	Expect(out).NotTo(ContainSubstring("The manager stopped with an error"))
	Expect(out).To(ContainSubstring("Wait completed, proceeding to shutdown the manager"), "the manager did not shut down gracefully")
}

// freeLocalPort is a TCP port nothing listens on at the moment, on 127.0.0.1.
func freeLocalPort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// renderKustomization is `kubectl kustomize dir` (a path from the repository root, or an
// absolute one), one object per document.
func renderKustomization(ctx context.Context, dir string) []*unstructured.Unstructured {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoRoot, dir)
	}
	kustomize := exec.CommandContext(ctx, requiredEnv("E2E_KUBECTL"), "kustomize", dir)
	var stderr strings.Builder
	kustomize.Stderr = &stderr
	out, err := kustomize.Output()
	Expect(err).NotTo(HaveOccurred(), stderr.String())
	var objects []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---\n") {
		u := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		if u.GetKind() != "" {
			objects = append(objects, u)
		}
	}
	return objects
}

// createDemoEtcdCluster creates in namespace the tutorial's EtcdCluster as make demo runs it
// on the real nodes (config/demo/etcd-real-node).
func createDemoEtcdCluster(ctx context.Context, namespace string) *unstructured.Unstructured {
	By("creating the tutorial's EtcdCluster as make demo runs it on the real nodes (config/demo/etcd-real-node)")
	var cluster *unstructured.Unstructured
	for _, o := range renderKustomization(ctx, "config/demo/etcd-real-node") {
		if o.GetKind() == "EtcdCluster" { // beside it, the EtcdBackup sample
			cluster = o
		}
	}
	Expect(cluster).NotTo(BeNil())
	cluster.SetNamespace(namespace)
	// The etcd image `make images` built, under the prefix this run's images carry.
	Expect(unstructured.SetNestedField(cluster.Object, requiredEnv("E2E_IMAGES")+"/etcd", "spec", "repository")).To(Succeed())
	Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
	return cluster
}

var _ = Describe("make run, as the README writes it", func() {
	It("runs gordon from this machine: the tutorial's Gordon gets 3 Running pods", func(ctx SpecContext) {
		ns := createNamespace(ctx, "e2e-make-run-gordon", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		installCRDs("gordon")
		// The in-cluster defaults (metrics :8443, probes :8081) would clash with whatever else on
		// this shared host holds them; a free probe port instead proves ARGS reaches the manager.
		probes := fmt.Sprintf("127.0.0.1:%d", freeLocalPort())
		run := startMakeRun("gordon", "--metrics-bind-address=0 --health-probe-bind-address="+probes, "WATCH_NAMESPACE="+ns)
		run.waitForWorkers(ctx)
		Eventually(func() (int, error) {
			code, _, err := httpGet(ctx, "http://"+probes+"/readyz")
			return code, err
		}).WithContext(ctx).Should(Equal(200), "the manager does not serve /readyz on the address ARGS gave it")

		gordon := applySample(ctx, "gordon", "operator_v1_gordon.yaml", ns)
		expectGordonRunning(ctx, gordon, 3)
		run.stop()
	}, SpecTimeout(8*time.Minute))

	It("runs etcd-cluster from this machine with the cluster's DNS: an EtcdCluster on the real nodes gets 3 real members", func(ctx SpecContext) {
		requireRealNode(ctx)
		ns := createNamespace(ctx, "e2e-make-run-etcd", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		installCRDs("etcd-cluster")
		// Exactly the README's command: in-cluster defaults, WATCH_NAMESPACE from the environment.
		run := startMakeRun("etcd-cluster", "", "WATCH_NAMESPACE="+ns)
		run.waitForWorkers(ctx)

		cluster := createDemoEtcdCluster(ctx, ns)

		// Ready needs the manager to reach every member by its DNS name (<pod>.<cluster>.<ns>.svc),
		// which only the cluster's DNS resolves.
		s := expectEtcdReady(ctx, cluster, 3, requiredEnv("E2E_ETCD_VERSION"))
		By(fmt.Sprintf("members %v, leader %s", s.memberIDs(), s.LeaderID))
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		for _, p := range pods.Items {
			Expect(p.Spec.NodeName).To(beARealNode(), p.Name)
		}
		Expect(run.output()).To(ContainSubstring("resolves names with the local cluster's DNS"), "make run did not give the manager the cluster's DNS")
		run.stop()
	}, SpecTimeout(10*time.Minute))
})
