// Package e2e holds Quintet's end-to-end suites. They run with ginkgo against a live
// cluster (the embedded local one unless KUBECONFIG says otherwise) and build only with the
// `e2e` tag: `make e2e`.
package e2e
