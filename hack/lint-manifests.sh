#!/usr/bin/env bash
# lint-manifests.sh OPERATOR: what a platform team's CI runs on what it installs, on every way
# the operator ships: config/default, config/default with its optional components (config/api
# and config/prometheus), its Helm chart with default values and with every option on (on a
# cluster serving prometheus-operator's kinds), its samples, and (minimart) the store chart its
# releases install. kubeconform -strict validates each object against the schemas of
# Kubernetes $KUBE_VERSION, of our CRDs and of prometheus-operator's ServiceMonitor and
# PrometheusRule (SCHEMAS, written offline by `manifests schemas`);
# kube-score scores them, warnings included. Checks left out on purpose are the objects'
# kube-score/ignore annotations, each with its reason (docs/development.md#linters).
# Env: KUBECTL HELM KUBECONFORM KUBE_SCORE SCHEMAS OUT.
set -euo pipefail
op=$1
out="$OUT/$op"
rm -rf "$out" && mkdir -p "$out/overlay"

root=$(realpath --relative-to="$out/overlay" .)
printf 'resources:\n- %s/operators/%s/config/default\ncomponents:\n- %s/operators/%s/config/api\n- %s/operators/%s/config/prometheus\n' \
  "$root" "$op" "$root" "$op" "$root" "$op" >"$out/overlay/kustomization.yaml"
"$KUBECTL" kustomize "operators/$op/config/default" >"$out/default.yaml"
"$KUBECTL" kustomize "$out/overlay" >"$out/default-with-components.yaml"
"$HELM" template "$op" "operators/$op/dist/chart" --namespace "$op-system" >"$out/chart.yaml"
"$HELM" template "$op" "operators/$op/dist/chart" --namespace "$op-system" \
  --set api.enable=true --set 'watchNamespaces={team-a,team-b}' --set prometheus.labels.release=prometheus \
  --api-versions monitoring.coreos.com/v1/ServiceMonitor >"$out/chart-with-options.yaml"
if [ -d "operators/$op/helm-charts" ]; then
  for chart in "operators/$op"/helm-charts/*/; do
    name=$(basename "$chart")
    "$HELM" template "$name" "$chart" --namespace store >"$out/$name-release.yaml"
    "$HELM" template "$name" "$chart" --namespace store --set service.type=ClusterIP >"$out/$name-release-clusterip.yaml"
  done
fi
"$KUBECTL" kustomize "operators/$op/config/samples" >"$out/samples.yaml"

"$KUBECONFORM" -strict -summary -kubernetes-version "${KUBE_VERSION#v}" \
  -schema-location "$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out"/*.yaml

status=0
for f in "$out"/*.yaml; do
  [ "$(basename "$f")" = samples.yaml ] && continue
  findings=$("$KUBE_SCORE" score --output-format ci --exit-one-on-warning "$f") || status=1
  grep -v '^\[OK\]\|^\[SKIPPED\]' <<<"$findings" | sed "s|^|kube-score $op/$(basename "$f"): |" || true
done
[ $status -eq 0 ] && echo "kube-score: $op: no finding in $(ls "$out"/*.yaml | grep -cv samples.yaml) renderings"
exit $status
