package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHeadingAnchorsAreGitHubs(t *testing.T) {
	page := []byte("# gordon\n## Runbooks\n### GordonPodsNotReady\n```sh\n# not a heading\n```\n### What `it` does, today?\n#nospace\n")
	want := []string{"gordon", "runbooks", "gordonpodsnotready", "what-it-does-today"}
	if got := headingAnchors(page); !slices.Equal(got, want) {
		t.Errorf("headingAnchors = %q, want %q", got, want)
	}
}

func TestCheckRulesSaysWhatAnAlertLacks(t *testing.T) {
	const docs = "docs/operators/gordon.md"
	good := rule{Alert: "GordonDown", Expr: "up == 0", Labels: map[string]string{"severity": "critical"},
		Annotations: map[string]string{"summary": "s", "description": "d", "runbook_url": runbookBase + docs + "#gordondown"}}
	pr := prometheusRule{Kind: "PrometheusRule"}
	pr.Spec.Groups = []ruleGroup{{Name: "g", Rules: []rule{good, {Record: "job:up:sum", Expr: "sum(up)"}}}}
	tests := func(fires []string, silent ...string) ruleTests {
		var t ruleTest
		for _, a := range fires {
			t.Alerts = append(t.Alerts, alertTest{AlertName: a, ExpAlerts: []map[string]any{{"exp_labels": nil}}})
		}
		for _, a := range silent {
			t.Alerts = append(t.Alerts, alertTest{AlertName: a})
		}
		return ruleTests{RuleFiles: []string{"rules.yaml"}, Tests: []ruleTest{t}}
	}
	if got := checkRules(pr, tests([]string{"GordonDown"}, "GordonDown"), docs, []string{"gordondown"}); len(got) != 0 {
		t.Fatalf("a complete alert: %q", got)
	}

	bad := good
	bad.Labels = map[string]string{"severity": "page"}
	bad.Annotations = map[string]string{"runbook_url": runbookBase + "docs/operators/other.md#gordondown"}
	pr.Spec.Groups[0].Rules = []rule{bad}
	got := checkRules(pr, tests([]string{"Unknown"}), docs, nil)
	want := []string{
		`GordonDown: severity "page" is neither warning nor critical`,
		"GordonDown: no summary",
		"GordonDown: no description",
		`GordonDown: runbook_url is "` + runbookBase + `docs/operators/other.md#gordondown", not "` + runbookBase + docs + `#gordondown"`,
		"GordonDown: no test in which it fires",
		"GordonDown: no test in which it stays silent",
		"Unknown: tested but not defined",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkRules =\n%q\nwant\n%q", got, want)
	}

	pr.Spec.Groups[0].Rules = []rule{good}
	got = checkRules(pr, tests([]string{"GordonDown"}, "GordonDown"), docs, []string{"runbooks"})
	if want := []string{`GordonDown: ` + docs + ` has no heading "GordonDown" (its runbook)`}; !slices.Equal(got, want) {
		t.Errorf("a runbook missing from the page: %q", got)
	}
}

// Each operator's shipped rules pass the checks against its own page and tests.
func TestEveryOperatorsRulesPassTheirChecks(t *testing.T) {
	t.Chdir("../..")
	rules, err := filepath.Glob("operators/*/config/prometheus/prometheus_rule.yaml")
	if err != nil || len(rules) == 0 {
		t.Fatalf("no operator's rules found: %v", err)
	}
	for _, path := range rules {
		dir := filepath.Dir(path)
		op := filepath.Base(filepath.Dir(filepath.Dir(dir)))
		t.Run(op, func(t *testing.T) {
			out := t.TempDir()
			err := runRules([]string{"--docs", "docs/operators/" + op + ".md", "--tests", filepath.Join(dir, "rules_test.yaml"), "--out", out, path})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(out, "rules.yaml")); err != nil {
				t.Error(err)
			}
		})
	}
}
