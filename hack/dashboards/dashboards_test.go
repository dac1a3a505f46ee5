package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// queries are the PromQL expressions of a dashboard: every panel's targets and every query
// variable's label_values(...) selector.
func queries(t *testing.T, op string) []string {
	t.Helper()
	d, err := operators[op]().Build()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct{ Type, Query string } `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, p := range doc.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), [a-z_]+\)$`)
	for _, v := range doc.Templating.List {
		if v.Type == "query" {
			m := labelValues.FindStringSubmatch(v.Query)
			if m == nil {
				t.Fatalf("%s: variable query %q is not label_values(selector, label)", op, v.Query)
			}
			exprs = append(exprs, m[1])
		}
	}
	return exprs
}

// documentedMetrics are the metric names in the Metrics table of the operator's page.
func documentedMetrics(t *testing.T, op string) map[string]bool {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "operators", op+".md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(quintet_[a-z_]+)` \\|").FindAllStringSubmatch(string(page), -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatalf("docs/operators/%s.md documents no metric", op)
	}
	return names
}

// Every query parses as PromQL (Grafana's $__rate_interval as a duration) and reads only
// metrics that exist: the operator's documented ones, the shared condition metric, and
// controller-runtime's and Prometheus's own.
func TestEveryQueryParsesAndReadsMetricsThatExist(t *testing.T) {
	for op := range operators {
		t.Run(op, func(t *testing.T) {
			documented := documentedMetrics(t, op)
			exprs := queries(t, op)
			if len(exprs) < 10 {
				t.Fatalf("only %d queries", len(exprs))
			}
			for _, q := range exprs {
				expr, err := parser.NewParser(parser.Options{}).ParseExpr(strings.ReplaceAll(q, "$__rate_interval", "5m"))
				if err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
					if vs, ok := node.(*parser.VectorSelector); ok && !known(vs.Name, documented) {
						t.Errorf("%s reads %s, which %s's page does not document", q, vs.Name, op)
					}
					return nil
				})
			}
		})
	}
}

func known(metric string, documented map[string]bool) bool {
	switch {
	case documented[metric], metric == "up", metric == "quintet_resource_condition":
		return true
	case strings.HasPrefix(metric, "controller_runtime_reconcile_"), strings.HasPrefix(metric, "workqueue_"):
		return true
	}
	return false
}

// The check above fails on what it is for.
func TestTheQueryCheckFindsUnknownMetrics(t *testing.T) {
	documented := map[string]bool{"quintet_gordon_ready_pods": true}
	for metric, want := range map[string]bool{
		"quintet_gordon_ready_pods": true, "quintet_gordon_ready_pod": false, "up": true,
		"controller_runtime_reconcile_total": true, "controller_runtime_webhook_requests_total": false, "workqueue_depth": true,
	} {
		if got := known(metric, documented); got != want {
			t.Errorf("known(%s) = %t, want %t", metric, got, want)
		}
	}
}
