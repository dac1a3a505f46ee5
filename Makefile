# Quintet: five Kubernetes operators in one Go workspace.
# `make help` lists the targets. Everything the targets need is built into bin/ from pinned
# sources; nothing is downloaded but Go modules.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -o pipefail -ec
.DEFAULT_GOAL := help

ROOT  := $(CURDIR)
BIN   := $(ROOT)/bin
LOCAL := $(ROOT)/.local
export KUBECONFIG ?= $(LOCAL)/kubeconfig
# kwok nodes of the local cluster, 110 pods each.
CLUSTER_NODES ?= 3
# The real nodes (containerd + kubelet each): auto (when the machine can: root, Debian
# packages), required (CI: fail otherwise) or off; and how many (1 to 9).
REAL_NODE ?= auto
REAL_NODES ?= 3
# Every Go build is static unless it says otherwise (opm's sqlite needs cgo): binaries go into
# images as they are, and tests and images share one build cache.
export CGO_ENABLED := 0

## Versions and images ------------------------------------------------------------------
# Each operator has its own version (operators/<operator>/VERSION): its manager image's tag,
# its bundle's version and folder (bundles/<operator>/<version>/). Published bundles stay as
# they are; `make bundle` regenerates only the current one. Images are built from source
# without a container engine; the support images (pause, e2e agent) carry IMAGE_TAG.
IMAGE_TAG      ?= v0.1.0
IMAGE_REGISTRY ?= 127.0.0.1:5000
# The same registry over HTTPS, for clients that speak nothing else (operator-sdk run bundle).
IMAGE_REGISTRY_TLS ?= 127.0.0.1:5443
IMAGE_PREFIX    = $(IMAGE_REGISTRY)/quintet
image           = $(IMAGE_PREFIX)/$(1)
opversion       = $(strip $(file < operators/$(1)/VERSION))
manager_image   = $(call image,$(1)):v$(call opversion,$(1))
# More binaries in an operator's image, beside /manager: etcd-cluster's pods run etcd-snapshot
# (its restore and backup work, with etcd's server code the manager does not link).
MANAGER_IMAGE_EXTRA_etcd-cluster = ,$(STATIC_DIR)/etcd-snapshot:/etcd-snapshot
# OLM images: a bundle image per bundle version (<registry>/<package>-bundle:v<version>, the
# template opm renders catalog/ with), one catalog image of every package; and the images OLM's
# catalog operator runs bundle unpack Jobs and catalog pods with.
BUNDLE_IMAGE_TEMPLATE = $(IMAGE_REGISTRY)/{{.Package}}-bundle:v{{.Version}}
bundle_image    = $(subst {{.Version}},$(2),$(subst {{.Package}},quintet-$(1),$(BUNDLE_IMAGE_TEMPLATE)))
CATALOG_IMAGE  ?= $(IMAGE_REGISTRY)/quintet-catalog:latest
OPM_IMAGE       = $(call image,opm):$(OPM_VERSION)
OLM_UTIL_IMAGE  = $(call image,olm-util):$(OLM_VERSION)
# What operator-sdk runs in pods: run bundle's index image (opm and a shell, an empty catalog)
# and its decompression image, scorecard's untar image (busybox from Debian's busybox-static,
# a node package), scorecard's test image.
BUSYBOX            = /bin/busybox
BUSYBOX_IMAGE      = $(call image,busybox):debian-12
OPM_INDEX_IMAGE    = $(call image,opm-index):$(OPM_VERSION)
SCORECARD_IMAGE    = $(call image,scorecard-test):$(OPERATOR_SDK_VERSION)

## Modules ------------------------------------------------------------------------------
# One list drives every per-module target. A module's short name is its folder name;
# operators live under operators/.
OPERATORS := $(notdir $(patsubst %/,%,$(wildcard operators/*/)))
MODULES   := shared $(OPERATORS) e2e
moddir     = $(if $(filter shared e2e,$(1)),$(1),operators/$(1))
# Programs in hack/ are modules of their own, outside the workspace.
HACK_MODULES := hack/localcluster hack/images hack/bundle hack/catalog hack/docs hack/manifests hack/dashboards

## Pinned versions ----------------------------------------------------------------------
# modversion returns the version go.mod file $(2) requires of module $(1).
modversion = $(shell awk -v m=$(1) '{ for (i = 1; i < NF; i++) if ($$i == m) { print $$(i+1); exit } }' $(2))
KUBE_VERSION             := $(call modversion,k8s.io/kubernetes,hack/tools/kube/go.mod)
CONTROLLER_TOOLS_VERSION := v0.23.0
GOLANGCI_LINT_VERSION    := v2.15.0
KUBECONFORM_VERSION      := v0.8.0
KUBE_SCORE_VERSION       := v1.20.0
OPM_VERSION              := $(call modversion,github.com/operator-framework/operator-registry,hack/tools/opm/go.mod)
OPERATOR_SDK_VERSION     := $(call modversion,github.com/operator-framework/operator-sdk,hack/tools/operator-sdk/go.mod)
OLM_VERSION              := $(call modversion,github.com/operator-framework/operator-lifecycle-manager,hack/tools/olm/go.mod)
GRPC_HEALTH_PROBE_VERSION := $(call modversion,github.com/grpc-ecosystem/grpc-health-probe,hack/tools/grpc-health-probe/go.mod)
GINKGO_VERSION           := $(call modversion,github.com/onsi/ginkgo/v2,e2e/go.mod)
COREDNS_VERSION          := $(call modversion,github.com/coredns/coredns,hack/tools/coredns/go.mod)
ETCD_VERSION             := $(call modversion,go.etcd.io/etcd/server/v3,hack/tools/kube/go.mod)
# The etcd release before ETCD_VERSION: e2e upgrades an EtcdCluster from it.
ETCD_PREVIOUS_VERSION    := $(call modversion,go.etcd.io/etcd/server/v3,hack/tools/etcd-previous/go.mod)
HELM_VERSION             := $(call modversion,helm.sh/helm/v3,hack/tools/helm/go.mod)
CERT_MANAGER_VERSION     := $(call modversion,github.com/cert-manager/cert-manager,hack/tools/cert-manager/go.mod)
# Prometheus and promtool (Apache-2.0), and prometheus-operator with its config reloader:
# make prometheus-up runs them on the local cluster; make test-rules runs promtool.
PROMETHEUS_VERSION       := $(call modversion,github.com/prometheus/prometheus,hack/tools/prometheus/go.mod)
PROMETHEUS_OPERATOR_VERSION := $(call modversion,github.com/prometheus-operator/prometheus-operator,hack/tools/prometheus-operator/go.mod)
# The S3-compatible object store of the local cluster (make s3-up); Apache-2.0.
VERSITYGW_VERSION        := $(call modversion,github.com/versity/versitygw,hack/tools/versitygw/go.mod)
FERRETDB_VERSION         := $(call modversion,github.com/FerretDB/FerretDB,hack/tools/ferretdb/go.mod)
# The NATS server kre-runtime's message-flow e2e runs (its krt-runner's tests run it in process).
NATS_VERSION             := $(call modversion,github.com/nats-io/nats-server/v2,operators/kre-runtime/go.mod)

KUBE_BIN      := $(BIN)/k8s-$(KUBE_VERSION)
KUBECTL       := $(KUBE_BIN)/kubectl
LOCALCLUSTER  := $(BIN)/localcluster
CONTROLLER_GEN = $(BIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT  = $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBECONFORM    = $(BIN)/kubeconform-$(KUBECONFORM_VERSION)
KUBE_SCORE     = $(BIN)/kube-score-$(KUBE_SCORE_VERSION)
# The OpenAPI linters, npm packages pinned (package.json, package-lock.json) in hack/tools/openapi-lint.
npmversion     = $(shell awk -F'"' '$$2 == "$(1)" { print $$4 }' hack/tools/openapi-lint/package.json)
SPECTRAL_VERSION := $(call npmversion,@stoplight/spectral-cli)
REDOCLY_VERSION  := $(call npmversion,@redocly/cli)
OPENAPI_LINT   = $(BIN)/openapi-lint-spectral-$(SPECTRAL_VERSION)-redocly-$(REDOCLY_VERSION)
GINKGO         = $(BIN)/ginkgo-$(GINKGO_VERSION)
OPM            = $(BIN)/opm-$(OPM_VERSION)
HELM           = $(BIN)/helm-$(HELM_VERSION)
OLM_BIN        = $(BIN)/olm-$(OLM_VERSION)
CERT_MANAGER_BIN = $(BIN)/cert-manager-$(CERT_MANAGER_VERSION)
VERSITYGW      = $(BIN)/versitygw-$(VERSITYGW_VERSION)
FERRETDB       = $(BIN)/ferretdb-$(FERRETDB_VERSION)
PROMETHEUS_BIN = $(BIN)/prometheus-$(PROMETHEUS_VERSION)
PROMTOOL       = $(PROMETHEUS_BIN)/promtool
PROMETHEUS_OPERATOR_BIN = $(BIN)/prometheus-operator-$(PROMETHEUS_OPERATOR_VERSION)
GRPC_HEALTH_PROBE = $(BIN)/grpc_health_probe-$(GRPC_HEALTH_PROBE_VERSION)
OPERATOR_SDK   = $(BIN)/operator-sdk-$(OPERATOR_SDK_VERSION)
SCORECARD_TEST = $(BIN)/scorecard-test-$(OPERATOR_SDK_VERSION)
HELM_OPERATOR  = $(BIN)/helm-operator-$(OPERATOR_SDK_VERSION)
COREDNS        = $(BIN)/coredns-$(COREDNS_VERSION)
ETCD_PREVIOUS  = $(BIN)/etcd-$(ETCD_PREVIOUS_VERSION)
# The previous etcd-cluster release, built from the commit its bundle was made from (never the
# current manager relabelled): e2e upgrades a running cluster from it to the current release
# through OLM.
ETCD_CLUSTER_PREVIOUS_RELEASE = 0.2.0
ETCD_CLUSTER_PREVIOUS_COMMIT  = 0bad2249de937f725de2666981c4799b56287fad
ETCD_CLUSTER_PREVIOUS_MANAGER = $(BIN)/etcd-cluster-v$(ETCD_CLUSTER_PREVIOUS_RELEASE)/manager
IMAGES_TOOL    = $(BIN)/images
BUNDLE_TOOL    = $(BIN)/bundle
DOCS_TOOL      = $(BIN)/docs
MANIFESTS_TOOL = $(BIN)/manifests
CATALOG_TOOL   = $(BIN)/catalog
IMAGES_DIR     = $(BIN)/image-tarballs
STATIC_DIR     = $(BIN)/static
PAUSE_IMAGE    = $(call image,pause):$(IMAGE_TAG)
# kre-runtime's message flow: NATS (tagged as upstream's image) and our KRT node/entrypoint.
NATS_IMAGE       = $(call image,nats):$(NATS_VERSION:v%=%)
KRT_RUNNER_IMAGE = $(call image,krt-runner):$(IMAGE_TAG)
# The S3-compatible store, tagged as its release.
S3_IMAGE         = $(call image,versitygw):$(VERSITYGW_VERSION:v%=%)
# The monitoring stack of make prometheus-up. The Prometheus module's v0.3XX.Y is Prometheus
# v3.XX.Y, the tag its image carries.
PROMETHEUS_RELEASE  = v3.$(word 2,$(subst ., ,$(PROMETHEUS_VERSION:v0.3%=v0.%))).$(word 3,$(subst ., ,$(PROMETHEUS_VERSION)))
PROMETHEUS_IMAGE    = $(call image,prometheus):$(PROMETHEUS_RELEASE)
PROMETHEUS_OPERATOR_IMAGE = $(call image,prometheus-operator):$(PROMETHEUS_OPERATOR_VERSION)
PROMETHEUS_CONFIG_RELOADER_IMAGE = $(call image,prometheus-config-reloader):$(PROMETHEUS_OPERATOR_VERSION)
# kre-runtime's MongoDB and MinIO on the real node: FerretDB, and versitygw, each started from
# the upstream image's contract by an entrypoint of hack/images, tagged as their releases.
FERRETDB_IMAGE       = $(call image,ferretdb):$(FERRETDB_VERSION:v%=%)
VERSITYGW_MINIO_IMAGE = $(call image,versitygw-minio):$(VERSITYGW_VERSION:v%=%)
# minimart's store page, the container of its chart, tagged as the chart's appVersion.
MINIMART_CHART     = operators/minimart/helm-charts/minimart
MINIMART_APP_IMAGE = $(call image,minimart-app):v$(shell awk '/^appVersion:/ { gsub(/"/, "", $$2); print $$2 }' $(MINIMART_CHART)/Chart.yaml)
# envtest finds kube-apiserver and etcd here; no setup-envtest downloads.
export KUBEBUILDER_ASSETS := $(KUBE_BIN)
# etcd-cluster's backup tests store to a real S3 server on loopback; krt-runner's save to
# real FerretDB and versitygw servers on loopback.
export QUINTET_VERSITYGW := $(VERSITYGW)
export QUINTET_FERRETDB  := $(FERRETDB)

KUBE_COMMANDS := kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy
KUBE_LDFLAGS  := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitTreeState=clean
KWOK_STAGES   := node/fast node/heartbeat-with-lease pod/fast

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_0-9%-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Main

.PHONY: demo
demo: tools-test cluster-up ## Run every operator on the local cluster with its samples, and show them Ready.
	@OPERATORS="$(OPERATORS)" KUBECTL=$(KUBECTL) LOCALCLUSTER=$(LOCALCLUSTER) LOCAL=$(LOCAL) HELM=$(HELM) hack/demo.sh

.PHONY: test
test: tools-test verify lint bundle-validate chart-lint scorecard catalog-validate test-rules test-all e2e ## Everything CI runs: verify, lint, bundle, chart and catalog checks, alerting rules, unit + envtest, e2e.
	@hack/test-summary.sh $(LOCAL)/test-results

.PHONY: test-fast
test-fast: tools-test test-all ## Unit and envtest tests of every module, without e2e.
	@hack/test-summary.sh $(LOCAL)/test-results

##@ Development

.PHONY: test-all
# The modules' tests wait on API servers and real etcd members far more than they compute: they
# run TEST_JOBS modules at a time, etcd-cluster's (the longest, about 6 minutes) beside the rest.
TEST_JOBS ?= 2
test-all:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target \
	  $(addprefix test-,$(MODULES)) $(addprefix test-hack-,$(notdir $(HACK_MODULES)))

# -parallel 8: tests that wait on real etcd members (t.Parallel) wait together; on 2 cores
# the default of GOMAXPROCS would run them two at a time.
test-%: ## Unit + envtest tests of one module (test-shared, test-gordon, ...).
	@mkdir -p $(LOCAL)/test-results
	cd $(call moddir,$*) && go test -count=1 -parallel 8 -v ./... 2>&1 | tee $(LOCAL)/test-results/$*.log | $(ROOT)/hack/test-filter.sh

# localcluster's tests check the nftables guard with nft: install the node's packages first,
# as cluster-up would.
test-hack-localcluster: node-packages
.PHONY: node-packages
node-packages: $(LOCALCLUSTER)
	@$(LOCALCLUSTER) install-packages --real-node $(REAL_NODE)

# etcd-cluster's backup tests run versitygw.
test-etcd-cluster: $(VERSITYGW)

# hack/bundle's chart tests render the charts with the helm CLI.
test-hack-bundle: $(HELM)
test-hack-%:
	@mkdir -p $(LOCAL)/test-results
	cd hack/$* && HELM=$(HELM) GOWORK=off go test -count=1 -v ./... 2>&1 | tee $(LOCAL)/test-results/hack-$*.log | $(ROOT)/hack/test-filter.sh

.PHONY: lint
lint: $(addprefix lint-,$(MODULES)) $(addprefix lint-hack-,$(notdir $(HACK_MODULES))) lint-manifests lint-openapi ## Lint every module with the root .golangci.yml, every manifest we ship (lint-manifests) and every REST API document (lint-openapi).

lint-%: $(GOLANGCI_LINT) ## Lint one module.
	cd $(call moddir,$*) && $(GOLANGCI_LINT) run --config $(ROOT)/.golangci.yml --build-tags e2e,bench ./...

lint-hack-%: $(GOLANGCI_LINT)
	cd hack/$* && GOWORK=off $(GOLANGCI_LINT) run --config $(ROOT)/.golangci.yml ./...

# What a platform team's CI runs on what it installs (hack/lint-manifests.sh): kubeconform
# -strict against schemas written offline from Kubernetes' own OpenAPI document and our CRDs,
# and kube-score, warnings included, on config/default (with and without config/api), each
# chart with default values and every option on, the samples and minimart's store chart.
# Both must still fail on a manifest with known findings (hack/manifests/testdata).
KUBE_OPENAPI  = $(shell cd hack/tools/kube && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes)/api/openapi-spec/swagger.json
KUBE_SCHEMAS  = $(LOCAL)/kube-schemas-$(KUBE_VERSION)
LINT_MANIFESTS_ENV = KUBECTL=$(KUBECTL) HELM=$(HELM) KUBECONFORM=$(KUBECONFORM) KUBE_SCORE=$(KUBE_SCORE) \
  KUBE_VERSION=$(KUBE_VERSION) SCHEMAS=$(KUBE_SCHEMAS) OUT=$(LOCAL)/lint-manifests
.PHONY: lint-manifests kube-schemas
lint-manifests: $(addprefix lint-manifests-,$(OPERATORS)) ## kubeconform -strict and kube-score on every manifest we ship; both still catch known findings.
	@! $(KUBECONFORM) -strict -schema-location '$(KUBE_SCHEMAS)/{{ .ResourceKind }}{{ .KindSuffix }}.json' \
	  hack/manifests/testdata/known-findings.yaml >/dev/null || { echo "kubeconform passed hack/manifests/testdata/known-findings.yaml"; exit 1; }
	@! $(KUBE_SCORE) score --exit-one-on-warning hack/manifests/testdata/known-findings.yaml >/dev/null || \
	  { echo "kube-score passed hack/manifests/testdata/known-findings.yaml"; exit 1; }
	@echo "kubeconform and kube-score still fail hack/manifests/testdata/known-findings.yaml"
lint-manifests-%: kube-schemas $(KUBECONFORM) $(KUBE_SCORE) $(HELM) $(KUBE_BIN)/.built
	@$(LINT_MANIFESTS_ENV) hack/lint-manifests.sh $*
kube-schemas: $(MANIFESTS_TOOL) $(KUBE_BIN)/.built $(PROMETHEUS_OPERATOR_BIN)/.built
	@rm -rf $(KUBE_SCHEMAS) && $(MANIFESTS_TOOL) schemas --openapi $(KUBE_OPENAPI) --out $(KUBE_SCHEMAS) operators/*/config/crd/bases/*.yaml \
	  $(PROMETHEUS_OPERATOR_BIN)/crds/monitoring.coreos.com_servicemonitors.yaml $(PROMETHEUS_OPERATOR_BIN)/crds/monitoring.coreos.com_prometheusrules.yaml

# Each operator's alerting rules (config/prometheus): every alert has a severity, a summary, a
# description and a runbook on its page, and promtool tests in which it fires and stays silent;
# promtool checks the rules and runs the tests.
.PHONY: test-rules
test-rules: $(addprefix test-rules-,$(OPERATORS)) ## Check every operator's alerting rules and run their promtool tests.
test-rules-%: $(MANIFESTS_TOOL) $(PROMETHEUS_BIN)/.built
	@$(MANIFESTS_TOOL) rules --docs docs/operators/$*.md --tests operators/$*/config/prometheus/rules_test.yaml \
	  --out $(LOCAL)/rules/$* operators/$*/config/prometheus/prometheus_rule.yaml
	@$(PROMTOOL) check rules $(LOCAL)/rules/$*/rules.yaml
	@cd $(LOCAL)/rules/$* && $(PROMTOOL) test rules rules_test.yaml

# The OpenAPI document of each operator's REST API (docs/api/openapi, written by docs-api):
# Spectral (spectral:oas) and Redocly (recommended), findings of any severity fail; both must
# still find what hack/tools/openapi-lint/testdata/missing-description.json lacks.
.PHONY: lint-openapi
lint-openapi: $(OPENAPI_LINT)/.built ## Lint every committed REST API document (docs/api/openapi) with Spectral and Redocly: zero findings.
	@hack/tools/openapi-lint/lint.sh $(OPENAPI_LINT) docs/api/openapi/*.json

.PHONY: generate
generate: $(addprefix generate-,$(OPERATORS)) docs-api dashboards ## Regenerate deepcopy code, CRDs and RBAC of every operator, the API reference and the Grafana dashboards.

# go generate runs last: what an operator derives from its CRDs (minimart's values.schema.json).
# Each operator's Grafana dashboard (operators/<operator>/config/prometheus/dashboard.json),
# from Go with Grafana's foundation SDK (hack/dashboards).
.PHONY: dashboards
dashboards: ## Write every operator's Grafana dashboard from hack/dashboards.
	cd hack/dashboards && GOWORK=off go run . --root $(ROOT)

generate-%: $(CONTROLLER_GEN) ## Regenerate one operator's code, CRDs and RBAC.
	cd operators/$* && $(CONTROLLER_GEN) object:headerFile=$(ROOT)/hack/boilerplate.go.txt paths=./... \
	  && $(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths=./... output:crd:artifacts:config=config/crd/bases \
	  && go generate ./...

.PHONY: tidy
tidy: $(addprefix tidy-,$(MODULES)) $(addprefix tidy-hack-,$(notdir $(HACK_MODULES))) ## go mod tidy in every module.

# Outside the workspace, so each module's go.sum has what it needs to build alone.
tidy-%:
	cd $(call moddir,$*) && GOWORK=off go mod tidy

tidy-hack-%:
	cd hack/$* && GOWORK=off go mod tidy

.PHONY: fmt vet
fmt: ## gofmt every module.
	gofmt -l -w $(foreach m,$(MODULES),$(call moddir,$(m))) $(HACK_MODULES)
vet: ## go vet every module.
	$(foreach m,$(MODULES),(cd $(call moddir,$(m)) && go vet -tags e2e,bench ./...) &&) true

.PHONY: docs-api
docs-api: $(DOCS_TOOL) $(addprefix generate-,$(OPERATORS)) ## Write the API reference, docs/api/, from every operator's CRDs and API package, and the OpenAPI document each REST API serves.
	@$(DOCS_TOOL) api $(ROOT)
	@$(DOCS_TOOL) openapi $(ROOT)

.PHONY: docs-check
docs-check: $(DOCS_TOOL) ## Check the Markdown docs: relative links and their headings, `make` targets and repository paths in code spans.
	@$(DOCS_TOOL) check $(ROOT)

.PHONY: verify
verify: generate bundle charts catalog tidy fmt build-alone docs-check ## Regenerate everything (code, CRDs, RBAC, bundles, charts, catalog) and fail if that changed any file; check the docs.
	@if [ -n "$$(git status --porcelain)" ]; then \
	  git status --porcelain; git --no-pager diff --stat; \
	  echo "verify: generated files are out of date; run 'make generate tidy fmt' and commit the result"; exit 1; \
	fi

# Each operator module builds outside the workspace too (its replace of ../../shared).
.PHONY: build-alone
build-alone:
	$(foreach op,$(OPERATORS),(cd operators/$(op) && GOWORK=off go build ./...) &&) true

.PHONY: manifests build install uninstall deploy undeploy
manifests: generate ## CRDs and RBAC of every operator (controller-gen; same as generate).
build: $(addprefix build-,$(OPERATORS)) ## Build every manager into bin/<operator>-manager.
install: $(addprefix install-,$(OPERATORS)) ## Install every operator's CRDs into the KUBECONFIG cluster.
uninstall: $(addprefix uninstall-,$(OPERATORS)) ## Remove every operator's CRDs (and so their objects).
deploy: $(addprefix deploy-,$(OPERATORS)) ## Deploy every operator (config/default) to the KUBECONFIG cluster.
undeploy: $(addprefix undeploy-,$(OPERATORS)) ## Remove what deploy created.

build-%: ## Build one manager.
	cd operators/$* && go build -o $(BIN)/$*-manager ./cmd
install-%: $(KUBE_BIN)/.built
	$(KUBECTL) apply --server-side -k operators/$*/config/crd
uninstall-%: $(KUBE_BIN)/.built
	$(KUBECTL) delete --ignore-not-found -k operators/$*/config/crd
deploy-%: $(KUBE_BIN)/.built
	$(KUBECTL) apply --server-side -k operators/$*/config/default
undeploy-%: $(KUBE_BIN)/.built
	$(KUBECTL) delete --ignore-not-found -k operators/$*/config/default

# The manager runs in the foreground (Ctrl-C stops it), built first so that it is the process
# the terminal signals. Against the local cluster with its real node it resolves names with the
# cluster's DNS, in a mount namespace of its own (the host's resolver is untouched):
# etcd-cluster dials its members as <pod>.<cluster>.<namespace>.svc. Elsewhere it runs as it is.
.PHONY: run
run: $(LOCALCLUSTER) ## Run one manager locally: make run OPERATOR=<name> ARGS="--flag ...".
	@test -n "$(OPERATOR)" || { echo "set OPERATOR to one of: $(OPERATORS)"; exit 1; }
	@test -d operators/$(OPERATOR) || { echo "no operator $(OPERATOR); have: $(OPERATORS)"; exit 1; }
	cd operators/$(OPERATOR) && go build -o $(BIN)/$(OPERATOR)-manager ./cmd
	$(LOCALCLUSTER) exec --dir $(LOCAL) --cluster-dns -- $(BIN)/$(OPERATOR)-manager $(ARGS)

##@ OLM packaging

# Each operator's OLM package is quintet-<operator>; its bundle is generated into
# bundles/<operator>/ from operators/<operator>/config/manifests.
.PHONY: bundle bundle-validate
bundle: $(addprefix bundle-,$(OPERATORS)) ## Generate every operator's bundle (CSV, CRDs, RBAC, metadata, scorecard config).
bundle-validate: $(addprefix bundle-validate-,$(OPERATORS)) ## operator-sdk bundle validate, operatorframework suite: no error, no warning.

## Helm charts: operators/<operator>/dist/chart, generated from the same config as the bundle.
.PHONY: charts chart-lint
charts: $(addprefix chart-,$(OPERATORS)) ## Generate every operator's Helm chart.
chart-lint: $(addprefix chart-lint-,$(OPERATORS)) ## helm lint --strict and helm template of every chart, default values.

chart-%: $(BUNDLE_TOOL) ## Generate one operator's Helm chart (operators/<operator>/dist/chart).
	$(BUNDLE_TOOL) chart --config operators/$*/config/manifests --name $* --version $(call opversion,$*) \
	  --repository $(call image,$*) --out operators/$*/dist/chart

chart-lint-%: $(HELM)
	$(HELM) lint --strict operators/$*/dist/chart
	$(HELM) template $* operators/$*/dist/chart --namespace $*-system >/dev/null

# Chart packages (<operator>-<version>.tgz) in CHARTS_DIR; helm-push puts them in the registry as
# OCI artifacts, oci://IMAGE_REGISTRY/quintet/charts/<operator>. The local registry speaks plain
# HTTP, hence HELM_REGISTRY_FLAGS for helm push and install (empty for a registry with TLS).
CHARTS_DIR           = $(LOCAL)/charts
CHART_REPO           = oci://$(IMAGE_PREFIX)/charts
HELM_REGISTRY_FLAGS ?= --plain-http
.PHONY: helm-package helm-push
helm-package: $(addprefix helm-package-,$(OPERATORS)) ## Package every chart into .local/charts (<operator>-<version>.tgz).
helm-push: $(addprefix helm-push-,$(OPERATORS)) ## Push every chart package to oci://IMAGE_REGISTRY/quintet/charts.

helm-package-%: $(HELM)
	$(HELM) package operators/$*/dist/chart --destination $(CHARTS_DIR)

helm-push-%: helm-package-% registry-up
	$(HELM) push $(CHARTS_DIR)/$*-$(call opversion,$*).tgz $(CHART_REPO) $(HELM_REGISTRY_FLAGS)

bundle-%: $(BUNDLE_TOOL) ## Generate one operator's bundle, of its current version.
	$(BUNDLE_TOOL) --config operators/$*/config/manifests --package quintet-$* --version $(call opversion,$*) \
	  --image $(call manager_image,$*) --release config/catalog/quintet-$*.yaml --out bundles/$*/$(call opversion,$*)

# Every published version of the operator. The suite is operatorhubv2, capabilities,
# categories, alpha-deprecated-apis and good-practices; any message (a warning too) fails.
bundle-validate-%: $(OPERATOR_SDK)
	@for b in bundles/$*/*/; do b=$${b%/}; \
	  out=$$($(OPERATOR_SDK) bundle validate $$b --select-optional suite=operatorframework \
	    --optional-values=k8s-version=$(KUBE_VERSION:v%=%) -o json-alpha1 2>/dev/null) || { echo "$$out"; exit 1; }; \
	  if ! grep -q '"outputs": null' <<<"$$out"; then echo "$$out"; echo "bundle-validate: $$b has findings"; exit 1; fi; \
	  echo "$$b: operator-sdk bundle validate (operatorframework suite): passed, no errors, no warnings"; \
	done

# The catalog: one package per operator, rendered offline from config/catalog/<package>.yaml
# and the bundle directories, bundle images named by BUNDLE_IMAGE_TEMPLATE.
.PHONY: catalog catalog-validate
catalog: $(CATALOG_TOOL) $(OPM) ## Render the file-based catalog (catalog/) from config/catalog and bundles/.
	$(CATALOG_TOOL) --opm $(OPM) --templates config/catalog --bundles bundles --out catalog \
	  --image-ref-template '$(BUNDLE_IMAGE_TEMPLATE)'
catalog-validate: $(OPM) ## opm validate catalog.
	$(OPM) validate catalog && echo "catalog: opm validate passed"

.PHONY: scorecard
scorecard: $(addprefix scorecard-,$(OPERATORS)) ## The scorecard tests of every bundle (the six built-in static checks).
scorecard-%: $(SCORECARD_TEST)
	@for b in bundles/$*/*/; do SCORECARD_TEST=$(SCORECARD_TEST) hack/scorecard.sh $${b%/}; done

##@ OLM images and registry

# Images are tarballs in bin/ (written by bin/images, no container engine) until pushed.
OLM_IMAGES_DIR = $(BIN)/image-tarballs/olm
REGISTRY_DIR   = $(LOCAL)/registry
REGISTRY_CA    = $(REGISTRY_DIR)/tls/ca.crt
# bundles/<operator>/<version>/ -> the image reference of that bundle.
BUNDLE_DIRS      = $(patsubst %/metadata,%,$(wildcard bundles/*/*/metadata))
bundle_dir_image = $(call bundle_image,$(word 2,$(subst /, ,$(1))),$(word 3,$(subst /, ,$(1))))

.PHONY: registry-up registry-down docker-build docker-push bundle-build bundle-push catalog-build catalog-push
registry-up: $(IMAGES_TOOL) $(LOCALCLUSTER) ## Start the image registry on IMAGE_REGISTRY, and IMAGE_REGISTRY_TLS (loopback; blobs in .local/registry, manifests in memory).
	@if curl -sf http://$(IMAGE_REGISTRY)/v2/ >/dev/null; then echo "registry: $(IMAGE_REGISTRY) is up"; else \
	  $(LOCALCLUSTER) start --dir $(REGISTRY_DIR) --name registry -- \
	    $(IMAGES_TOOL) registry --addr $(IMAGE_REGISTRY) --dir $(REGISTRY_DIR)/blobs \
	      --tls-addr $(IMAGE_REGISTRY_TLS) --tls-dir $(dir $(REGISTRY_CA)) && \
	  curl -sf --retry 20 --retry-connrefused --retry-delay 1 http://$(IMAGE_REGISTRY)/v2/ >/dev/null; fi
registry-down: $(LOCALCLUSTER) ## Stop the image registry (its content goes with it; its CA stays).
	$(LOCALCLUSTER) stop --dir $(REGISTRY_DIR) --name registry
	rm -rf $(REGISTRY_DIR)/blobs

docker-build: images ## Build every image: managers (tagged with their operator's version), etcd, pause, e2e agent, OLM's and operator-sdk's.
docker-push: registry-up ## Push the images docker-build (or cluster-up) built to IMAGE_REGISTRY.
	$(IMAGES_TOOL) push $(IMAGES_DIR)/*.tar

bundle-build: $(IMAGES_TOOL) ## Build the bundle image of every bundle version (what each bundle.Dockerfile describes).
	@rm -rf $(OLM_IMAGES_DIR)/bundles
	$(IMAGES_TOOL) bundle --out $(OLM_IMAGES_DIR)/bundles $(foreach d,$(BUNDLE_DIRS),$(call bundle_dir_image,$(d))=$(d))
bundle-push: bundle-build registry-up ## Push the bundle images to IMAGE_REGISTRY.
	$(IMAGES_TOOL) push $(OLM_IMAGES_DIR)/bundles/*.tar

catalog-build: $(IMAGES_TOOL) $(OPM) $(GRPC_HEALTH_PROBE) ## Build the catalog image CATALOG_IMAGE: opm serving catalog/ at /configs.
	@rm -rf $(OLM_IMAGES_DIR)/catalog
	$(IMAGES_TOOL) catalog --out $(OLM_IMAGES_DIR)/catalog --opm $(OPM) --health-probe $(GRPC_HEALTH_PROBE) $(CATALOG_IMAGE)=catalog
catalog-push: catalog-build registry-up ## Push the catalog image to IMAGE_REGISTRY.
	$(IMAGES_TOOL) push $(OLM_IMAGES_DIR)/catalog/*.tar

##@ OLM on the local cluster

OLM_ENV = KUBECTL=$(KUBECTL) LOCALCLUSTER=$(LOCALCLUSTER) LOCAL=$(LOCAL) OLM_BIN=$(OLM_BIN) OPM=$(OPM) \
	OPM_IMAGE=$(OPM_IMAGE) OLM_UTIL_IMAGE=$(OLM_UTIL_IMAGE)

.PHONY: olm-up cert-manager-up s3-up prometheus-up run-bundle
olm-up: $(OLM_BIN)/.built $(LOCALCLUSTER) $(CATALOG_TOOL) $(OPM) ## Install OLM v0 into the local cluster (started when not running) and serve catalog/ as CatalogSource olm/quintet.
	@$(LOCALCLUSTER) status --dir $(LOCAL) >/dev/null 2>&1 || $(MAKE) --no-print-directory cluster-up
	@$(OLM_ENV) hack/olm.sh up
	@$(CATALOG_TOOL) --opm $(OPM) --templates config/catalog --bundles bundles --out $(LOCAL)/olm/catalog \
	  --image-ref-template '$(BUNDLE_IMAGE_TEMPLATE)' --inline
	@$(OLM_ENV) hack/olm.sh serve quintet $(LOCAL)/olm/catalog 50051

cert-manager-up: $(CERT_MANAGER_BIN)/.built $(LOCALCLUSTER) ## Install cert-manager into the local cluster (started when not running): its CRDs, and its controllers as a local process.
	@$(LOCALCLUSTER) status --dir $(LOCAL) >/dev/null 2>&1 || $(MAKE) --no-print-directory cluster-up
	@$(KUBECTL) apply --server-side -f $(CERT_MANAGER_BIN)/crds >/dev/null
	@$(KUBECTL) wait --for condition=Established --timeout=60s -f $(CERT_MANAGER_BIN)/crds >/dev/null
	@$(KUBECTL) create namespace cert-manager --dry-run=client -o yaml | $(KUBECTL) apply -f - >/dev/null
	@$(LOCALCLUSTER) start --dir $(LOCAL) --name cert-manager -- $(CERT_MANAGER_BIN)/cert-manager --kubeconfig=$(KUBECONFIG) --enable-certificate-owner-ref
	@echo "cert-manager $(CERT_MANAGER_VERSION) is running (log: $(LOCAL)/logs/cert-manager.log)"

s3-up: $(KUBE_BIN)/.built $(LOCALCLUSTER) ## Run the S3-compatible store (versitygw, config/s3store) on the local cluster's real node: s3.quintet-s3.svc:9000, root credentials in Secret quintet-s3/versitygw-root; bucket etcd-backups.
	@$(LOCALCLUSTER) status --dir $(LOCAL) >/dev/null 2>&1 || $(MAKE) --no-print-directory cluster-up
	@$(KUBECTL) apply -f config/s3store/namespace.yaml >/dev/null
	@$(KUBECTL) -n quintet-s3 get secret versitygw-root >/dev/null 2>&1 || $(KUBECTL) -n quintet-s3 create secret generic versitygw-root \
	  --from-literal=access-key=quintet-$$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n') \
	  --from-literal=secret-key=$$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n') >/dev/null
	@$(KUBECTL) kustomize config/s3store | sed 's|image: versitygw$$|image: $(S3_IMAGE)|' | $(KUBECTL) apply -f - >/dev/null
	@KUBECTL=$(KUBECTL) hack/s3.sh wait
	@KUBECTL=$(KUBECTL) hack/s3.sh bucket etcd-backups || { $(KUBECTL) -n quintet-s3 get pods,services,endpointslices -o wide; exit 1; }

# The monitoring stack's images are built apart from `make images`: only prometheus-up needs them.
MONITORING_IMAGES_DIR = $(BIN)/image-tarballs-monitoring

prometheus-up: $(PROMETHEUS_BIN)/.built $(PROMETHEUS_OPERATOR_BIN)/.built $(IMAGES_TOOL) $(LOCALCLUSTER) ## Run prometheus-operator and a Prometheus (config/monitoring) on the local cluster's real node, built from source: they consume every ServiceMonitor and PrometheusRule.
	@$(LOCALCLUSTER) status --dir $(LOCAL) >/dev/null 2>&1 || $(MAKE) --no-print-directory cluster-up
	@$(IMAGES_TOOL) build --out $(MONITORING_IMAGES_DIR) $(PROMETHEUS_IMAGE)=$(PROMETHEUS_BIN)/prometheus:/bin/prometheus \
	  $(PROMETHEUS_OPERATOR_IMAGE)=$(PROMETHEUS_OPERATOR_BIN)/operator:/bin/operator \
	  $(PROMETHEUS_CONFIG_RELOADER_IMAGE)=$(PROMETHEUS_OPERATOR_BIN)/prometheus-config-reloader:/bin/prometheus-config-reloader >/dev/null
	@$(LOCALCLUSTER) load-images --dir $(LOCAL) --images $(MONITORING_IMAGES_DIR)
	@$(KUBECTL) apply --server-side -f $(PROMETHEUS_OPERATOR_BIN)/crds >/dev/null
	@$(KUBECTL) wait --for condition=Established --timeout=60s -f $(PROMETHEUS_OPERATOR_BIN)/crds >/dev/null
	@$(KUBECTL) kustomize config/monitoring | sed -e 's|image: prometheus-operator$$|image: $(PROMETHEUS_OPERATOR_IMAGE)|' \
	  -e 's|image: prometheus$$|image: $(PROMETHEUS_IMAGE)|' -e 's|version: v3.*|version: $(PROMETHEUS_RELEASE)|' \
	  -e 's|=prometheus-config-reloader$$|=$(PROMETHEUS_CONFIG_RELOADER_IMAGE)|' | $(KUBECTL) apply -f - >/dev/null
	@{ $(KUBECTL) -n quintet-monitoring wait --for=create pod/prometheus-quintet-0 --timeout=5m >/dev/null && \
	  $(KUBECTL) -n quintet-monitoring wait --for=condition=Ready pod/prometheus-quintet-0 --timeout=5m >/dev/null; } || { \
	  $(KUBECTL) -n quintet-monitoring get all; $(KUBECTL) -n quintet-monitoring describe pods; \
	  $(KUBECTL) -n quintet-monitoring logs deployment/prometheus-operator --tail=50; exit 1; }
	@echo "Prometheus $(PROMETHEUS_RELEASE) is running: pod quintet-monitoring/prometheus-quintet-0, port 9090"

run-bundle: olm-up ## What `operator-sdk run bundle` does, locally: make run-bundle OPERATOR=<name> [NAMESPACE=<ns>].
	@test -d "operators/$(OPERATOR)" || { echo "set OPERATOR to one of: $(OPERATORS)"; exit 1; }
	@$(OLM_ENV) hack/olm.sh run-bundle $(OPERATOR) bundles/$(OPERATOR)/$(call opversion,$(OPERATOR)) $(or $(NAMESPACE),$(OPERATOR)-bundle)

##@ Local cluster

.PHONY: cluster-up
cluster-up: $(KUBE_BIN)/.built $(LOCALCLUSTER) $(COREDNS) images ## Start the local cluster: control plane, kwok nodes and (REAL_NODE) REAL_NODES real nodes.
	$(LOCALCLUSTER) up --dir $(LOCAL) --bin $(KUBE_BIN) --nodes $(CLUSTER_NODES) --real-node $(REAL_NODE) --real-nodes $(REAL_NODES) \
	  --images $(IMAGES_DIR) --coredns $(COREDNS) --pause-image $(PAUSE_IMAGE) --registry-ca $(IMAGE_REGISTRY_TLS)=$(REGISTRY_CA)

.PHONY: cluster-down
cluster-down: $(LOCALCLUSTER) ## Stop the local cluster's processes and remove its state (logs stay).
	$(LOCALCLUSTER) down --dir $(LOCAL)

.PHONY: cluster-status
cluster-status: $(LOCALCLUSTER) ## Show the local cluster's processes.
	$(LOCALCLUSTER) status --dir $(LOCAL)

# Faults on one real node of the local cluster (docs/failure-modes.md); each refuses a NODE that
# is not one of its real nodes. node-drain and node-uncordon run the cluster's kubectl.
NODE_FAULTS := node-stop node-start node-wipe node-partition node-isolate node-heal node-drain node-uncordon
.PHONY: $(NODE_FAULTS)
node-stop: ## Power loss of real node NODE: SIGKILL to its kubelet, containerd and containers; its disk stays.
node-start: ## Start real node NODE again (same name, disk and volumes; empty after node-wipe).
node-wipe: ## Real node NODE stopped and its disk and local volumes gone for good (a replaced machine).
node-partition: ## Cut real node NODE's pods from the other nodes' pods, both ways (nftables).
node-isolate: ## node-partition, and NODE's kubelet cut from the API server too.
node-heal: ## Undo node-partition or node-isolate of NODE.
node-drain: ## kubectl drain NODE (eviction API, PodDisruptionBudgets respected).
node-uncordon: ## kubectl uncordon NODE.
$(NODE_FAULTS): $(LOCALCLUSTER)
	@$(LOCALCLUSTER) $@ --dir $(LOCAL) --node "$(NODE)"

# What the e2e suites need to know about the local cluster and the images.
E2E_ENV = E2E_LOG_DIR=$(LOCAL)/logs/e2e E2E_LOCAL_DIR=$(LOCAL) E2E_CRICTL=$(KUBE_BIN)/crictl E2E_KUBECTL=$(KUBECTL) \
	REAL_NODE=$(REAL_NODE) E2E_REAL_NODES=$(REAL_NODES) E2E_IMAGES=$(IMAGE_PREFIX) E2E_IMAGES_REGISTRY=$(IMAGE_REGISTRY) \
	E2E_AGENT_IMAGE=$(call image,e2e-agent):$(IMAGE_TAG) E2E_AGENT_BINARY=$(STATIC_DIR)/e2e-agent \
	E2E_ETCD_VERSION=$(ETCD_VERSION:v%=%) E2E_ETCD_PREVIOUS_VERSION=$(ETCD_PREVIOUS_VERSION:v%=%) \
	E2E_LOCALCLUSTER=$(LOCALCLUSTER) E2E_OPM=$(OPM) E2E_OLM_BIN=$(OLM_BIN) E2E_CATALOG_IMAGE=$(CATALOG_IMAGE) \
	E2E_BUNDLE_TOOL=$(BUNDLE_TOOL) E2E_CATALOG_TOOL=$(CATALOG_TOOL) E2E_OPERATOR_SDK=$(OPERATOR_SDK) \
	E2E_IMAGES_REGISTRY_TLS=$(IMAGE_REGISTRY_TLS) E2E_REGISTRY_CA=$(REGISTRY_CA) \
	E2E_OPM_INDEX_IMAGE=$(OPM_INDEX_IMAGE) E2E_BUSYBOX_IMAGE=$(BUSYBOX_IMAGE) E2E_SCORECARD_IMAGE=$(SCORECARD_IMAGE) \
	E2E_NATS_IMAGE=$(NATS_IMAGE) E2E_FERRETDB_IMAGE=$(FERRETDB_IMAGE) E2E_VERSITYGW_MINIO_IMAGE=$(VERSITYGW_MINIO_IMAGE) \
	E2E_KRT_RUNNER_IMAGE=$(KRT_RUNNER_IMAGE) E2E_MINIMART_APP_IMAGE=$(MINIMART_APP_IMAGE) E2E_HELM=$(HELM) \
	E2E_CHART_REPO=$(CHART_REPO) E2E_HELM_REGISTRY_FLAGS="$(HELM_REGISTRY_FLAGS)" E2E_ROBUSTNESS_TRAFFIC=$(E2E_ROBUSTNESS_TRAFFIC) \
	E2E_ETCD_CLUSTER_PREVIOUS_RELEASE=$(ETCD_CLUSTER_PREVIOUS_RELEASE)

# The e2e specs wait on the cluster far more than they compute: they run in E2E_PROCS ginkgo
# processes on one cluster; specs that change what every other spec sees are marked Serial.
E2E_PROCS ?= 3

# The suites run on a fresh local cluster with OLM and the catalog (olm-up), and the registry
# holding our images, the bundle images and the catalog image. When a spec fails, the last
# lines printed are each failure's digest (step, message, where the spec was), from ginkgo's
# JSON report: the end of a CI log is often all that is kept of it.
E2E_REPORT = $(LOCAL)/test-results/ginkgo-e2e.json
.PHONY: e2e
e2e: tools-test ## The ginkgo e2e suites on a fresh local cluster they bring up and tear down (GINKGO_ARGS='--focus=...').
	@if $(LOCALCLUSTER) status --dir $(LOCAL) >/dev/null 2>&1; then \
	  echo "make e2e: stopping the running local cluster (and its managers) to start a clean one"; fi
	@$(MAKE) --no-print-directory cluster-down registry-down cluster-up olm-up cert-manager-up s3-up prometheus-up docker-push bundle-push catalog-push helm-push || \
	  { rc=$$?; $(MAKE) --no-print-directory cluster-down registry-down; exit $$rc; }; \
	mkdir -p $(LOCAL)/test-results; rc=0; \
	rm -f $(E2E_REPORT) $(LOCAL)/logs/e2e/security/table.txt; (cd e2e && $(E2E_ENV) $(GINKGO) --no-color -tags e2e -v --procs=$(E2E_PROCS) --json-report=$(E2E_REPORT) \
	  $(GINKGO_ARGS) ./... 2>&1 | tee $(LOCAL)/test-results/ginkgo-e2e.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down registry-down; \
	if [ -s $(LOCAL)/logs/e2e/security/table.txt ]; then echo "Tenant isolation, one attempt a line:"; cat $(LOCAL)/logs/e2e/security/table.txt; fi; \
	if [ $$rc -ne 0 ] && [ -s $(E2E_REPORT) ]; then (cd e2e && go run ./cmd/failure-digest $(E2E_REPORT)) || true; fi; exit $$rc

# make robustness runs the etcd-cluster robustness scenarios (the e2e specs labelled
# robustness), each under at least ROBUSTNESS_TRAFFIC of traffic; make e2e runs them too, each
# for as long as its fault takes.
ROBUSTNESS_TRAFFIC ?= 60s

.PHONY: robustness
robustness: tools-test ## The etcd-cluster robustness scenarios on the real node, each under ROBUSTNESS_TRAFFIC (60s) of traffic, then their table.
	@rm -f $(LOCAL)/logs/e2e/robustness/table.txt; rc=0; $(MAKE) --no-print-directory e2e REAL_NODE=required E2E_ROBUSTNESS_TRAFFIC=$(ROBUSTNESS_TRAFFIC) \
	  GINKGO_ARGS="--label-filter=robustness $(GINKGO_ARGS)" || rc=$$?; \
	echo "Robustness, one scenario a line:"; cat $(LOCAL)/logs/e2e/robustness/table.txt; exit $$rc

.PHONY: images
images: $(KUBE_BIN)/.built $(VERSITYGW) $(FERRETDB) $(ETCD_PREVIOUS) $(ETCD_CLUSTER_PREVIOUS_MANAGER) $(IMAGES_TOOL) $(LOCALCLUSTER) $(OPM) $(OLM_BIN)/.built $(GRPC_HEALTH_PROBE) $(SCORECARD_TEST) node-packages ## Build our images from source (pause, etcd, managers and the previous etcd-cluster release's, e2e agent, NATS, FerretDB, versitygw and krt-runner, minimart-app, the S3 store, OLM's and operator-sdk's); load them into a running real node.
	@mkdir -p $(STATIC_DIR)
	cd hack/images && for c in pause cp ferretdb-entrypoint mongosh-ping versitygw-entrypoint; do GOWORK=off go build -o $(STATIC_DIR)/$$c ./$$c || exit 1; done
	cd e2e && go build -o $(STATIC_DIR)/e2e-agent ./agent
	$(foreach op,$(OPERATORS),(cd operators/$(op) && go build -o $(STATIC_DIR)/$(op)-manager ./cmd) &&) true
	cd operators/kre-runtime && go build -o $(STATIC_DIR)/krt-runner ./cmd/krt-runner && go build -o $(STATIC_DIR)/nats-server github.com/nats-io/nats-server/v2
	cd operators/minimart && go build -o $(STATIC_DIR)/minimart-app ./cmd/minimart-app
	cd operators/etcd-cluster && go build -o $(STATIC_DIR)/etcd-snapshot ./cmd/etcd-snapshot
	$(IMAGES_TOOL) build --out $(IMAGES_DIR) \
	  $(PAUSE_IMAGE)=$(STATIC_DIR)/pause:/pause \
	  $(call image,etcd):$(ETCD_VERSION)=$(KUBE_BIN)/etcd:/usr/local/bin/etcd \
	  $(call image,etcd):$(ETCD_PREVIOUS_VERSION)=$(ETCD_PREVIOUS):/usr/local/bin/etcd \
	  $(call image,e2e-agent):$(IMAGE_TAG)=$(STATIC_DIR)/e2e-agent:/agent \
	  $(NATS_IMAGE)=$(STATIC_DIR)/nats-server:/nats-server $(KRT_RUNNER_IMAGE)=$(STATIC_DIR)/krt-runner:/krt-runner \
	  $(MINIMART_APP_IMAGE)=$(STATIC_DIR)/minimart-app:/minimart-app $(S3_IMAGE)=$(VERSITYGW):/versitygw \
	  $(FERRETDB_IMAGE)=$(STATIC_DIR)/ferretdb-entrypoint:/entrypoint,$(FERRETDB):/usr/local/bin/ferretdb,$(STATIC_DIR)/mongosh-ping:/usr/bin/mongosh \
	  $(VERSITYGW_MINIO_IMAGE)=$(STATIC_DIR)/versitygw-entrypoint:/entrypoint,$(VERSITYGW):/usr/local/bin/versitygw \
	  $(OPM_IMAGE)=$(OPM):/bin/opm $(OLM_UTIL_IMAGE)=$(STATIC_DIR)/cp:/bin/cp,$(OLM_BIN)/cpb:/bin/cpb \
	  $(foreach op,$(OPERATORS),$(call manager_image,$(op))=$(STATIC_DIR)/$(op)-manager:/manager$(MANAGER_IMAGE_EXTRA_$(op))) \
	  $(call image,etcd-cluster):v$(ETCD_CLUSTER_PREVIOUS_RELEASE)=$(ETCD_CLUSTER_PREVIOUS_MANAGER):/manager \
	  $(SCORECARD_IMAGE)=$(SCORECARD_TEST):/usr/local/bin/scorecard-test
	@if [ -x $(BUSYBOX) ]; then mkdir -p $(STATIC_DIR)/empty-catalog && \
	  $(IMAGES_TOOL) build --out $(IMAGES_DIR) $(BUSYBOX_IMAGE)=$(BUSYBOX):/bin/busybox,$(BUSYBOX):/bin/sh,$(BUSYBOX):/bin/cat,$(BUSYBOX):/bin/gzip,$(BUSYBOX):/bin/tar && \
	  $(IMAGES_TOOL) catalog --out $(IMAGES_DIR) --opm $(OPM) --health-probe $(GRPC_HEALTH_PROBE) --shell $(BUSYBOX) $(OPM_INDEX_IMAGE)=$(STATIC_DIR)/empty-catalog; \
	else echo "images: no $(BUSYBOX) (Debian busybox-static, installed with the real node's packages): skipping the images operator-sdk runs in pods"; fi
	$(LOCALCLUSTER) load-images --dir $(LOCAL) --images $(IMAGES_DIR)

##@ Benchmarks

.PHONY: bench-gordon bench-minimart bench-restapi bench-etcd-backup bench-kre bench-metrics bench-scale
# bench_plot,NAME,TITLE: after a benchmark that passed ($$rc), plot docs/benchmarks/NAME.tsv,
# the figures it wrote, as docs/benchmarks/NAME.svg; the recipe's exit status is the bench's.
bench_plot = [ $$rc -ne 0 ] || $(DOCS_TOOL) plot "$(2)" docs/benchmarks/$(1).tsv docs/benchmarks/$(1).svg; exit $$rc
bench-kre: tools-test $(DOCS_TOOL) ## kre-runtime's sample workflow on the real node, keeping results in MongoDB and the bucket, then NATS alone: req/s, p50/p99 at concurrency 1 and 16, runner memory; figures and plot in docs/benchmarks/.
	@$(MAKE) --no-print-directory cluster-down cluster-up
	@rc=0; (cd e2e && $(E2E_ENV) BENCH_FIGURES=$(ROOT)/docs/benchmarks/kre.tsv go test -tags bench -run TestBenchKRE -count=1 -timeout 30m -v . 2>&1 | tee $(LOCAL)/bench-kre.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down; $(call bench_plot,kre,kre-runtime: POST /predict through a 3-node workflow on the real node)
bench-etcd-backup: $(KUBE_BIN)/.built $(VERSITYGW) $(DOCS_TOOL) ## An EtcdBackup of a BENCH_DB_MIB (256) MiB database, real etcd to real versitygw on loopback, and its restore: time, throughput, peak RSS; figures and plot in docs/benchmarks/.
	@rc=0; (cd operators/etcd-cluster && BENCH_FIGURES=$(ROOT)/docs/benchmarks/etcd-backup.tsv go test -tags bench -run TestBenchBackup -count=1 -timeout 20m -v ./internal/backup/ 2>&1 | \
	  tee $(LOCAL)/bench-etcd-backup.log | grep -v "^=== RUN") || rc=$$?; $(call bench_plot,etcd-backup,etcd-cluster: backing up and restoring $${BENCH_DB_MIB:-256} MiB of values in etcd on loopback)
bench-restapi: tools-test $(DOCS_TOOL) ## What the REST API adds to a request: p50/p99 of 1000 GETs through it and straight to the API server.
	@rc=0; (cd shared && BENCH_FIGURES=$(ROOT)/docs/benchmarks/restapi.tsv go test -tags bench -run TestBenchRESTAPILatency -count=1 -v ./restapi/ 2>&1 | \
	  tee $(LOCAL)/bench-restapi.log | grep -v "^=== RUN") || rc=$$?; $(call bench_plot,restapi,The REST API: 1000 GETs through it and straight to the API server)

bench-minimart: tools-test $(HELM_OPERATOR) $(DOCS_TOOL) ## 100 Minimarts with minimart, then with operator-sdk's helm-operator, on a fresh local cluster: time to deployed, steady-state requests, CPU, memory.
	@$(MAKE) --no-print-directory cluster-down cluster-up
	@rc=0; (cd e2e && BENCH_FIGURES=$(ROOT)/docs/benchmarks/minimart.tsv BENCH_HELM_OPERATOR=$(HELM_OPERATOR) go test -tags bench -run TestBenchMinimart -count=1 -timeout 45m -v . 2>&1 | tee $(LOCAL)/bench-minimart.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down; $(call bench_plot,minimart,minimart and helm-operator: 100 Minimarts)

bench-gordon: tools-test $(DOCS_TOOL) ## 100 Gordons x 10 pods vs 100 ReplicaSets x 10 on a fresh local cluster: times, ratio, requests, memory.
	@$(MAKE) --no-print-directory cluster-down cluster-up CLUSTER_NODES=12
	@rc=0; (cd e2e && BENCH_FIGURES=$(ROOT)/docs/benchmarks/gordon.tsv go test -tags bench -run TestBenchGordon -count=1 -timeout 30m -v . 2>&1 | tee $(LOCAL)/bench-gordon.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down; $(call bench_plot,gordon,gordon and the ReplicaSet controller: 100 owners x 10 pods)

bench-metrics: tools-test ## Each manager with 100 copies of its sample on a fresh local cluster: the series its /metrics serves (the cost to a Prometheus), bytes, scrape time.
	@$(MAKE) --no-print-directory cluster-down cluster-up CLUSTER_NODES=12
	@rc=0; (cd e2e && BENCH_FIGURES=$(ROOT)/docs/benchmarks/metrics.tsv go test -tags bench -run TestBenchMetrics -count=1 -timeout 60m -v . 2>&1 | tee $(LOCAL)/bench-metrics.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down; exit $$rc

# 40 kwok nodes of 110 pods: room for a thousand 3-member etcd clusters.
bench-scale: tools-test $(DOCS_TOOL) ## Each manager with 100, 300 and 1000 copies of its sample (BENCH_SCALE_OPERATORS, BENCH_SCALE_SIZES) created at once on a fresh local cluster: time to settled, requests, steady-state writes, RSS, CPU, queues; then two replicas with BENCH_SCALE_TAKEOVER (1000) copies, the leader killed halfway: time to take over, creations beyond one replica's; and, run first, a broken tenth: BENCH_SCALE_BROKEN (1000) copies all healthy, then with every tenth broken: time until the healthy ones settled and its ratio (target under 1.2), longest-held item, the reason each broken copy reports; and BENCH_SCALE_LIMITED (1000) copies with the manager in a memory group as a container's, without a limit and then limited to each of BENCH_SCALE_MEMORY (64Mi), scraped as BENCH_SCALE_SCRAPE says (interval/timeout, 5s/3s; off): time to settled and its ratio, CPU, the group's peak, hits of its limit, OOM kills, then its namespaces deleted at once: time until every copy was gone and the manager's queues empty, scrapes answered and failed.
	@$(MAKE) --no-print-directory cluster-down cluster-up CLUSTER_NODES=40 REAL_NODE=off
	@rc=0; (cd e2e && BENCH_FIGURES=$(ROOT)/docs/benchmarks/scale.tsv go test -tags bench -run TestBenchScale -count=1 -timeout 240m -v . 2>&1 | tee $(LOCAL)/bench-scale.log) || rc=$$?; \
	$(MAKE) --no-print-directory cluster-down; $(call bench_plot,scale,Each manager with 100 then 300 then 1000 copies of its sample)

##@ Tools

.PHONY: tools tools-test
tools: tools-test ## Build every pinned tool into bin/ (a no-op when present).
# What test, e2e, demo and the benchmarks use: all of them, today.
tools-test: $(KUBE_BIN)/.built $(HELM) $(LOCALCLUSTER) $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(KUBECONFORM) $(KUBE_SCORE) $(GINKGO) $(COREDNS) $(ETCD_PREVIOUS) \
	$(IMAGES_TOOL) $(BUNDLE_TOOL) $(OPERATOR_SDK) $(SCORECARD_TEST) $(CATALOG_TOOL) $(OPM) $(OLM_BIN)/.built $(GRPC_HEALTH_PROBE) \
	$(CERT_MANAGER_BIN)/.built $(VERSITYGW) $(FERRETDB) $(PROMETHEUS_BIN)/.built $(PROMETHEUS_OPERATOR_BIN)/.built

# The control plane, the real node's kubelet, kube-proxy and crictl, etcd and kwok in one
# `go build`, so they share compilation, and kwok's stages (node and pod lifecycles) from the
# same kwok version in one file. Static, as upstream releases them: etcd goes into an image
# as it is.
$(KUBE_BIN)/.built: hack/tools/kube/go.mod hack/tools/kube/go.sum
	@mkdir -p $(KUBE_BIN)
	@echo "Building Kubernetes $(KUBE_VERSION), etcd, kwok and crictl from source (about 15 minutes the first time)"
	cd hack/tools/kube && GOWORK=off go build -tags providerless -ldflags "$(KUBE_LDFLAGS)" -o $(KUBE_BIN)/ \
	  $(addprefix k8s.io/kubernetes/cmd/,$(KUBE_COMMANDS)) ./cmd/etcd sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/cri-tools/cmd/crictl
	cd hack/tools/kube && for s in $(KWOK_STAGES); do \
	  for f in $$(GOWORK=off go list -f '{{.Dir}}' sigs.k8s.io/kwok/kustomize/stage/$$s)/*.yaml; do \
	    case $$f in */kustomization.yaml) ;; *) echo '---'; cat $$f;; esac; done; \
	done > $(KUBE_BIN)/kwok-stages.yaml
	touch $@

$(LOCALCLUSTER): $(wildcard hack/localcluster/*.go) hack/localcluster/go.mod
	cd hack/localcluster && GOWORK=off go build -o $@ .

$(IMAGES_TOOL): $(wildcard hack/images/*.go) hack/images/go.mod
	cd hack/images && GOWORK=off go build -o $@ .

$(BUNDLE_TOOL): $(wildcard hack/bundle/*.go) hack/bundle/go.mod
	cd hack/bundle && GOWORK=off go build -o $@ .

# bin/docs writes the REST API's documents with shared/restapi and shared/manager.
$(DOCS_TOOL): $(wildcard hack/docs/*.go) hack/docs/go.mod $(wildcard shared/restapi/*.go shared/manager/*.go) shared/go.mod
	cd hack/docs && GOWORK=off go build -o $@ .

$(MANIFESTS_TOOL): $(wildcard hack/manifests/*.go) hack/manifests/go.mod
	cd hack/manifests && GOWORK=off go build -o $@ .

$(CATALOG_TOOL): $(wildcard hack/catalog/*.go) hack/catalog/go.mod
	cd hack/catalog && GOWORK=off go build -o $@ .

$(ETCD_PREVIOUS): hack/tools/etcd-previous/go.mod
	cd hack/tools/etcd-previous && GOWORK=off go build -o $@ .

$(ETCD_CLUSTER_PREVIOUS_MANAGER):
	@rm -rf $(LOCAL)/previous-release && mkdir -p $(LOCAL)/previous-release
	git archive $(ETCD_CLUSTER_PREVIOUS_COMMIT) operators/etcd-cluster shared | tar -x -C $(LOCAL)/previous-release
	cd $(LOCAL)/previous-release/operators/etcd-cluster && GOWORK=off go build -o $@ ./cmd
	rm -rf $(LOCAL)/previous-release

$(GRPC_HEALTH_PROBE): hack/tools/grpc-health-probe/go.mod
	cd hack/tools/grpc-health-probe && GOWORK=off go build -o $@ github.com/grpc-ecosystem/grpc-health-probe

# Prometheus with only the Kubernetes service discovery, as prometheus-operator configures it,
# and promtool; static, as they go into an image.
$(PROMETHEUS_BIN)/.built: hack/tools/prometheus/go.mod
	@mkdir -p $(PROMETHEUS_BIN)
	cd hack/tools/prometheus && GOWORK=off go build -tags remove_all_sd,enable_kubernetes_sd \
	  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$(PROMETHEUS_RELEASE:v%=%)" -o $(PROMETHEUS_BIN)/ \
	  github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
	touch $@

# prometheus-operator, its config reloader, and its CRDs.
$(PROMETHEUS_OPERATOR_BIN)/.built: hack/tools/prometheus-operator/go.mod
	@mkdir -p $(PROMETHEUS_OPERATOR_BIN)/crds
	cd hack/tools/prometheus-operator && GOWORK=off go build \
	  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$(PROMETHEUS_OPERATOR_VERSION:v%=%)" -o $(PROMETHEUS_OPERATOR_BIN)/ \
	  github.com/prometheus-operator/prometheus-operator/cmd/operator github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader
	cp $$(cd hack/tools/prometheus-operator && GOWORK=off go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)/example/prometheus-operator-crd/*.yaml $(PROMETHEUS_OPERATOR_BIN)/crds/
	chmod 644 $(PROMETHEUS_OPERATOR_BIN)/crds/*.yaml
	touch $@

$(VERSITYGW): hack/tools/versitygw/go.mod
	cd hack/tools/versitygw && GOWORK=off go build -o $@ github.com/versity/versitygw/cmd/versitygw

# FerretDB is built in a copy of its module, as upstream builds it: its version package requires
# build/version/version.txt, which the module leaves to its release tooling to write.
$(FERRETDB): hack/tools/ferretdb/go.mod
	@rm -rf $(LOCAL)/ferretdb-src && mkdir -p $(LOCAL)
	cd hack/tools/ferretdb && GOWORK=off go mod download github.com/FerretDB/FerretDB && \
	  cp -r "$$(GOWORK=off go list -m -f '{{.Dir}}' github.com/FerretDB/FerretDB)" $(LOCAL)/ferretdb-src
	chmod -R u+w $(LOCAL)/ferretdb-src && echo $(FERRETDB_VERSION) > $(LOCAL)/ferretdb-src/build/version/version.txt
	cd $(LOCAL)/ferretdb-src && GOWORK=off GOFLAGS=-mod=mod go build -trimpath -tags ferretdb_no_postgresql -o $@ ./cmd/ferretdb
	rm -rf $(LOCAL)/ferretdb-src

# CoreDNS serves cluster DNS to the real node's pods.
$(COREDNS): hack/tools/coredns/go.mod
	cd hack/tools/coredns && GOWORK=off go build -o $@ github.com/coredns/coredns

$(CONTROLLER_GEN):
	GOBIN=$(BIN)/.install go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(BIN)/.install/controller-gen $@

$(GOLANGCI_LINT):
	GOBIN=$(BIN)/.install go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/.install/golangci-lint $@

# Spectral and Redocly: npm ci of the committed lock file (no install scripts).
$(OPENAPI_LINT)/.built: hack/tools/openapi-lint/package.json hack/tools/openapi-lint/package-lock.json
	@rm -rf $(OPENAPI_LINT) && mkdir -p $(OPENAPI_LINT)
	cp $^ $(OPENAPI_LINT)/
	cd $(OPENAPI_LINT) && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

$(KUBECONFORM):
	GOBIN=$(BIN)/.install go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)
	mv $(BIN)/.install/kubeconform $@

$(KUBE_SCORE):
	GOBIN=$(BIN)/.install go install github.com/zegl/kube-score/cmd/kube-score@$(KUBE_SCORE_VERSION)
	mv $(BIN)/.install/kube-score $@

# opm, operator-sdk and OLM each in a tools module of their own: their k8s versions differ from
# ours. opm is static (it goes into the catalog image; file-based catalogs need no sqlite).
$(HELM): hack/tools/helm/go.mod
	cd hack/tools/helm && GOWORK=off go build -ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)" -o $@ helm.sh/helm/v3/cmd/helm

$(OPM): hack/tools/opm/go.mod
	cd hack/tools/opm && GOWORK=off go build -tags json1,containers_image_openpgp -o $@ github.com/operator-framework/operator-registry/cmd/opm

# OLM v0's olm-operator and catalog-operator, its CRDs, and cpb (static: it goes into the util
# image bundle unpack Jobs copy it from).
$(OLM_BIN)/.built: hack/tools/olm/go.mod
	@mkdir -p $(OLM_BIN)/crds
	cd hack/tools/olm && CGO_ENABLED=1 GOWORK=off go build -tags json1 -o $(OLM_BIN)/ \
	  github.com/operator-framework/operator-lifecycle-manager/cmd/olm github.com/operator-framework/operator-lifecycle-manager/cmd/catalog
	cd hack/tools/olm && GOWORK=off go build -o $(OLM_BIN)/cpb github.com/operator-framework/operator-lifecycle-manager/util/cpb
	cp $$(cd hack/tools/olm && GOWORK=off go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)/deploy/chart/crds/*.yaml $(OLM_BIN)/crds/
	chmod 644 $(OLM_BIN)/crds/*.yaml
	touch $@

# cert-manager's controllers (SelfSigned and CA issuers) and its CRDs; see hack/tools/cert-manager.
$(CERT_MANAGER_BIN)/.built: hack/tools/cert-manager/go.mod $(wildcard hack/tools/cert-manager/*.go)
	@mkdir -p $(CERT_MANAGER_BIN)/crds
	cd hack/tools/cert-manager && GOWORK=off go build -o $(CERT_MANAGER_BIN)/cert-manager .
	cp $$(cd hack/tools/cert-manager && GOWORK=off go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)/deploy/crds/*.yaml $(CERT_MANAGER_BIN)/crds/
	chmod 644 $(CERT_MANAGER_BIN)/crds/*.yaml
	touch $@

$(OPERATOR_SDK): hack/tools/operator-sdk/go.mod
	cd hack/tools/operator-sdk && CGO_ENABLED=1 GOWORK=off go build -tags containers_image_openpgp -o $@ github.com/operator-framework/operator-sdk/cmd/operator-sdk

# operator-sdk's helm-operator: the anchor make bench-minimart runs minimart against.
$(HELM_OPERATOR): hack/tools/operator-sdk/go.mod
	cd hack/tools/operator-sdk && GOWORK=off go build -o $@ github.com/operator-framework/operator-sdk/cmd/helm-operator

# scorecard-test runs scorecard's built-in tests; static, as it runs in a chroot.
$(SCORECARD_TEST): hack/tools/operator-sdk/go.mod
	cd hack/tools/operator-sdk && GOWORK=off go build -tags containers_image_openpgp -o $@ \
	  github.com/operator-framework/operator-sdk/images/scorecard-test

$(GINKGO): e2e/go.mod
	GOBIN=$(BIN)/.install go install github.com/onsi/ginkgo/v2/ginkgo@$(GINKGO_VERSION)
	mv $(BIN)/.install/ginkgo $@

.PHONY: clean
clean: ## Remove bin/ and .local/ (stop the cluster first).
	-$(LOCALCLUSTER) down --dir $(LOCAL)
	rm -rf $(BIN) $(LOCAL)
