//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// docBlock is the ```sh block that follows the comment `<!-- e2e: name -->` in the Markdown
// file page (from the repository root).
func docBlock(page, name string) string {
	data, err := os.ReadFile(filepath.Join(repoRoot, page))
	Expect(err).NotTo(HaveOccurred())
	re := regexp.MustCompile("(?s)<!-- e2e: " + regexp.QuoteMeta(name) + " -->\n```sh\n(.*?)```")
	m := re.FindSubmatch(data)
	Expect(m).NotTo(BeNil(), "%s has no ```sh block after <!-- e2e: %s -->", page, name)
	return string(m[1])
}

// runDocBlock runs a block of page in bash from the repository root, as a user pastes it into
// a terminal there, but stopping at the first command that fails; it returns what it printed.
func runDocBlock(ctx context.Context, page, name string) string {
	block := docBlock(page, name)
	By("running " + page + "'s block " + name + " as written:\n" + block)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = repoRoot
	cmd.Env = newUserEnv()
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s, block %s:\n%s", page, name, out)
	return string(out)
}

// The commands docs/getting-started.md gives for the local cluster, run as written.
var _ = Describe("docs/getting-started.md, run as written", func() {
	It("subscribes to quintet-gordon as the OLM section says: the CSV succeeds and the manager runs", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) { // the page's namespace, and with it what OLM made there
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gordon"}}))).To(Succeed())
		})
		out := runDocBlock(ctx, "docs/getting-started.md", "olm-subscribe")
		csv := "quintet-gordon.v" + operatorVersion("gordon")
		Expect(out).To(MatchRegexp(regexp.QuoteMeta(csv)+`\s.*Succeeded`), "the page names the channel head's CSV, and it succeeded")
		expectInstalled(ctx, "gordon", csv)
		deployments := &appsv1.DeploymentList{}
		Expect(k8sClient.List(ctx, deployments, client.InNamespace("gordon"))).To(Succeed())
		Expect(deployments.Items).To(ContainElement(HaveField("Name", "gordon-controller-manager")))
	})
})
