#!/usr/bin/env bash
# olm.sh: OLM v0 on the local cluster, its operators running as local processes beside the
# control plane (bin/localcluster tracks them; `make cluster-down` stops them).
#
#   olm.sh up                        CRDs, namespace olm, OLMConfig, olm-operator and catalog-operator
#   olm.sh serve NAME FBC_DIR PORT   opm serving FBC_DIR on PORT, and CatalogSource NAME in olm
#                                    pointing at it (sourceType grpc, address, no image)
#   olm.sh run-bundle OPERATOR BUNDLE_DIR NAMESPACE
#                                    what `operator-sdk run bundle` does, from a bundle directory:
#                                    a one-bundle catalog, OperatorGroup, Subscription, the CSV
#
# Environment: KUBECTL, LOCALCLUSTER, LOCAL (.local), OLM_BIN (olm, catalog and crds/), OPM;
# for up: OPM_IMAGE and OLM_UTIL_IMAGE, the images of bundle unpack Jobs and catalog pods.
set -euo pipefail
: "${KUBECTL:?}" "${LOCALCLUSTER:?}" "${LOCAL:?}" "${OLM_BIN:?}" "${OPM:?}"
k() { "$KUBECTL" "$@"; }
source "$(dirname "${BASH_SOURCE[0]}")/real-node.sh"
OLM_NS=olm

# start NAME [FLAG...] -- EXE ARGS...: a tracked local process (FLAGs for localcluster start).
# OLM must not see CI: with CI set it wraps its client in a round-tripper that panics on
# objects without OLM's labels.
start() {
  local name=$1; shift
  env -u CI "$LOCALCLUSTER" start --dir "$LOCAL" --name "$name" "$@"
}

up() {
  k apply --server-side -f "$OLM_BIN/crds" >/dev/null
  k wait --for condition=Established --timeout=60s -f "$OLM_BIN/crds" >/dev/null
  # The pods OLM makes in its namespace (bundle unpack Jobs, catalog pods of image catalog
  # sources) run for real only on the real nodes: place them there when there are any. The
  # catalog operator then reaches those catalog pods by Service name: it resolves names with
  # the cluster's DNS.
  local dns=()
  if [ -n "$(real_nodes)" ]; then
    dns=(--cluster-dns)
    real_node_namespace "$OLM_NS"
  else
    k create namespace "$OLM_NS" --dry-run=client -o yaml | k apply -f - >/dev/null
  fi
  k apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1
kind: OLMConfig
metadata:
  name: cluster
EOF
  # Both bind :8080 for metrics and health; the second logs the bind error and works on.
  start olm-operator -- "$OLM_BIN/olm" --namespace="$OLM_NS" --writeStatusName=
  start catalog-operator "${dns[@]}" -- "$OLM_BIN/catalog" --kubeconfig="$KUBECONFIG" --namespace="$OLM_NS" --writeStatusName= \
    --opmImage="${OPM_IMAGE:?}" --util-image="${OLM_UTIL_IMAGE:?}"
  echo "OLM is running (logs: $LOCAL/logs/olm-operator.log, $LOCAL/logs/catalog-operator.log)"
}

# serve NAME FBC_DIR PORT: opm reads the catalog only when it starts; serving again restarts it.
serve() {
  local name=$1 dir=$2 port=$3
  start "$name-opm" -- "$OPM" serve "$dir" --port "$port" --pprof-addr=
  k apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: $name
  namespace: $OLM_NS
spec:
  displayName: Quintet ($name)
  publisher: Quintet
  sourceType: grpc
  address: 127.0.0.1:$port
EOF
  k wait -n "$OLM_NS" "catalogsource/$name" --timeout=120s \
    --for=jsonpath='{.status.connectionState.lastObservedState}'=READY >/dev/null
  echo "CatalogSource $OLM_NS/$name is READY (opm serve $dir on 127.0.0.1:$port)"
}

# run_bundle OPERATOR BUNDLE_DIR NAMESPACE: the bundle as the only one of a catalog, installed
# into NAMESPACE watching NAMESPACE, as `operator-sdk run bundle` does with a bundle image.
run_bundle() {
  local op=$1 bundle=$2 ns=$3
  local pkg channel csv dir="$LOCAL/olm/run-bundle-$op"
  pkg=$(awk '/bundle.package.v1:/ { print $2 }' "$bundle/metadata/annotations.yaml")
  channel=$(awk '/bundle.channel.default.v1:/ { print $2 }' "$bundle/metadata/annotations.yaml")
  mkdir -p "$dir"
  "$OPM" render "$bundle" -o yaml > "$dir/bundle.yaml"
  csv=$(awk '/^name: / { print $2; exit }' "$dir/bundle.yaml")
  cat > "$dir/package.yaml" <<EOF
schema: olm.package
name: $pkg
defaultChannel: $channel
---
schema: olm.channel
package: $pkg
name: $channel
entries:
- name: $csv
EOF
  "$OPM" validate "$dir"
  # Below the kernel's ephemeral ports (32768-60999), from which other processes' connections
  # and free-port picks (e2e runs in parallel) draw, so the port is free when it is bound.
  serve "$op-bundle" "$dir" 20052
  k create namespace "$ns" --dry-run=client -o yaml | k apply -f - >/dev/null
  k apply -f - >/dev/null <<EOF
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: $op
  namespace: $ns
spec:
  targetNamespaces: [$ns]
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: $pkg
  namespace: $ns
spec:
  name: $pkg
  channel: $channel
  source: $op-bundle
  sourceNamespace: $OLM_NS
  installPlanApproval: Automatic
EOF
  echo "Waiting for $csv in $ns"
  for _ in $(seq 180); do
    phase=$(k get csv -n "$ns" "$csv" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    [ "$phase" = Succeeded ] && { echo "$csv: Succeeded in $ns"; return 0; }
    sleep 1
  done
  echo "$csv did not succeed in $ns (phase ${phase:-none}):"
  k get subscription,installplan,csv -n "$ns"
  exit 1
}

case ${1:-} in
up) up ;;
serve) shift; serve "$@" ;;
run-bundle) shift; run_bundle "$@" ;;
*) sed -n '2,12p' "$0"; exit 2 ;;
esac
