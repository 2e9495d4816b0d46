#!/usr/bin/env bash
# Builds the cluster e2e's kube-apiserver and etcd from their Go modules (pinned in e2e/cluster/go/go.mod)
# into a cache outside the clone:
#   ${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}/bin/{kube-apiserver,etcd}
# GOCACHE and GOMODCACHE live in the same cache folder, so a warm run rebuilds nothing. When the binaries
# of the pinned versions are already there (bin/versions.stamp matches go.mod + go.sum) it does nothing.
# Needs Go >= 1.25 (`go` on PATH, /usr/local/go/bin/go, or $GO) and the Go module proxy.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$root/e2e/cluster/go"
cache="${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}"
bin="$cache/bin"
stamp="$bin/versions.stamp"

go_bin="${GO:-}"
if [ -z "$go_bin" ]; then
  if command -v go >/dev/null 2>&1; then go_bin="$(command -v go)"; else go_bin=/usr/local/go/bin/go; fi
fi
if ! [ -x "$go_bin" ] && ! command -v "$go_bin" >/dev/null 2>&1; then
  echo "build-test-cluster: Go was not found (looked at PATH and /usr/local/go/bin/go); install Go >= 1.25 or set GO=/path/to/go." >&2
  exit 1
fi

pinned() { awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$module_dir/go.mod"; }
kube_version="$(pinned k8s.io/kubernetes)"
etcd_version="$(pinned go.etcd.io/etcd/server/v3)"
pins_sum="$(cat "$module_dir/go.mod" "$module_dir/go.sum" | sha256sum | cut -d' ' -f1)"

# Stamp the release into the apiserver as Kubernetes' own build does (hack/lib/version.sh), so /version
# and kubectl see v1.35.x rather than v0.0.0-master; the build date is the module's publication time.
kube_minor="${kube_version#v1.}"
kube_minor="${kube_minor%%.*}"
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$kube_version -X $v.gitMajor=1 -X $v.gitMinor=$kube_minor -X $v.gitTreeState=clean"
ldflags+=" -X $v.buildDate=KUBE_BUILD_DATE -X k8s.io/client-go/pkg/version.gitVersion=$kube_version"
ldflags+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$kube_minor"
recipe="$(printf '%s' "$ldflags" | sha256sum | cut -c1-12)"
# testClusterAvailable() (e2e/cluster/test-cluster.ts) compares everything before " recipe=".
want_stamp="kube-apiserver=$kube_version etcd=$etcd_version pins=$pins_sum recipe=$recipe"

up_to_date() {
  [ -x "$bin/kube-apiserver" ] && [ -x "$bin/etcd" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ]
}

if up_to_date; then
  echo "build-test-cluster: kube-apiserver $kube_version and etcd $etcd_version already built in $bin"
  exit 0
fi

mkdir -p "$bin" "$cache/go-build" "$cache/go-mod"
# One build at a time per cache folder (two suites or two shells may call this at once).
exec 9>"$cache/.build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if up_to_date; then
  echo "build-test-cluster: built meanwhile by another run in $bin"
  exit 0
fi

echo "build-test-cluster: building kube-apiserver $kube_version and etcd $etcd_version with $("$go_bin" version | cut -d' ' -f3) into $bin (a cold build takes several minutes)"
start=$(date +%s)
staging="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT

export GOCACHE="$cache/go-build" GOMODCACHE="$cache/go-mod" CGO_ENABLED=0
# readonly: go.sum is committed and complete, so a build never rewrites files in the clone.
export GOFLAGS="-mod=readonly -buildvcs=false"
cd "$module_dir"
info="$("$go_bin" list -m -json k8s.io/kubernetes)"
build_date="$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Time": "\([^"]*\)".*/\1/p' | head -1)"
"$go_bin" build -trimpath -ldflags="${ldflags/KUBE_BUILD_DATE/${build_date:-1970-01-01T00:00:00Z}}" -o "$staging/" \
  k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3
# Go names a binary after the last path element that is not a major-version suffix: server/v3 -> "server".
mv "$staging/server" "$staging/etcd"
etcd_says="$("$staging/etcd" --version)"
echo "${etcd_says%%$'\n'*}, $("$staging/kube-apiserver" --version)"

mv -f "$staging/kube-apiserver" "$bin/kube-apiserver"
mv -f "$staging/etcd" "$bin/etcd"
echo "$want_stamp" >"$stamp"
echo "build-test-cluster: done in $(($(date +%s) - start)) s ($(du -sh "$bin" | cut -f1) in $bin)"
