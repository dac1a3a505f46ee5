package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// runbookBase is where every alert's runbook_url points: a heading of the operator's page.
const runbookBase = "https://github.com/quintet-operators/quintet/blob/main/"

// prometheusRule is the part of a PrometheusRule the checks read.
type prometheusRule struct {
	Kind string `json:"kind"`
	Spec struct {
		Groups []ruleGroup `json:"groups"`
	} `json:"spec"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ruleTests is the part of a promtool test file the checks read.
type ruleTests struct {
	RuleFiles []string   `json:"rule_files"`
	Tests     []ruleTest `json:"tests"`
}

type ruleTest struct {
	Name   string      `json:"name"`
	Alerts []alertTest `json:"alert_rule_test"`
}

// alertTest is one evaluation of an alert: it fires when ExpAlerts is not empty.
type alertTest struct {
	AlertName string           `json:"alertname"`
	ExpAlerts []map[string]any `json:"exp_alerts"`
}

// runRules checks a PrometheusRule against the operator's page and its promtool tests, then
// writes what promtool reads into --out: the rule groups (rules.yaml) and the tests.
//
//	manifests rules --docs docs/operators/<op>.md --tests rules_test.yaml --out DIR prometheus_rule.yaml
func runRules(args []string) error {
	flags := flag.NewFlagSet("rules", flag.ContinueOnError)
	docs := flags.String("docs", "", "the operator's page, which holds a heading per alert (its runbook)")
	tests := flags.String("tests", "", "the promtool test file of the rules")
	out := flags.String("out", "", "where to write rules.yaml and the test file for promtool")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *docs == "" || *tests == "" || *out == "" || flags.NArg() != 1 {
		return errors.New("usage: manifests rules --docs PAGE.md --tests TESTS.yaml --out DIR PROMETHEUS_RULE.yaml")
	}
	var pr prometheusRule
	if err := readYAML(flags.Arg(0), &pr); err != nil {
		return err
	}
	var rt ruleTests
	if err := readYAML(*tests, &rt); err != nil {
		return err
	}
	page, err := os.ReadFile(*docs)
	if err != nil {
		return err
	}
	if problems := checkRules(pr, rt, *docs, headingAnchors(page)); len(problems) > 0 {
		return fmt.Errorf("%s:\n  %s", flags.Arg(0), strings.Join(problems, "\n  "))
	}
	groups, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		return err
	}
	testFile, err := os.ReadFile(*tests)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "rules.yaml"), groups, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, filepath.Base(*tests)), testFile, 0o644)
}

func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkRules says what an operator's alerts lack: a severity that says whom it wakes, a
// summary and a description, a runbook that exists on the operator's page, and promtool tests
// in which the alert both fires and stays silent. It is pure.
func checkRules(pr prometheusRule, rt ruleTests, docsPath string, anchors []string) []string {
	var problems []string
	if pr.Kind != "PrometheusRule" {
		problems = append(problems, fmt.Sprintf("kind is %q, not PrometheusRule", pr.Kind))
	}
	if !slices.Equal(rt.RuleFiles, []string{"rules.yaml"}) {
		problems = append(problems, "the tests' rule_files must be [rules.yaml], the file this check writes")
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, t := range rt.Tests {
		for _, a := range t.Alerts {
			if len(a.ExpAlerts) > 0 {
				fires[a.AlertName] = true
			} else {
				silent[a.AlertName] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if seen[r.Alert] {
				problems = append(problems, r.Alert+": defined twice")
			}
			seen[r.Alert] = true
			problems = append(problems, checkAlert(r, docsPath, anchors)...)
			if !fires[r.Alert] {
				problems = append(problems, r.Alert+": no test in which it fires")
			}
			if !silent[r.Alert] {
				problems = append(problems, r.Alert+": no test in which it stays silent")
			}
		}
	}
	var undefined []string
	for name := range fires {
		if !seen[name] {
			undefined = append(undefined, name+": tested but not defined")
		}
	}
	slices.Sort(undefined)
	return append(problems, undefined...)
}

// requiredAnnotations are what every alert says besides its runbook.
var requiredAnnotations = []string{"summary", "description"}

// checkAlert checks one alert's labels and annotations.
func checkAlert(r rule, docsPath string, anchors []string) []string {
	var problems []string
	if s := r.Labels["severity"]; s != "warning" && s != "critical" {
		problems = append(problems, fmt.Sprintf("%s: severity %q is neither warning nor critical", r.Alert, s))
	}
	for _, a := range requiredAnnotations {
		if strings.TrimSpace(r.Annotations[a]) == "" {
			problems = append(problems, r.Alert+": no "+a)
		}
	}
	want := runbookBase + filepath.ToSlash(docsPath) + "#" + strings.ToLower(r.Alert)
	switch url := r.Annotations["runbook_url"]; {
	case url != want:
		problems = append(problems, fmt.Sprintf("%s: runbook_url is %q, not %q", r.Alert, url, want))
	case !slices.Contains(anchors, strings.ToLower(r.Alert)):
		problems = append(problems, fmt.Sprintf("%s: %s has no heading %q (its runbook)", r.Alert, docsPath, r.Alert))
	}
	return problems
}

// headingAnchors are the anchors GitHub gives a Markdown page's headings: lower case, spaces
// as hyphens, punctuation but hyphens and underscores dropped. Headings in code blocks are not
// headings.
func headingAnchors(page []byte) []string {
	var anchors []string
	inCode := false
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	scanner := bufio.NewScanner(bytes.NewReader(page))
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if inCode || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		text = drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(text)), "")
		anchors = append(anchors, strings.ReplaceAll(text, " ", "-"))
	}
	return anchors
}
