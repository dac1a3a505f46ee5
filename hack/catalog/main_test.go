package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const template = `schema: olm.template.basic
entries:
- schema: olm.package
  name: p
  defaultChannel: stable
- schema: olm.channel
  package: p
  name: stable
  entries:
  - name: p.v0.1.0
- schema: olm.bundle
  image: registry/p-bundle:v0.1.0
`

func writeTemplate(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func renderedBundle() map[string]map[string]any {
	return map[string]map[string]any{"registry/p-bundle:v0.1.0": {
		"schema": "olm.bundle", "name": "p.v0.1.0", "image": "registry/p-bundle:v0.1.0",
		"relatedImages": []any{
			map[string]any{"name": "", "image": "registry/p-bundle:v0.1.0"},
			map[string]any{"name": "manager", "image": "registry/p:v0.1.0"},
		},
	}}
}

func TestTemplateBundlesAreReplacedByTheirRenderedDirectories(t *testing.T) {
	blobs, err := renderTemplate(writeTemplate(t, template), renderedBundle(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 3 || blobs[0]["schema"] != "olm.package" || blobs[1]["schema"] != "olm.channel" {
		t.Fatalf("package and channel entries must pass through in order: %v", blobs)
	}
	if blobs[2]["name"] != "p.v0.1.0" || blobs[2]["image"] != "registry/p-bundle:v0.1.0" {
		t.Fatalf("bundle %v", blobs[2])
	}
}

func TestInlineCatalogHasNoBundleImages(t *testing.T) {
	bundles := renderedBundle()
	blobs, err := renderTemplate(writeTemplate(t, template), bundles, true)
	if err != nil {
		t.Fatal(err)
	}
	if blobs[2]["image"] != "" {
		t.Fatalf("inline bundle image %q, want empty (no unpack Job)", blobs[2]["image"])
	}
	if related := blobs[2]["relatedImages"].([]any); len(related) != 1 {
		t.Fatalf("relatedImages %v, want only the manager", related)
	}
	if bundles["registry/p-bundle:v0.1.0"]["image"] == "" {
		t.Fatal("the inline rendering must not change the published one")
	}
}

func TestUnknownBundleImageIsAnError(t *testing.T) {
	_, err := renderTemplate(writeTemplate(t, strings.Replace(template, "p-bundle:v0.1.0", "p-bundle:v0.2.0", 1)), renderedBundle(), false)
	if err == nil || !strings.Contains(err.Error(), "no bundle directory") {
		t.Fatalf("err %v", err)
	}
}

func TestOnlyBasicTemplates(t *testing.T) {
	_, err := renderTemplate(writeTemplate(t, strings.Replace(template, "olm.template.basic", "olm.semver", 1)), renderedBundle(), false)
	if err == nil {
		t.Fatal("a semver template must be refused")
	}
}

func TestSkipRangeTravelsWithReplaces(t *testing.T) {
	alone := strings.Replace(template, "  - name: p.v0.1.0\n", "  - name: p.v0.1.0\n    skipRange: '<0.1.0'\n", 1)
	_, err := renderTemplate(writeTemplate(t, alone), renderedBundle(), false)
	if err == nil || !strings.Contains(err.Error(), "skipRange without replaces") {
		t.Fatalf("err %v", err)
	}
	withEdge := strings.Replace(alone, "skipRange: '<0.1.0'\n", "skipRange: '<0.1.0'\n    replaces: p.v0.0.9\n", 1)
	if _, err := renderTemplate(writeTemplate(t, withEdge), renderedBundle(), false); err != nil {
		t.Fatalf("a skipRange beside a replaces is an upgrade edge: %v", err)
	}
}
