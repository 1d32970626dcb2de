#!/usr/bin/env bash
# Release artefacts of this commit into dist/ (docs/install.md): the archives
# storbench-VERSION-linux-{amd64,arm64,armv7}.tar.gz with SHA256SUMS, the krew
# manifest dist/plugins/storbench.yaml, and the storbench and storbench-fio
# images as OCI layouts and archives. No Docker: Go, apt-get and dpkg-deb
# (Debian's packages for each architecture are fetched into a private apt
# folder, ~/.cache/storbench-release). The same commit gives the same files.
# Usage: scripts/release.sh [-version v1.2.3] [-registry REG] [-only archives|images] [-platforms linux/amd64,...] [-out DIR] [-push]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
cd tools
exec go run ./cmd/storbench-release -repo "$repo" -out "$repo/dist" "$@"
