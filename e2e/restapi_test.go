//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// requireChromium returns the headless Chromium the browser specs drive (Debian's chromium,
// which `make node-packages` installs with the real node's packages). Without it the specs
// skip, saying why, unless REAL_NODE=required (CI), where the packages must be there: a
// failure, as requireRealNode makes it.
func requireChromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const why = "no chromium here: Debian's chromium package, which make node-packages installs as root, drives the browser specs"
	if os.Getenv("REAL_NODE") == "required" {
		Fail("REAL_NODE=required, but " + why)
	}
	Skip(why)
	return ""
}

// serviceAccountToken makes a ServiceAccount in namespace bound to a Role of rules and returns
// a token for it from the TokenRequest API, as `kubectl create token` gets one.
func serviceAccountToken(ctx context.Context, namespace, name string, rules ...rbacv1.PolicyRule) string {
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: rules},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
		},
	} {
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	tr, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// insecureClient talks to a manager's REST API, which serves a self-signed certificate by
// default (without --api-cert-dir).
var insecureClient = &http.Client{Timeout: 10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's self-signed certificate

// runManagerWithAPI runs operator's manager for namespace with its REST API and web console
// on a loopback port, and returns that address once it listens.
func runManagerWithAPI(ctx context.Context, operator, namespace string) string {
	addr := fmt.Sprintf("127.0.0.1:%d", freeLocalPort())
	runManager(operator, []string{"WATCH_NAMESPACE=" + namespace}, "--api-bind-address="+addr)
	Eventually(func() error {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err
	}).WithContext(ctx).Should(Succeed(), "the manager serves its REST API on %s", addr)
	return addr
}

// navigate loads url in the browser ctx holds. Chromium aborts a page load when the machine's
// network changes (net::ERR_NETWORK_CHANGED): other specs' pods come and go beside this one,
// each with its interfaces. The load is tried again, as a person would reload.
func navigate(ctx context.Context, url string) {
	GinkgoHelper()
	Eventually(func() error { return chromedp.Do(ctx, chromedp.Navigate(url)) }).
		WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "loading %s", url)
}

// swaggerUI drives Swagger UI's page in headless Chromium as a person would: Authorize with
// the token, open an operation, Try it out, fill in the namespace and the body, Execute. It
// returns the response code the page shows and a screenshot of the whole page.
func swaggerUI(ctx context.Context, chromium, docsURL, token, operation, namespace, body string) (string, []byte) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		// The manager's self-signed certificate (HTTPS is the API's default).
		chromedp.Flag("ignore-certificate-errors", true), chromedp.WindowSize(1280, 1600))
	allocator, cancel := chromedp.NewExecAllocator(ctx, opts...)
	defer cancel()
	browser, cancel := chromedp.NewContext(allocator)
	defer cancel()
	browser, cancel = context.WithTimeout(browser, 2*time.Minute)
	defer cancel()

	op := "#operations-" + operation
	css := func(selector string) chromedp.CSS { return chromedp.CSS(selector) }
	By("opening " + docsURL + ", authorizing with the token and trying " + operation)
	navigate(browser, docsURL)
	Expect(chromedp.Do(browser,
		chromedp.WaitVisible(css("button.btn.authorize")),
		chromedp.Click(css("button.btn.authorize")),
		chromedp.WaitVisible(css(".modal-ux input")),
		chromedp.SendKeys(css(".modal-ux input"), token),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper button.authorize")),
		chromedp.Click(css(".modal-ux .auth-btn-wrapper button.btn-done")),
		chromedp.Click(css(op+" .opblock-summary")),
		chromedp.Click(css(op+" button.try-out__btn")),
		chromedp.SendKeys(css(op+` tr[data-param-name="namespace"] input`), namespace),
	)).To(Succeed())
	// The body editor is a React textarea: set its value as typing would, then tell React.
	_, err := chromedp.Run(browser, chromedp.Evaluate[any](fmt.Sprintf(`(() => {
		const t = document.querySelector(%q);
		Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(t, %q);
		t.dispatchEvent(new Event("input", {bubbles: true}));
		return null;
	})()`, op+" textarea.body-param__text", body)))
	Expect(err).NotTo(HaveOccurred())
	status := op + " .live-responses-table tr.response .response-col_status"
	Expect(chromedp.Do(browser, chromedp.Click(css(op+" button.execute")), chromedp.WaitVisible(css(status)))).To(Succeed())
	code, err := chromedp.Run(browser, chromedp.Text(css(status)))
	Expect(err).NotTo(HaveOccurred())
	screenshot, err := chromedp.Run(browser, chromedp.FullScreenshot(100)) // 100: PNG
	Expect(err).NotTo(HaveOccurred())
	return code, screenshot
}

var _ = Describe("The REST API's Swagger UI in a real browser", func() {
	It("creates a Gordon through Try it out with a token given to Authorize, and the operator runs its pods", func(ctx SpecContext) {
		chromium := requireChromium()
		ns := createNamespace(ctx, "e2e-restapi", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		installCRDs("gordon")
		token := serviceAccountToken(ctx, ns, "portal", rbacv1.PolicyRule{APIGroups: []string{gordonGVK.Group},
			Resources: []string{"gordons"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
		addr := runManagerWithAPI(ctx, "gordon", ns)

		code, screenshot := swaggerUI(ctx, chromium, "https://"+addr+"/api/v1/docs/", token, "Gordon-createGordon", ns,
			`{"apiVersion":"operator.prgcont.cz/v1","kind":"Gordon","metadata":{"name":"from-swagger-ui"},"spec":{"gordon":{"replicas":2}}}`)
		shot := filepath.Join(logDir(), "restapi-swagger-ui.png")
		Expect(os.WriteFile(shot, screenshot, 0o644)).To(Succeed())
		By("the page shows " + code + "; its screenshot: " + shot)
		Expect(code).To(Equal("201"))

		By("kubectl sees the Gordon, and the operator runs its pods")
		out, err := exec.CommandContext(ctx, requiredEnv("E2E_KUBECTL"), "get", "gordon", "from-swagger-ui", "-n", ns).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		gordon := &unstructured.Unstructured{}
		gordon.SetGroupVersionKind(gordonGVK)
		gordon.SetNamespace(ns)
		gordon.SetName("from-swagger-ui")
		expectGordonRunning(ctx, gordon, 2)
	})
})
