#!/usr/bin/env bash
# lint.sh TOOLS DOC...: lint OpenAPI documents with Spectral (.spectral.yaml: spectral:oas) and
# Redocly (redocly.yaml: recommended), both installed under TOOLS (npm ci of this folder), and
# fail on any finding, hints and warnings included. First it checks that the linters still find
# what testdata/missing-description.json lacks: a check that finds nothing there is broken.
# make lint-openapi runs it on docs/api/openapi/*.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=$1
shift

spectral() { "$tools/node_modules/.bin/spectral" lint --ruleset "$here/.spectral.yaml" --fail-severity=hint "$@"; }
redocly() {
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		"$tools/node_modules/.bin/redocly" lint --config "$here/redocly.yaml" --lint-config=error "$@"
}
# redocly_rules prints the rule of each problem Redocly finds in one document, one a line
# (redocly lint fails on errors only, so its JSON report is read instead of its exit status;
# a report that is not there fails the script).
redocly_rules() {
	{ redocly --format=json "$1" 2>/dev/null || true; } |
		node -e 'for (const p of JSON.parse(require("fs").readFileSync(0, "utf8")).problems) console.log(p.ruleId)'
}

fixture=$here/testdata/missing-description.json
if out=$(spectral --format=text "$fixture" 2>&1) || ! grep -q operation-description <<<"$out"; then
	echo "$out"
	echo "lint-openapi: Spectral no longer finds operation-description in ${fixture#"$PWD"/}: the check is broken"
	exit 1
fi
rules=$(redocly_rules "$fixture")
if [ "$rules" != tag-description ]; then
	redocly --format=stylish "$fixture" || true
	echo "lint-openapi: Redocly no longer finds tag-description (alone) in ${fixture#"$PWD"/}: the check is broken"
	exit 1
fi
echo "lint-openapi: the fixture ${fixture#"$PWD"/} fails as it should (Spectral: operation-description; Redocly: tag-description)"

spectral "$@"
for doc in "$@"; do
	rules=$(redocly_rules "$doc")
	if [ -n "$rules" ]; then
		redocly --format=stylish "$doc" || true
		echo "lint-openapi: Redocly finds problems in $doc"
		exit 1
	fi
	echo "lint-openapi: $doc: Spectral (spectral:oas) and Redocly (recommended): no findings"
done
