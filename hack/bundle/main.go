// Command bundle generates an operator's OLM bundle (registry+v1) from its kustomize config,
// the way `operator-sdk generate bundle` does, without copy-pasted CSVs:
//
//	bundle --config operators/gordon/config/manifests --package quintet-gordon --version 0.4.0 \
//	       --image 127.0.0.1:5000/quintet/gordon:v0.4.0 --release config/catalog/quintet-gordon.yaml \
//	       --out bundles/gordon/0.4.0
//
// config/manifests is a kustomization of the CSV base (bases/<package>.clusterserviceversion.yaml),
// ../default (CRDs, RBAC, manager), ../samples and ../scorecard. The bundle gets manifests/
// (the CSV, the CRDs and the other objects OLM should create), metadata/annotations.yaml,
// tests/scorecard/config.yaml and a bundle.Dockerfile. Its channels and upgrade edge come from
// the package's catalog template (--release). Output is deterministic.
//
// `bundle chart ...` generates the operator's Helm chart from the same config (see chart.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type options struct {
	config, pkg, versionText, image, out string
	releaseTemplate                      string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "chart" {
		if err := runChart(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bundle:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.config, "config", "", "the operator's config/manifests kustomization")
	flag.StringVar(&o.pkg, "package", "", "the OLM package name")
	flag.StringVar(&o.versionText, "version", "", "the bundle's semantic version, without a leading v")
	flag.StringVar(&o.image, "image", "", "the manager image")
	flag.StringVar(&o.releaseTemplate, "release", "", "the package's catalog template: channels and upgrade edge of this version")
	flag.StringVar(&o.out, "out", "", "the bundle folder (replaced)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.config == "" || o.pkg == "" || o.versionText == "" || o.image == "" || o.releaseTemplate == "" || o.out == "" {
		return fmt.Errorf("--config, --package, --version, --image, --release and --out are required")
	}
	v, err := semver.Parse(o.versionText)
	if err != nil {
		return fmt.Errorf("--version: %w", err)
	}
	rel, err := readRelease(o.releaseTemplate, fmt.Sprintf("%s.v%s", o.pkg, v))
	if err != nil {
		return err
	}
	objects, err := render(o.config)
	if err != nil {
		return err
	}
	b, err := classify(objects)
	if err != nil {
		return err
	}
	csv, err := buildCSV(csvInput{
		base: b.base, pkg: o.pkg, version: v, replaces: rel.replaces, skipRange: rel.skipRange, image: o.image,
		crds: b.crds, deployments: b.deployments, roles: b.roles, grants: b.grants, samples: b.samples,
	})
	if err != nil {
		return err
	}
	return writeBundle(o, rel, csv, b)
}

// parts are the rendered objects sorted by where they go in the bundle.
type parts struct {
	base        *operatorsv1alpha1.ClusterServiceVersion
	crds        []*apiextensionsv1.CustomResourceDefinition
	crdObjects  []*unstructured.Unstructured
	deployments []*appsv1.Deployment
	roles       []*unstructured.Unstructured
	grants      []grant
	samples     []*unstructured.Unstructured
	scorecard   *unstructured.Unstructured
	others      []*unstructured.Unstructured // shipped as manifests (Services, NetworkPolicies, unbound roles)
}

func classify(objects []*unstructured.Unstructured) (*parts, error) {
	kinds := byKind(objects)
	b := &parts{}
	if len(kinds["ClusterServiceVersion"]) != 1 {
		return nil, fmt.Errorf("want one ClusterServiceVersion base in config/manifests, found %d", len(kinds["ClusterServiceVersion"]))
	}
	b.base = &operatorsv1alpha1.ClusterServiceVersion{}
	if err := convert(kinds["ClusterServiceVersion"][0], b.base); err != nil {
		return nil, fmt.Errorf("the CSV base: %w", err)
	}
	owned := map[string]bool{}
	for _, u := range kinds["CustomResourceDefinition"] {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := convert(u, crd); err != nil {
			return nil, err
		}
		b.crds, b.crdObjects = append(b.crds, crd), append(b.crdObjects, u)
		owned[crd.Spec.Names.Kind] = true
	}
	for _, u := range kinds["Deployment"] {
		d := &appsv1.Deployment{}
		if err := convert(u, d); err != nil {
			return nil, err
		}
		b.deployments = append(b.deployments, d)
	}
	b.roles = append(kinds[kindClusterRole], kinds["Role"]...)
	grants, err := serviceAccountGrants(append(kinds[kindClusterRoleBinding], kinds["RoleBinding"]...))
	if err != nil {
		return nil, err
	}
	b.grants = grants
	bound := map[string]bool{} // roles in the CSV; the others (editor, viewer, ...) ship as manifests
	for _, g := range grants {
		bound[g.role.Kind+"/"+g.role.Name] = true
	}
	for _, u := range objects {
		switch kind := u.GetKind(); {
		case owned[kind]:
			b.samples = append(b.samples, u)
		case kind == "Configuration" && strings.HasPrefix(u.GetAPIVersion(), "scorecard.operatorframework.io/"):
			b.scorecard = u
		case kind == kindClusterRole || kind == "Role":
			if !bound[kind+"/"+u.GetName()] {
				b.others = append(b.others, u)
			}
		case kind == kindService || kind == "ConfigMap" || kind == kindNetworkPolicy:
			b.others = append(b.others, u)
		}
		// Namespaces and ServiceAccounts are OLM's to make; bindings and the Deployment
		// are in the CSV.
	}
	if b.scorecard == nil {
		return nil, fmt.Errorf("no scorecard Configuration: add ../scorecard to config/manifests")
	}
	return b, nil
}
