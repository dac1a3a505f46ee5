#!/usr/bin/env bash
# s3.sh: the local cluster's S3 store (make s3-up runs it), from this machine.
#
#   s3.sh wait                     wait until the store's pod is Ready (5 minutes at most); when
#                                  it is not, say why: the pod's events and state, then what the
#                                  store's process is doing on the real node, and its logs
#   s3.sh bucket NAME              make bucket NAME (nothing when it exists)
#   s3.sh aws-secret NAMESPACE NAME
#                                  a Secret NAME in NAMESPACE holding the store's root
#                                  credentials as the CoreOS operator's awsSecret: an AWS
#                                  shared credentials file under the key `credentials`
#
# The store's Service is reached at its cluster IP, which this machine routes to the real
# node's pods. Environment: KUBECTL.
set -euo pipefail
: "${KUBECTL:?}"
k() { "$KUBECTL" "$@"; }
NS=quintet-s3

root_key() { k -n "$NS" get secret versitygw-root -o "jsonpath={.data.$1}" | base64 -d; }

# diagnose prints why the store's pod is not Ready, most telling last (a CI log is often read
# from its end): the claims, pod and events; the store's process on the real node (its state,
# what it waits in, the sockets its network namespace listens on); its logs, this start's and
# the last's.
diagnose() {
  k -n "$NS" describe persistentvolumeclaims,pods
  k -n "$NS" get events --sort-by=.lastTimestamp
  local pid
  for pid in $(pgrep -x versitygw); do
    echo "--- versitygw process $pid on the real node: state, seconds running, wait channel"
    ps -o pid=,stat=,etimes=,wchan:32=,args= -p "$pid" || true
    cat "/proc/$pid/stack" 2>/dev/null | head -12 || true
    echo "--- listening in its network namespace"
    nsenter -t "$pid" -n ss -ltn 2>/dev/null || true
  done
  echo "--- the store's log, the last start's"
  k -n "$NS" logs versitygw-0 --previous --tail=20 2>/dev/null || echo "(none)"
  echo "--- the store's log, this start's"
  k -n "$NS" logs versitygw-0 --tail=20 || true
}

case "${1:-}" in
wait)
  # The pod's Ready condition (the kubelet's), not the StatefulSet's status: on a loaded machine
  # kube-controller-manager has been seen updating a StatefulSet's status minutes late.
  if ! { k -n "$NS" wait --for=create pod/versitygw-0 --timeout=5m >/dev/null &&
         k -n "$NS" wait --for=condition=Ready pod/versitygw-0 --timeout=5m; }; then
    diagnose; exit 1
  fi
  ;;
bucket)
  name=${2:?bucket name}
  endpoint="http://$(k -n "$NS" get service s3 -o jsonpath='{.spec.clusterIP}'):9000"
  # S3's CreateBucket, signed with SigV4 by curl (S3 wants the payload's SHA-256 in a header,
  # here the empty body's): 200 when made, 409 when it exists.
  answer=$(mktemp)
  trap 'rm -f "$answer"' EXIT
  code=$(curl -sS --retry 60 --retry-connrefused --retry-delay 2 --retry-max-time 180 -o "$answer" -w '%{http_code}' -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$(root_key access-key):$(root_key secret-key)" \
    -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" "$endpoint/$name")
  case "$code" in
    200) echo "Made bucket $name in the S3 store" ;;
    409) ;;
    *) echo "making bucket $name in the S3 store at $endpoint: HTTP $code: $(cat "$answer")" >&2; exit 1 ;;
  esac
  ;;
aws-secret)
  ns=${2:?namespace} name=${3:?secret name}
  printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$(root_key access-key)" "$(root_key secret-key)" |
    k -n "$ns" create secret generic "$name" --from-file=credentials=/dev/stdin --dry-run=client -o yaml | k apply -f - >/dev/null
  ;;
*)
  sed -n '2,14p' "$0"; exit 2 ;;
esac
