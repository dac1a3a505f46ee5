package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const makefile = `
.PHONY: demo
demo: tools ## the demo
test-%: $(GINKGO)
bundle-%:
VAR := value
cluster-up cluster-down: x
run: build
`

// page writes files under a new root, with the Makefile above.
func page(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["Makefile"] = makefile
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestACleanTreePasses(t *testing.T) {
	root := page(t, map[string]string{
		"README.md": "# Quintet\n\nSee [the guide](docs/guide.md#first-steps), [here](#quintet), `make demo`, `make test-shared`, " +
			"`make cluster-up OPERATOR=<name>`, `make run OPERATOR=<name>`, and a placeholder is no target: `make <target>`.\n" +
			"Files: `docs/guide.md`, `hack/`, an operator's `config/default`.\n```sh\nmake nothing-here\n```\n",
		"docs/guide.md": "# Guide\n\n## First steps\n\nBack to [the README](../README.md). `operators/<name>/config` is a placeholder.\n",
		"hack/x.sh":     "",
		"operators/gordon/config/default/kustomization.yaml": "",
	})
	problems, err := Check(root)
	if err != nil || len(problems) != 0 {
		t.Errorf("Check = %v, %v; want nothing broken", problems, err)
	}
}

func TestEachKindOfBreakIsFound(t *testing.T) {
	root := page(t, map[string]string{
		"README.md": "# Q\n\n[gone](docs/gone.md) [no heading](docs/guide.md#nowhere) [no anchor here](#nope) `make demoo` `make bundle-x test-y` " +
			"`docs/missing.md` `hack/x.sh`\n",
		"docs/guide.md": "# Guide\n",
		"hack/x.sh":     "",
	})
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: link docs/gone.md: no such file docs/gone.md",
		"README.md: link docs/guide.md#nowhere: docs/guide.md has no heading #nowhere",
		"README.md: link #nope: README.md has no heading #nope",
		"README.md: `make demoo`: no such target in the Makefile",
		"README.md: `docs/missing.md`: no such file or folder in the repository",
	}
	slices.Sort(problems)
	slices.Sort(want)
	if !slices.Equal(problems, want) {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

func TestAnchorsAreGitHubs(t *testing.T) {
	got := Anchors("# REST API and Swagger UI\n## OLM: bundles, catalog, images, install\n## Status\n## Status\n## `make demo`, step by step\n")
	want := []string{"rest-api-and-swagger-ui", "olm-bundles-catalog-images-install", "status", "status-1", "make-demo-step-by-step"}
	if !slices.Equal(got, want) {
		t.Errorf("Anchors = %v; want %v", got, want)
	}
}

func TestMakeTargetsSkipVariablesAndPlaceholders(t *testing.T) {
	for span, want := range map[string][]string{
		"make demo":                          {"demo"},
		"make -s verify lint":                {"verify", "lint"},
		"make run OPERATOR=gordon ARGS=--x":  {"run"},
		"make test-<module>":                 nil,
		"cd x && make e2e GINKGO_ARGS='--f'": {"e2e"},
		"REAL_NODE=required make robustness": {"robustness"},
		"kubectl get pods":                   nil,
	} {
		if got := MakeTargets(span); !slices.Equal(got, want) {
			t.Errorf("MakeTargets(%q) = %v; want %v", span, got, want)
		}
	}
}

func TestAPIReferenceListsFieldsRulesAndReasons(t *testing.T) {
	root := page(t, map[string]string{
		"operators/demo/config/crd/bases/demo.example.com_widgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: demo.example.com
  names: {kind: Widget, plural: widgets, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: A Widget widgets.
        properties:
          spec:
            required: [size]
            x-kubernetes-validations:
            - rule: self.size % 2 == 1
              message: size is odd
            properties:
              size: {type: integer, minimum: 1, maximum: 9, default: 3, description: "size of the widget,\n  in parts."}
              mode: {type: string, enum: [Fast, Slow], description: "mode | how"}
          status:
            properties:
              conditions: {type: array, items: {type: object, properties: {type: {type: string}}}}
`,
		"operators/demo/api/v1/conditions.go": "package v1\n\nconst (\n\t// ReadyCondition is True when it is.\n\tReadyCondition = \"Ready\"\n" +
			"\t// ReasonSpinning: the widget spins.\n\tReasonSpinning = \"Spinning\"\n\tReasonUndocumented = \"Undocumented\"\n\tOther = \"x\"\n)\n",
		"shared/conditions/vocabulary.go": "package conditions\n\n// ReasonStable: nothing changes.\nconst ReasonStable = \"Stable\"\n",
	})
	if err := WriteAPIReference(root); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "api", "demo.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Widget", "`demo.example.com/v1`, namespaced, plural `widgets`, short names `wd`.",
		"| `spec.size` | integer | required; default 3; minimum 1; maximum 9 | size of the widget, in parts. |",
		"| `spec.mode` | string | one of Fast, Slow | mode \\| how |",
		"| `status.conditions[].type` | string |  |  |",
		"| `spec` | `self.size % 2 == 1` | size is odd |",
		"| `ReadyCondition` | `Ready` | is True when it is. |",
		"| `ReasonSpinning` | `Spinning` | the widget spins. |",
		"| `ReasonUndocumented` | `Undocumented` |  |",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "`Other`") {
		t.Error("a constant that is neither a condition type nor a reason is listed")
	}
	index, err := os.ReadFile(filepath.Join(root, "docs", "api", "README.md"))
	if err != nil || !strings.Contains(string(index), "| [demo](demo.md) | `Widget` |") || !strings.Contains(string(index), "| `ReasonStable` | `Stable` | nothing changes. |") {
		t.Errorf("the index: %s, %v", index, err)
	}
}

func TestAPIReferenceListsEveryValidationRuleWhereItSits(t *testing.T) {
	root := page(t, map[string]string{
		"operators/demo/config/crd/bases/demo.example.com_gadgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: demo.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: size(self.metadata.name) <= 53
          message: the name is at most 53 characters, as <name>-config is at most 63
        properties:
          metadata: {type: object}
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.min <= self.max
              message: min is at most max
              fieldPath: .min
              reason: FieldValueForbidden
            properties:
              min: {type: integer}
              max: {type: integer}
              limits:
                type: object
                x-kubernetes-validations:
                - rule: self.cpu != '0'
                  messageExpression: "'cpu is ' + self.cpu"
                properties:
                  cpu: {type: string}
              tolerations:
                type: array
                x-kubernetes-validations:
                - rule: self.all(t, t.effect in ['NoSchedule', 'NoExecute'])
                  message: "an effect is NoSchedule or NoExecute"
                items:
                  type: object
                  x-kubernetes-validations:
                  - rule: has(self.key) || self.operator == 'Exists'
                    message: a toleration without a key has operator Exists
                  properties:
                    key: {type: string}
                    operator: {type: string}
                    effect: {type: string}
              matrix:
                type: array
                items:
                  type: array
                  x-kubernetes-validations:
                  - rule: size(self) == 3
                    message: a row has 3 cells
                  items: {type: integer}
              labels:
                type: object
                additionalProperties:
                  type: string
                  x-kubernetes-validations:
                  - rule: "!self.contains(' ')"
                    message: a label has no spaces
          status:
            type: object
            x-kubernetes-validations:
            - rule: self.ready <= self.total
              message: ready is at most total
            properties:
              ready: {type: integer}
              total: {type: integer}
`,
	})
	if err := WriteAPIReference(root); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "api", "demo.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "### Gadget: validation rules\n\nRefused at admission, with these messages:\n\n" +
		"| field | rule | message |\n| --- | --- | --- |\n" +
		"| the whole `Gadget` | `size(self.metadata.name) <= 53` | the name is at most 53 characters, as &lt;name>-config is at most 63 |\n" +
		"| `spec`, reported at `spec.min` | `self.min <= self.max` | min is at most max (reason `FieldValueForbidden`) |\n" +
		"| `spec.labels{}` | `!self.contains(' ')` | a label has no spaces |\n" +
		"| `spec.limits` | `self.cpu != '0'` | computed by `'cpu is ' + self.cpu` |\n" +
		"| `spec.matrix[]` | `size(self) == 3` | a row has 3 cells |\n" +
		"| `spec.tolerations` | `self.all(t, t.effect in ['NoSchedule', 'NoExecute'])` | an effect is NoSchedule or NoExecute |\n" +
		"| `spec.tolerations[]` | `has(self.key) \\|\\| self.operator == 'Exists'` | a toleration without a key has operator Exists |\n" +
		"| `status` | `self.ready <= self.total` | ready is at most total |\n\n"
	if !strings.Contains(string(page), want) {
		t.Errorf("the page lacks the rules table\n%s\nit is:\n%s", want, page)
	}
}
