package main

import (
	"fmt"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// deploymentTemplate writes the manager's Deployment with what values set: replicas, image,
// leader election, metrics, watched namespaces, resources, security contexts, scheduling.
// Everything else (probes, ports, labels, the service account) is kustomize's.

// imagePlaceholder stands for the manager's image until the template is written.
const imagePlaceholder = "@@IMAGE@@"

func deploymentTemplate(o chartOptions, u *unstructured.Unstructured) (string, error) {
	u = u.DeepCopy()
	u.SetNamespace(phNamespace)
	_ = unstructured.SetNestedField(u.Object, "@@REPLICAS@@", "spec", "replicas")
	pod, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	containers, _, _ := unstructured.NestedSlice(pod, "containers")
	var args []any
	for _, c := range containers {
		c := c.(map[string]any)
		if c["name"] != managerContainer {
			continue
		}
		args, _ = c["args"].([]any)
		c["args"] = []any{"@@ARGS@@"}
		image := c["image"]
		c["image"] = imagePlaceholder
		c["imagePullPolicy"] = "@@PULL_POLICY@@"
		c["resources"] = "@@RESOURCES@@"
		c["securityContext"] = "@@SECURITY_CONTEXT@@"
		env, _ := c["env"].([]any)
		c["env"] = append(env, "@@ENV@@")
		for _, e := range env {
			switch e := e.(map[string]any); {
			case e["name"] == watchNamespaceEnv:
				e["value"] = "@@WATCH@@"
			case e["value"] == image: // the manager's own image (etcd-cluster's OPERATOR_IMAGE) follows the chart's
				e["value"] = imagePlaceholder
			}
		}
		ports, _ := c["ports"].([]any)
		for _, p := range ports {
			if p := p.(map[string]any); p["name"] == "metrics" {
				p["containerPort"] = "@@METRICS_PORT@@"
			}
		}
		c["ports"] = append(ports, "@@API_PORT@@")
	}
	if args == nil {
		return "", fmt.Errorf("no manager container with args")
	}
	pod["containers"] = containers
	pod["securityContext"] = "@@POD_SECURITY_CONTEXT@@"
	pod["nodeSelector"] = "@@NODE_SELECTOR@@"
	pod["tolerations"] = "@@TOLERATIONS@@"
	pod["affinity"] = "@@AFFINITY@@"
	_ = unstructured.SetNestedMap(u.Object, pod, "spec", "template", "spec")
	// The pod template changes with the values that do not reach it otherwise: none do today.
	toYAML := func(key, value string) func(string) string {
		return func(indent string) string {
			return fmt.Sprintf("%s%s:\n%s  {{- toYaml %s | nindent %d }}", indent, key, indent, value, len(indent)+2)
		}
	}
	with := func(key, value string) func(string) string {
		return func(indent string) string {
			return fmt.Sprintf("%s{{- with %s }}\n%s%s:\n%s  {{- toYaml . | nindent %d }}\n%s{{- end }}",
				indent, value, indent, key, indent, len(indent)+2, indent)
		}
	}
	return toTemplate(u.Object, map[string]string{
		"@@REPLICAS@@":     "{{ .Values.manager.replicas }}",
		imagePlaceholder:   `"{{ .Values.manager.image.repository }}:{{ .Values.manager.image.tag | default .Chart.AppVersion }}"`,
		"@@PULL_POLICY@@":  "{{ .Values.manager.image.pullPolicy }}",
		"@@WATCH@@":        fmt.Sprintf("{{ include %q . | quote }}", o.name+".watchNamespaces"),
		"@@METRICS_PORT@@": "{{ .Values.metrics.port }}",
	}, map[string]func(string) string{
		"@@ARGS@@": argsBlock(args),
		"@@API_PORT@@": func(indent string) string {
			return indent + "{{- if .Values.api.enable }}\n" + indent + "- containerPort: {{ .Values.api.port }}\n" +
				indent + "  name: api\n" + indent + "  protocol: TCP\n" + indent + "{{- end }}"
		},
		"@@ENV@@": func(indent string) string {
			return indent + "{{- with .Values.manager.env }}\n" + indent + fmt.Sprintf("{{- toYaml . | nindent %d }}\n", len(indent)) + indent + "{{- end }}"
		},
		"@@RESOURCES@@":            toYAML("resources", ".Values.manager.resources"),
		"@@SECURITY_CONTEXT@@":     toYAML("securityContext", ".Values.manager.securityContext"),
		"@@POD_SECURITY_CONTEXT@@": toYAML("securityContext", ".Values.manager.podSecurityContext"),
		"@@NODE_SELECTOR@@":        with("nodeSelector", ".Values.manager.nodeSelector"),
		"@@TOLERATIONS@@":          with("tolerations", ".Values.manager.tolerations"),
		"@@AFFINITY@@":             with("affinity", ".Values.manager.affinity"),
	})
}

// argsBlock templates the manager's arguments: --leader-elect by manager.leaderElection, the
// metrics address by metrics.enable and metrics.port, --metrics-secure=false when
// metrics.secure is off, the REST API's address by api.enable and api.port (as config/api
// adds it); the others as kustomize has them.
func argsBlock(args []any) func(string) string {
	return func(indent string) string {
		var lines []string
		for _, a := range args {
			arg := fmt.Sprint(a)
			switch {
			case arg == "--leader-elect":
				lines = append(lines, indent+"{{- if .Values.manager.leaderElection }}", indent+"- --leader-elect", indent+"{{- end }}")
			case strings.HasPrefix(arg, "--metrics-bind-address="):
				lines = append(lines, indent+"- --metrics-bind-address={{ if .Values.metrics.enable }}:{{ .Values.metrics.port }}{{ else }}0{{ end }}",
					indent+"{{- if not .Values.metrics.secure }}", indent+"- --metrics-secure=false", indent+"{{- end }}")
			default:
				lines = append(lines, indent+"- "+arg)
			}
		}
		lines = append(lines, indent+"{{- if .Values.api.enable }}", indent+"- --api-bind-address=:{{ .Values.api.port }}", indent+"{{- end }}")
		return strings.Join(lines, "\n")
	}
}

func chartYAML(o chartOptions, csv *operatorsv1alpha1.ClusterServiceVersion) string {
	description := strings.SplitN(strings.TrimSpace(csv.Annotations["description"]), "\n", 2)[0]
	return fmt.Sprintf(`# Generated by hack/bundle chart from config/manifests: do not edit.
apiVersion: v2
name: %[1]s
description: %[2]q
type: application
version: %[3]s
appVersion: v%[3]s
home: https://github.com/quintet-operators/quintet
sources:
- https://github.com/quintet-operators/quintet/tree/main/operators/%[1]s
keywords: [%[4]s]
maintainers:
- name: Quintet maintainers
  email: maintainers@quintet-operators.dev
icon: %[5]s
`, o.name, description, o.versionText, strings.Join(csv.Spec.Keywords, ", "), icon(csv))
}

// managerDefaults are the manager container's resources and security contexts as
// config/manager sets them, written as values.yaml lines under manager.
func managerDefaults(b *parts) (string, error) {
	if len(b.deployments) != 1 {
		return "", fmt.Errorf("want one Deployment in config/default, found %d", len(b.deployments))
	}
	pod := b.deployments[0].Spec.Template.Spec
	for _, c := range pod.Containers {
		if c.Name != managerContainer {
			continue
		}
		data, err := yaml.Marshal(map[string]any{
			"resources": c.Resources, "securityContext": c.SecurityContext, "podSecurityContext": pod.SecurityContext,
		})
		if err != nil {
			return "", err
		}
		return "  " + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n  ") + "\n", nil
	}
	return "", fmt.Errorf("no manager container")
}

// icon is the CSV's icon as a data URL.
func icon(csv *operatorsv1alpha1.ClusterServiceVersion) string {
	if len(csv.Spec.Icon) == 0 {
		return "https://github.com/quintet-operators/quintet"
	}
	return "data:" + csv.Spec.Icon[0].MediaType + ";base64," + csv.Spec.Icon[0].Data
}

func valuesYAML(o chartOptions, allNamespaces bool, defaults string) string {
	scope := "all namespaces"
	if !allNamespaces {
		scope = "the release namespace only (this operator is installed per namespace)"
	}
	return fmt.Sprintf(`# Generated by hack/bundle chart from config/manifests: do not edit. values.schema.json
# checks every value.

manager:
  image:
    repository: %[1]s
    # tag defaults to the chart's appVersion (v%[2]s).
    tag: ""
    pullPolicy: IfNotPresent
  replicas: 1
  # Elect a leader, so that only one replica reconciles at a time.
  leaderElection: true
  # More environment variables of the manager container, such as an operator's policy
  # settings (docs/security.md): [{name: BACKUP_S3_ENDPOINTS, value: s3.example.svc}].
  env: []
  # As config/manager sets them: the restricted Pod Security level.
%[4]s  nodeSelector: {}
  tolerations: []
  affinity: {}

# The namespaces the operator watches. Empty: %[3]s.
# A list: those namespaces, with the manager's permissions as Roles in each of them.
watchNamespaces: []

metrics:
  # Serve /metrics on port, behind the API server's authentication (secure) or over plain HTTP.
  enable: true
  port: 8443
  secure: true

crd:
  # Install the CRDs with the chart; keep them (and every custom resource) on uninstall.
  enable: true
  keep: true

api:
  # Serve the REST API with Swagger UI (/api/v1/docs/) over HTTPS on port, and the Service
  # <release>-...-controller-manager-api on 443. It acts with each caller's bearer token only.
  enable: false
  port: 8082

networkPolicy:
  # NetworkPolicies for the manager's pod, where the cluster's network enforces them: ingress
  # only to its metrics port, from metricsFrom (where Prometheus runs), and with api.enable to
  # the REST API's, from apiFrom. The kubelet's probes come from the node and are let through.
  enable: true
  metricsFrom:
  - namespaceSelector:
      matchLabels:
        metrics: enabled
  apiFrom:
  - namespaceSelector:
      matchLabels:
        rest-api: enabled

prometheus:
  # A ServiceMonitor for the manager's metrics (with metrics.secure) and the operator's
  # alerting rules, a PrometheusRule (runbooks: docs/operators/%[5]s.md#runbooks), for the
  # cluster's prometheus-operator. auto: only where the cluster serves their kinds
  # (monitoring.coreos.com/v1), so that an install without prometheus-operator works;
  # true: always (helm template for another cluster); false: never. The Prometheus's service
  # account needs get on the non-resource URL /metrics (the metrics-reader ClusterRole).
  enable: auto
  # Labels on both, for a Prometheus that selects them by label (kube-prometheus-stack's
  # default: release: <its release>).
  labels: {}
  # The operator's Grafana dashboard, in a ConfigMap with these labels, which Grafana's
  # dashboard sidecar loads (kube-prometheus-stack's looks for grafana_dashboard: "1").
  dashboard:
    enable: true
    labels:
      grafana_dashboard: "1"
`, o.repository, o.versionText, scope, defaults, o.name)
}

func notes(o chartOptions, b *parts) string {
	kinds := make([]string, 0, len(b.crds))
	for _, crd := range b.crds {
		kinds = append(kinds, crd.Spec.Names.Kind)
	}
	return fmt.Sprintf(`The %[1]s operator is installed in {{ .Release.Namespace }}
(manager image {{ .Values.manager.image.repository }}:{{ .Values.manager.image.tag | default .Chart.AppVersion }}),
watching {{ include "%[1]s.watchNamespaces" . | default "all namespaces" }}.
{{- if .Values.crd.enable }}
Its CRDs (%[2]s) are installed{{ if .Values.crd.keep }} and stay on uninstall, with your custom resources{{ end }}.
{{- end }}

{{- if .Values.api.enable }}
Its REST API, with Swagger UI, answers at https://%[1]s-controller-manager-api.{{ .Release.Namespace }}.svc/api/v1/docs/
(a self-signed certificate; it acts with your token: kubectl create token <service account>).
{{- end }}

Try its sample, from a checkout of the repository, in a watched namespace:
  kubectl apply -n <namespace> -k operators/%[1]s/config/samples
`, o.name, strings.Join(kinds, ", "))
}

// helpers are the chart's named templates; CHART is the chart's name.
const helpers = `{{/* The namespaces the manager watches, comma-separated; empty for all. */}}
{{- define "CHART.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else if ne (include "CHART.allNamespaces" .) "true" -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end }}
`

// valuesSchema rejects values the chart cannot render into a working install.
const valuesSchema = `{
  "$schema": "https://json-schema.org/draft-07/schema#",
  "type": "object",
  "additionalProperties": false,
  "required": ["manager", "watchNamespaces", "metrics", "crd", "api", "networkPolicy", "prometheus"],
  "definitions": {
    "networkPolicyPeer": {
      "type": "object",
      "additionalProperties": false,
      "minProperties": 1,
      "properties": {
        "podSelector": {"type": "object"},
        "namespaceSelector": {"type": "object"},
        "ipBlock": {"type": "object", "required": ["cidr"]}
      }
    }
  },
  "properties": {
    "manager": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "image": {
          "type": "object",
          "additionalProperties": false,
          "required": ["repository", "pullPolicy"],
          "properties": {
            "repository": {"type": "string", "minLength": 1, "pattern": "^[^\\s:@]+(:[0-9]+)?(/[^\\s:@]+)*$"},
            "tag": {"type": "string", "pattern": "^([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$"},
            "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}
          }
        },
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        "leaderElection": {"type": "boolean"},
        "resources": {"type": "object"},
        "podSecurityContext": {"type": "object"},
        "securityContext": {"type": "object"},
        "env": {
          "type": "array",
          "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}
        },
        "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        "tolerations": {"type": "array", "items": {"type": "object"}},
        "affinity": {"type": "object"}
      }
    },
    "watchNamespaces": {
      "type": "array",
      "uniqueItems": true,
      "items": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
    },
    "metrics": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enable": {"type": "boolean"},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "secure": {"type": "boolean"}
      }
    },
    "crd": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enable": {"type": "boolean"},
        "keep": {"type": "boolean"}
      }
    },
    "api": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enable": {"type": "boolean"},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535}
      }
    },
    "networkPolicy": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enable": {"type": "boolean"},
        "metricsFrom": {"type": "array", "items": {"$ref": "#/definitions/networkPolicyPeer"}},
        "apiFrom": {"type": "array", "items": {"$ref": "#/definitions/networkPolicyPeer"}}
      }
    },
    "prometheus": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "enable": {"enum": ["auto", true, false]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "dashboard": {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "enable": {"type": "boolean"},
            "labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}}
          }
        }
      }
    }
  }
}
`
