// Command catalog renders Quintet's file-based catalog offline. Each package has a committed
// basic template (config/catalog/<package>.yaml, schema olm.template.basic) whose olm.bundle
// entries name bundle images; `opm alpha render-template basic` would pull them. Here each
// image is matched instead to a bundle directory rendered with `opm render <dir>
// --alpha-image-ref-template`, so the catalog is made without a registry and is the same.
//
//	catalog --opm bin/opm --templates config/catalog --bundles bundles \
//	        --image-ref-template '127.0.0.1:5000/quintet/{{.Package}}-bundle:v{{.Version}}' --out catalog
//
// --inline renders the variant the local e2e serves: bundle images empty, so OLM installs from
// the inline olm.bundle.object properties without unpack Jobs.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

type options struct {
	opm, templates, bundles, imageRefTemplate, out string
	inline                                         bool
}

func main() {
	var o options
	flag.StringVar(&o.opm, "opm", "opm", "the opm binary")
	flag.StringVar(&o.templates, "templates", "config/catalog", "folder of basic templates, one <package>.yaml each")
	flag.StringVar(&o.bundles, "bundles", "bundles", "folder of bundle directories, <operator>/<version> each")
	flag.StringVar(&o.imageRefTemplate, "image-ref-template", "", "bundle image references, as opm's --alpha-image-ref-template")
	flag.StringVar(&o.out, "out", "catalog", "the catalog folder (its package folders are replaced)")
	flag.BoolVar(&o.inline, "inline", false, "empty bundle images: install from inline bundle objects")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.imageRefTemplate == "" {
		return errors.New("--image-ref-template is required")
	}
	bundles, err := renderBundles(o)
	if err != nil {
		return err
	}
	templates, err := filepath.Glob(filepath.Join(o.templates, "*.yaml"))
	if err != nil {
		return err
	}
	previous, err := filepath.Glob(filepath.Join(o.out, "*", "catalog.yaml"))
	if err != nil {
		return err
	}
	for _, p := range previous { // packages whose template is gone go too
		if err := os.RemoveAll(filepath.Dir(p)); err != nil {
			return err
		}
	}
	for _, t := range templates {
		pkg := strings.TrimSuffix(filepath.Base(t), ".yaml")
		blobs, err := renderTemplate(t, bundles, o.inline)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if err := writeBlobs(filepath.Join(o.out, pkg, "catalog.yaml"), blobs); err != nil {
			return err
		}
	}
	return nil
}

// renderBundles renders every bundle directory, by the image reference it gets.
func renderBundles(o options) (map[string]map[string]any, error) {
	dirs, err := filepath.Glob(filepath.Join(o.bundles, "*", "*", "metadata")) // bundles/<operator>/<version>
	if err != nil {
		return nil, err
	}
	byImage := map[string]map[string]any{}
	for _, metadata := range dirs {
		dir := filepath.Dir(metadata)
		cmd := exec.Command(o.opm, "render", dir, "--alpha-image-ref-template", o.imageRefTemplate, "-o", "json")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("opm render %s: %w: %s", dir, err, stderr.String())
		}
		var blob map[string]any
		if err := json.Unmarshal(out, &blob); err != nil {
			return nil, fmt.Errorf("opm render %s: %w", dir, err)
		}
		image, _ := blob["image"].(string)
		byImage[image] = blob
	}
	return byImage, nil
}

// renderTemplate returns the template's entries with each olm.bundle entry replaced by the
// rendered bundle of its image.
func renderTemplate(path string, bundles map[string]map[string]any, inline bool) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var template struct {
		Schema  string           `json:"schema"`
		Entries []map[string]any `json:"entries"`
	}
	if err := yaml.UnmarshalStrict(data, &template); err != nil {
		return nil, err
	}
	if template.Schema != "olm.template.basic" {
		return nil, fmt.Errorf("schema %q, want olm.template.basic", template.Schema)
	}
	blobs := make([]map[string]any, 0, len(template.Entries))
	for _, e := range template.Entries {
		if err := checkEdges(e); err != nil {
			return nil, err
		}
		if e["schema"] != "olm.bundle" {
			blobs = append(blobs, e)
			continue
		}
		image, _ := e["image"].(string)
		blob, ok := bundles[image]
		if !ok {
			return nil, fmt.Errorf("no bundle directory renders to image %q", image)
		}
		if inline {
			blob = maps.Clone(blob)
			blob["image"] = ""
			blob["relatedImages"] = withoutImage(blob["relatedImages"], image)
		}
		blobs = append(blobs, blob)
	}
	return blobs, nil
}

// checkEdges refuses a channel entry with a skipRange but no replaces: OLM's upgrade graph
// of a channel is its chain of replaces, and a skipRange alone would leave the bundle off it.
func checkEdges(e map[string]any) error {
	if e["schema"] != "olm.channel" {
		return nil
	}
	entries, _ := e["entries"].([]any)
	for _, c := range entries {
		entry, _ := c.(map[string]any)
		if entry["skipRange"] != nil && entry["replaces"] == nil {
			return fmt.Errorf("channel %v: %v has a skipRange without replaces; a skipRange travels with a replaces", e["name"], entry["name"])
		}
	}
	return nil
}

// withoutImage drops the bundle image from relatedImages (an inline bundle has no image).
func withoutImage(related any, image string) []any {
	list, _ := related.([]any)
	out := make([]any, 0, len(list))
	for _, r := range list {
		if m, ok := r.(map[string]any); ok && m["image"] == image {
			continue
		}
		out = append(out, r)
	}
	return out
}

// writeBlobs writes the catalog of one package as a YAML stream.
func writeBlobs(path string, blobs []map[string]any) error {
	var b bytes.Buffer
	for _, blob := range blobs {
		data, err := yaml.Marshal(blob)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
