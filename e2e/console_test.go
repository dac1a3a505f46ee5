//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// consolePage drives the web console in headless Chromium as a person would.
type consolePage struct {
	ctx  context.Context
	base string // https://127.0.0.1:<port>
}

func openConsole(ctx context.Context, chromium, base string) *consolePage {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.WindowSize(1280, 1000))
	allocator, cancel := chromedp.NewExecAllocator(ctx, opts...)
	DeferCleanup(cancel)
	browser, cancel := chromedp.NewContext(allocator)
	DeferCleanup(cancel)
	return &consolePage{ctx: browser, base: base}
}

// do runs steps, each within a minute; when one fails, the page's screenshot is saved.
func (p *consolePage) do(steps ...chromedp.Action[chromedp.Void]) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		Fail(fmt.Sprintf("%v; the page then: %s", err, p.screenshot("console-failure.png")))
	}
}

// text is the text selector's element shows now ("" when there is none): read in one step,
// since the live pages replace their elements as the cluster changes.
func (p *consolePage) text(selector string) string {
	GinkgoHelper()
	return eval[string](p, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ''}).innerText`, selector))
}

// eval runs a script in the page and returns its value.
func eval[T any](p *consolePage, script string) T {
	GinkgoHelper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](script))
	Expect(err).NotTo(HaveOccurred())
	return v
}

// count is how many elements match selector now.
func (p *consolePage) count(selector string) int {
	return eval[int](p, fmt.Sprintf(`document.querySelectorAll(%q).length`, selector))
}

func (p *consolePage) screenshot(name string) string {
	GinkgoHelper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(logDir(), name)
	Expect(os.WriteFile(path, png, 0o644)).To(Succeed())
	return path
}

// field is the control of the form field at a schema path, e.g. spec.gordon.replicas.
func field(path string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-path=%q] > input, [data-path=%q] > select, [data-path=%q] > textarea`, path, path, path))
}

// setValue puts value in the control selector names as a person would, firing its input and
// change events.
func (p *consolePage) setValue(selector, value string) {
	GinkgoHelper()
	eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
		el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, selector, value))
}

// setField puts value in the form field at path.
func (p *consolePage) setField(path, value string) {
	GinkgoHelper()
	p.setValue(fmt.Sprintf(`[data-path=%q] > input`, path), value)
}

// load opens url as a new page (again if a network change aborted it) and waits until what
// selector names shows.
func (p *consolePage) load(url string, selector chromedp.CSS) {
	GinkgoHelper()
	navigate(p.ctx, url)
	p.do(chromedp.WaitVisible(selector))
}

// login opens the console at the address's root (which leads to it) and logs in with token.
func (p *consolePage) login(token string) {
	GinkgoHelper()
	p.load(p.base+"/", chromedp.CSS("#token"))
	p.do(chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("form.login button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(`#kinds a[data-kind]`)))
}

// open shows the page of an object.
func (p *consolePage) open(group, plural, namespace, name string) {
	GinkgoHelper()
	p.load(fmt.Sprintf("%s/console/?%s#/object/%s/%s/%s/%s", p.base, name, group, plural, namespace, name), chromedp.CSS(`#h-conditions`))
}

// dropNext makes the network drop the page's next request of method whose address contains
// part, as a network change would; window.dropped counts the requests dropped.
func (p *consolePage) dropNext(method, part string) {
	GinkgoHelper()
	eval[bool](p, fmt.Sprintf(`(() => { const send = window.fetch; window.dropped = 0;
		window.fetch = (url, init) => {
			if (!window.dropped && String(url).includes(%q) && ((init && init.method) || 'GET') === %q) {
				window.dropped++;
				return Promise.reject(new TypeError('Failed to fetch'));
			}
			return send(url, init);
		};
		return true; })()`, part, method))
}

// serveConsole runs operator's manager for namespace with its REST API and console on a
// loopback port, and opens the console in Chromium.
func serveConsole(ctx context.Context, chromium, operator, namespace string) *consolePage {
	return openConsole(ctx, chromium, "https://"+runManagerWithAPI(ctx, operator, namespace))
}

func fieldError(path string) string { return fmt.Sprintf(`[data-path=%q] > .field-error`, path) }

var _ = Describe("The web console in a real browser", func() {
	It("logs in with a token, creates and scales a Gordon with its forms, shows errors at the fields and nothing of a namespace the token may not read, and asks again for a token that stopped working", func(ctx SpecContext) {
		chromium := requireChromium()
		ns := createNamespace(ctx, "e2e-console", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		hidden := createNamespace(ctx, "e2e-console-hidden", nil)
		installCRDs("gordon")
		gordonRules := []rbacv1.PolicyRule{
			{APIGroups: []string{gordonGVK.Group}, Resources: []string{"gordons"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
		}
		token := serviceAccountToken(ctx, ns, "operator-user", gordonRules...)
		secret := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"gordon": map[string]any{"replicas": int64(0)}}}}
		secret.SetGroupVersionKind(gordonGVK)
		secret.SetNamespace(hidden)
		secret.SetName("not-yours")
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())

		page := serveConsole(ctx, chromium, "gordon", ns)

		By("logging in with the ServiceAccount's token at the address's root, which leads to the console")
		page.login(token)
		Expect(page.text("#user")).To(Equal("system:serviceaccount:" + ns + ":operator-user"))
		Expect(eval[string](page, `document.getElementById('namespace').value`)).To(Equal(ns),
			"a token that may not list namespaces starts in its ServiceAccount's own")

		By("opening the create form: every field has a label, and the keyboard reaches them in order")
		page.do(chromedp.Click(chromedp.CSS(`#kinds a[data-kind=Gordon]`)), chromedp.WaitVisible(chromedp.CSS(`a.button.primary`)),
			chromedp.Click(chromedp.CSS(`a.button.primary`)), chromedp.WaitVisible(field("spec.gordon.replicas")))
		unlabelled := eval[[]string](page, `[...document.querySelectorAll('main input, main select, main textarea')]
			.filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label')).map((el) => el.name || el.id)`)
		Expect(unlabelled).To(BeEmpty(), "every form control has a label")
		Expect(page.count("main input")).To(BeNumerically(">", 5))
		page.do(chromedp.Focus(field("metadata.name")), chromedp.KeyEvent("web"))
		var reached []string
		for range 40 {
			page.do(chromedp.KeyEvent("\t"))
			reached = append(reached, eval[string](page, `document.activeElement.name || document.activeElement.textContent`))
			if reached[len(reached)-1] == "spec.gordon.replicas" {
				break
			}
		}
		Expect(reached).To(ContainElements("metadata.namespace", "spec.gordon.image", "spec.gordon.replicas"), "Tab went through %v", reached)

		By("a value the schema refuses is shown at its field before anything is sent")
		page.do(chromedp.KeyEvent("5000"))
		Expect(page.text(fieldError("spec.gordon.replicas"))).To(Equal("Must be at most 1000."))
		page.do(chromedp.Click(chromedp.CSS(`form.editor button[type=submit]`)))
		Expect(page.text("#form-error")).To(Equal("Fix the field marked below."))

		By("a value only the API server refuses (a CEL rule) comes back at its field from the dry run")
		page.setField("spec.gordon.replicas", "2")
		page.setField("spec.gordon.image", "bad image")
		page.do(chromedp.Click(chromedp.CSS(`form.editor button[type=submit]`)))
		Eventually(func() string { return page.text(fieldError("spec.gordon.image")) }).WithContext(ctx).
			Should(ContainSubstring("image must not contain spaces"))
		Expect(page.text("#form-error")).To(ContainSubstring("The API server refused it"))
		gordon := &unstructured.Unstructured{}
		gordon.SetGroupVersionKind(gordonGVK)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, gordon)).NotTo(Succeed(), "the dry run stored nothing")

		By("creating it: the page shows the Gordon's pods as the operator makes them")
		page.setField("spec.gordon.image", "")
		page.do(chromedp.Click(chromedp.CSS(`form.editor button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#h-owned`)))
		Eventually(func() int { return page.count(`.tree li[data-kind=Pod]`) }).WithContext(ctx).Should(Equal(2))
		Eventually(func() string { return page.text(`tr[data-condition=Ready]`) }).WithContext(ctx).Should(ContainSubstring("True"))
		shot := page.screenshot("console-detail.png")
		By("the detail page's screenshot: " + shot)

		By("scaling it with the Scale button, pressed before an update of the Gordon reaches the page and released after: the click still counts")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, gordon)).To(Succeed())
		scale := eval[[]float64](page, `(() => { const b = document.querySelector('button[data-action=scale]'); b.scrollIntoView();
			document.querySelector('section[aria-labelledby=h-conditions] > div > *').dataset.before = 'update';
			const r = b.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
		page.do(chromedp.MouseEvent(chromedp.MousePressed, scale[0], scale[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))
		Expect(k8sClient.Patch(ctx, gordon, client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"e2e.quintet.dev/touched":"between a press and its release"}}}`)))).To(Succeed())
		Eventually(func() bool {
			return eval[bool](page, `!document.querySelector('section[aria-labelledby=h-conditions] [data-before]')`)
		}).
			WithContext(ctx).Should(BeTrue(), "the page showed the update")
		page.do(chromedp.MouseEvent(chromedp.MouseReleased, scale[0], scale[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))

		By("the change is shown before it is sent, and the pods follow")
		page.do(chromedp.WaitVisible(chromedp.CSS(`#action-value`)),
			chromedp.SetValue(chromedp.CSS(`#action-value`), "3"),
			chromedp.Evaluate[chromedp.Void](`void document.getElementById('action-value').dispatchEvent(new Event('input'))`))
		Expect(page.text(`pre.patch`)).To(MatchJSON(`{"spec":{"gordon":{"replicas":3}}}`))
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)))
		Eventually(func() int { return page.count(`.tree li[data-kind=Pod]`) }).WithContext(ctx).Should(Equal(3))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, gordon)).To(Succeed())
		replicas, _, _ := unstructured.NestedInt64(gordon.Object, "spec", "gordon", "replicas")
		Expect(replicas).To(BeEquivalentTo(3), "the Gordon as stored")

		By("the list follows the cluster: a change made elsewhere shows without a reload; a read the network dropped is sent again")
		page.dropNext("GET", "/gordons?")
		page.do(chromedp.Click(chromedp.CSS(`#kinds a[data-kind=Gordon]`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-name=web]`)))
		Expect(eval[int](page, `window.dropped`)).To(Equal(1), "the list's first read was dropped")
		desired := fmt.Sprintf(`tr[data-name=web] td:nth-child(%d)`, 1+eval[int](page,
			`[...document.querySelectorAll('table.objects th')].findIndex((th) => th.textContent === 'Desired')`))
		Expect(page.text(desired)).To(Equal("3"))
		changed := time.Now()
		Expect(k8sClient.Patch(ctx, gordon, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"gordon":{"replicas":1}}}`)))).To(Succeed())
		Eventually(func() string { return page.text(desired) }).WithContext(ctx).WithPolling(20 * time.Millisecond).Should(Equal("1"))
		latency := time.Since(changed)

		By("a namespace the token may not read shows why, and none of its objects")
		page.do(chromedp.SetValue(chromedp.CSS("#namespace"), hidden),
			chromedp.Evaluate[chromedp.Void](`void document.getElementById('namespace').dispatchEvent(new Event('change'))`))
		Eventually(func() string { return page.text("main") }).WithContext(ctx).
			Should(ContainSubstring("Your token may not list gordons in namespace " + hidden))
		Expect(page.text("main")).NotTo(ContainSubstring("not-yours"))
		Expect(page.count("table.objects tr[data-name]")).To(BeZero())

		By("the list with 100 Gordons: the time from opening it to all rows painted")
		for i := range 99 {
			g := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"gordon": map[string]any{"replicas": int64(0)}}}}
			g.SetGroupVersionKind(gordonGVK)
			g.SetNamespace(ns)
			g.SetName("many-" + strconv.Itoa(i))
			Expect(k8sClient.Create(ctx, g)).To(Succeed())
		}
		page.do(chromedp.SetValue(chromedp.CSS("#namespace"), ns),
			chromedp.Evaluate[chromedp.Void](`void document.getElementById('namespace').dispatchEvent(new Event('change'))`))
		opened := time.Now()
		page.load(page.base+"/console/?reload#/list/operator.prgcont.cz/gordons", chromedp.CSS("table.objects")) // a new page load
		Eventually(func() int { return page.count("table.objects tbody tr") }).WithContext(ctx).WithPolling(20 * time.Millisecond).Should(Equal(100))
		paint := time.Since(opened)
		shot = page.screenshot("console-list.png")
		By(fmt.Sprintf("figures: a change in the cluster reached the list in %s; the list of 100 Gordons painted in %s (screenshot %s)",
			latency.Round(time.Millisecond), paint.Round(time.Millisecond), shot))
		Expect(os.WriteFile(filepath.Join(logDir(), "console-figures.txt"), []byte(strings.Join([]string{
			"change-to-page " + latency.Round(time.Millisecond).String(),
			"list-of-100-painted " + paint.Round(time.Millisecond).String(), ""}, "\n")), 0o644)).To(Succeed())

		By("a token that stops working is asked for again over the page, and the half-filled form is kept and sent")
		page.load(page.base+"/console/?again#/new/operator.prgcont.cz/gordons", field("metadata.name"))
		page.setField("metadata.name", "after-login")
		second := serviceAccountToken(ctx, ns, "second-user", gordonRules...)
		Expect(k8sClient.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator-user"}})).To(Succeed())
		Eventually(func() (int, error) { // the API server keeps an accepted token's review for up to 10 s
			return chromedp.Run(page.ctx, chromedp.Evaluate[int](`fetch('/console/session').then((r) => r.status)`, chromedp.EvalAwaitPromise))
		}).WithContext(ctx).Should(Equal(401))
		page.do(chromedp.Click(chromedp.CSS(`form.editor button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`dialog.relogin textarea`)),
			chromedp.SendKeys(chromedp.CSS(`dialog.relogin textarea`), second), chromedp.Click(chromedp.CSS(`dialog.relogin button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#h-conditions`)))
		Expect(page.text("#user")).To(Equal("system:serviceaccount:" + ns + ":second-user"))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "after-login"}, gordon)).To(Succeed(), "the form was sent after the login")
	}, SpecTimeout(8*time.Minute))

	It("shows each kind's one-click actions before sending them: upgrade an EtcdCluster, back it up now, roll a Minimart back", func(ctx SpecContext) {
		chromium := requireChromium()
		ns := createNamespace(ctx, "e2e-console-actions", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		installCRDs("etcd-cluster")
		installCRDs("minimart")
		token := serviceAccountToken(ctx, ns, "operator-user",
			rbacv1.PolicyRule{APIGroups: []string{"etcd.database.coreos.com", "charts.samutup.com"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "pods", "services", "events"}, Verbs: []string{"get", "list", "watch"}},
			rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}})
		page := serveConsole(ctx, chromium, "minimart", ns)

		By("a Minimart at revision 2 of its release, after a change of its store's name")
		minimart := applySample(ctx, "minimart", "charts_v1alpha1_minimart.yaml", ns)
		revision := func(g Gomega) int64 {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(minimart), minimart)).To(Succeed())
			r, _, _ := unstructured.NestedInt64(minimart.Object, "status", "deployedRelease", "revision")
			return r
		}
		Eventually(revision).WithContext(ctx).Should(BeEquivalentTo(1))
		Expect(k8sClient.Patch(ctx, minimart, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"storeName":"Corner"}}`)))).To(Succeed())
		Eventually(revision).WithContext(ctx).Should(BeEquivalentTo(2))

		By("an EtcdCluster reporting that it runs 3.5.9 (no operator acts on it here: the console's part is the change), and its hourly EtcdBackup")
		cluster := readSample("etcd-cluster", "etcd_v1beta2_etcdcluster.yaml")
		cluster.SetNamespace(ns)
		Expect(unstructured.SetNestedField(cluster.Object, "3.5.9", "spec", "version")).To(Succeed())
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		Expect(k8sClient.Status().Patch(ctx, cluster, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"currentVersion":"3.5.9"}}`)))).To(Succeed())
		backup := applySample(ctx, "etcd-cluster", "etcd_v1beta2_etcdbackup.yaml", ns)

		page.login(token)
		By("the actions' rules, as the page computes them")
		checks, err := chromedp.Run(page.ctx, chromedp.Evaluate[string](`import('/console/actions.js').then((m) => JSON.stringify([
			m.etcdUpgradeProblem('3.5.9', '3.5.12'), m.etcdUpgradeProblem('3.5.9', '3.6.0'), m.etcdUpgradeProblem('3.6.1', '3.5.9'),
			m.etcdUpgradeProblem('3.5.9', '3.7.0'), m.etcdUpgradeProblem('3.5.9', 'v3.6.0'), m.etcdUpgradeProblem('', '3.4.0'),
			m.mergePatch({a: 1, b: {c: 1, d: 2}, f: [1]}, {b: {c: 1}, e: [1], f: [1]})]))`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(checks).To(MatchJSON(`["", "", "etcd cannot be downgraded from 3.6.1 to 3.5.9.",
			"etcd upgrades one minor version at a time: upgrade to 3.6.x first.", "A version such as 3.6.8, without a leading v.",
			"etcd 3.5.0 or later: the operator adds members as learners.", {"a": null, "b": {"d": null}, "e": [1]}]`))

		By("Upgrade refuses a move the operator does not make, before sending it, then sends one it does")
		page.open("etcd.database.coreos.com", "etcdclusters", ns, cluster.GetName())
		page.do(chromedp.Click(chromedp.CSS(`button[data-action=upgrade]`)), chromedp.WaitVisible(chromedp.CSS(`#action-value`)))
		page.setValue("#action-value", "3.7.0")
		Expect(page.text("#action-problem")).To(Equal("etcd upgrades one minor version at a time: upgrade to 3.6.x first."))
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)))
		Expect(page.text("dialog .field-error[role=alert]:not(#action-problem)")).To(ContainSubstring("one minor version at a time"))
		page.setValue("#action-value", "3.6.8")
		Expect(page.text("#action-problem")).To(BeEmpty())
		Expect(page.text("pre.patch")).To(MatchJSON(`{"spec":{"version":"3.6.8"}}`))
		By("a change the network dropped is not sent again by itself: the dialog says it may have been made, and Send sends it")
		page.dropNext("PATCH", "?fieldValidation=Strict") // the change itself, not its dry run
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)))
		Eventually(func() string { return page.text("dialog .field-error[role=alert]:not(#action-problem)") }).WithContext(ctx).
			Should(ContainSubstring("the change may have been made or not"))
		Expect(eval[int](page, `window.dropped`)).To(Equal(1))
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		Expect(cluster.Object["spec"]).To(HaveKeyWithValue("version", "3.6.8"))

		By("Back up now makes a one-shot copy of the hourly EtcdBackup, to a path of its own")
		page.open("etcd.database.coreos.com", "etcdbackups", ns, backup.GetName())
		page.do(chromedp.Click(chromedp.CSS(`button[data-action=backup-now]`)), chromedp.WaitVisible(chromedp.CSS(`pre.patch`)))
		Expect(page.text("pre.patch")).To(ContainSubstring(`"path": "etcd-backups/example-etcd-cluster_now_`))
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		copies := &unstructured.UnstructuredList{}
		copies.SetGroupVersionKind(schema.GroupVersionKind{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdBackupList"})
		Expect(k8sClient.List(ctx, copies, client.InNamespace(ns), client.MatchingLabels{"quintet.dev/backup-now-of": backup.GetName()})).To(Succeed())
		Expect(copies.Items).To(HaveLen(1))
		Expect(copies.Items[0].Object["spec"]).To(And(HaveKeyWithValue("clusterName", "example-etcd-cluster"), Not(HaveKey("backupPolicy"))))

		By("Roll back offers the release's earlier revision and sends the spec it was made from; the operator deploys it as revision 3")
		page.open("charts.samutup.com", "minimarts", ns, minimart.GetName())
		Eventually(func() int {
			return page.count(`.tree li[data-kind=Deployment] li[data-kind=ReplicaSet] li[data-kind=Pod]`)
		}).
			WithContext(ctx).Should(BeNumerically(">=", 1), "the release's Deployment (Helm labels it; it has no owner), its ReplicaSet and pod")
		Expect(page.count(`.tree > ul > li[data-kind=Service]`)).To(Equal(1), "the release's Service")
		page.do(chromedp.Click(chromedp.CSS(`button[data-action=rollback]`)), chromedp.WaitVisible(chromedp.CSS(`select#action-value`)))
		Expect(page.text(`select#action-value`)).To(HavePrefix("1: superseded"))
		Expect(page.text("pre.patch")).To(MatchJSON(`{"spec":{"storeName":"Minimart"}}`))
		shot := page.screenshot("console-rollback.png")
		By("the dialog's screenshot: " + shot)
		page.do(chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		Eventually(revision).WithContext(ctx).Should(BeEquivalentTo(3))
		Expect(minimart.Object["spec"]).To(HaveKeyWithValue("storeName", "Minimart"))
	}, SpecTimeout(8*time.Minute))
})
