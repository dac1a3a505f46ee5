package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/quintet-operators/quintet/shared/manager"
	"github.com/quintet-operators/quintet/shared/restapi"
)

// WriteOpenAPIDocuments writes docs/api/openapi/<operator>.json for every operator under root:
// the document its REST API serves at /api/v1/openapi.json (restapi.ServedDocument, from the
// CRDs its manager embeds and the options the manager gives the API), indented. Each
// operator's config/crd test checks that its file is still what the API serves. Run it after
// WriteAPIReference, which writes docs/api/ afresh.
func WriteOpenAPIDocuments(root string) error {
	dirs, err := filepath.Glob(filepath.Join(root, "operators", "*", "config", "crd", "bases"))
	if err != nil || len(dirs) == 0 {
		return fmt.Errorf("no operators' CRDs under %s: %v", root, err)
	}
	out := filepath.Join(root, "docs", "api", "openapi")
	if err := os.MkdirAll(out, 0o755); err != nil { //nolint:gosec // documents, world-readable
		return err
	}
	for _, dir := range dirs {
		operator := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(dir))))
		doc, err := restapi.ServedDocument(os.DirFS(dir), manager.APIOptions(operator))
		if err != nil {
			return fmt.Errorf("%s: %w", operator, err)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, doc, "", "  "); err != nil {
			return err
		}
		pretty.WriteByte('\n')
		file := filepath.Join(out, operator+".json")
		if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil { //nolint:gosec // a document, world-readable
			return err
		}
	}
	return nil
}
