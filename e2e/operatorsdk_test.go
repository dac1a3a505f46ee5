//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// operatorSDK runs operator-sdk against the local cluster. It pulls images from the local
// registry's HTTPS side, trusting its CA.
func operatorSDK(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, requiredEnv("E2E_OPERATOR_SDK"), args...)
	cmd.Env = append(os.Environ(), "HOME="+containersHome(), "SSL_CERT_FILE="+requiredEnv("E2E_REGISTRY_CA"))
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "operator-sdk %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// localScorecardConfig is the bundle's scorecard configuration with the test image built here
// (the bundle names operator-sdk's published one, for real clusters).
func localScorecardConfig(bundle string) string {
	data, err := os.ReadFile(filepath.Join(bundle, "tests", "scorecard", "config.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var config map[string]any
	Expect(yaml.Unmarshal(data, &config)).To(Succeed())
	stages := config["stages"].([]any)
	for _, stage := range stages {
		for _, test := range stage.(map[string]any)["tests"].([]any) {
			test.(map[string]any)["image"] = requiredEnv("E2E_SCORECARD_IMAGE")
		}
	}
	data, err = yaml.Marshal(config)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "config.yaml")
	Expect(os.WriteFile(path, data, 0o644)).To(Succeed())
	return path
}

var _ = Describe("operator-sdk against the local cluster", func() {
	BeforeEach(func(ctx SpecContext) { requireRealNode(ctx) })

	// Serial: operator-sdk installs gordon AllNamespaces, whose manager would act on every
	// other spec's Gordons, and whose OperatorGroup would clash with theirs.
	It("runs a bundle image with operator-sdk run bundle, and cleans it up", Serial, func(ctx SpecContext) {
		// operator-sdk checks the index image over HTTPS only (--use-http covers bundle pulls):
		// every image it names comes from the registry's HTTPS side, which the node trusts too.
		tls := func(image string) string {
			return strings.Replace(image, requiredEnv("E2E_IMAGES_REGISTRY"), requiredEnv("E2E_IMAGES_REGISTRY_TLS"), 1)
		}
		version := operatorVersion("gordon")
		// baseline: operator-sdk's own registry pod sets no security context (upstream).
		ns := realNodeNamespaceAt(ctx, "sdk-run-bundle", "baseline")
		out := operatorSDK(ctx, "run", "bundle", tls(requiredEnv("E2E_IMAGES_REGISTRY")+"/quintet-gordon-bundle:v"+version),
			"--namespace", ns, "--timeout", "4m", "--security-context-config", "restricted",
			"--index-image", tls(requiredEnv("E2E_OPM_INDEX_IMAGE")), "--decompression-image", tls(requiredEnv("E2E_BUSYBOX_IMAGE")))
		Expect(out).To(ContainSubstring(`OLM has successfully installed \"quintet-gordon.v` + version + `\"`))
		expectInstalled(ctx, ns, "quintet-gordon.v"+version)
		managerOnRealNode(ctx, ns)

		out = operatorSDK(ctx, "cleanup", "quintet-gordon", "--namespace", ns, "--timeout", "2m")
		Expect(out).To(ContainSubstring("uninstalled"))
	})

	It("scores every bundle with operator-sdk scorecard, its tests running as pods", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "sdk-scorecard")
		for _, operator := range operators() {
			bundle := filepath.Join("..", "bundles", operator, operatorVersion(operator))
			out := operatorSDK(ctx, "scorecard", bundle, "--namespace", ns, "--pod-security", "restricted",
				"--config", localScorecardConfig(bundle), "--untar-image", requiredEnv("E2E_BUSYBOX_IMAGE"), "--wait-time", "3m")
			GinkgoWriter.Println(out)
			Expect(strings.Count(out, "State: pass")).To(Equal(6), "%s: six tests pass", bundle)
			Expect(out).NotTo(ContainSubstring("State: fail"))
		}
	})
})
