#!/usr/bin/env bash
# s3.sh: the local cluster's S3 store (make s3-up runs it), from this machine.
#
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

case "${1:-}" in
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
  sed -n '2,11p' "$0"; exit 2 ;;
esac
