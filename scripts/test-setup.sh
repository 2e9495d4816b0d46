#!/usr/bin/env bash
# `npm run test:setup`: installs what the test suites need beyond npm packages.
# - Debian packages: redis-server (scheduler integration tests), poppler-utils and qpdf (PDF oracles in tests).
# Idempotent: installs only what is missing. Needs root (or sudo) for apt-get.
set -euo pipefail

packages=(redis-server poppler-utils qpdf)
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
