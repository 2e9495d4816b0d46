#!/usr/bin/env bash
# `npm run chart:lint`: helm lint (default values, then --strict for every charts/docverify/ci/*-values.yaml)
# and helm template for every scenario. helm comes from the test cluster's cache bin folder
# (scripts/fetch-kube-tools.sh) or PATH. The full checks (security settings, NetworkPolicies, RBAC, CRDs,
# server-side dry-run on a kube-apiserver) are the e2e/chart suites.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
chart="$here/../charts/docverify"
helm="${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}/bin/helm"
if [ ! -x "$helm" ]; then
  helm="$(command -v helm || true)"
fi
if [ -z "$helm" ]; then
  echo "chart:lint: helm not found; run \`npm run test:setup\` (or \`bash scripts/fetch-kube-tools.sh\`)." >&2
  exit 1
fi
# Helm's caches in a temp dir, not the user's.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export HELM_CACHE_HOME="$tmp/cache" HELM_CONFIG_HOME="$tmp/config" HELM_DATA_HOME="$tmp/data"

failed=0
echo "== helm lint (default values)"
"$helm" lint "$chart" || failed=1
for values in "$chart"/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  echo "== helm lint --strict + template: ci/$name"
  "$helm" lint --strict "$chart" --values "$values" || failed=1
  if out="$("$helm" template docverify "$chart" --namespace docverify --values "$values")"; then
    echo "rendered $(grep -c '^kind:' <<<"$out") objects"
  else
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "chart:lint: failed" >&2
  exit 1
fi
echo "chart:lint: ok"
