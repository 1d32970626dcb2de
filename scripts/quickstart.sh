#!/usr/bin/env bash
# The first-contact run: install fio if missing, build storbench, run the
# quick suite on a temporary directory of the disk you are in, and print the
# table. Results go to the embedded database (~/.local/share/storbench/results.db
# unless --db or XDG_DATA_HOME say otherwise). Extra arguments go to `storbench run`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v fio >/dev/null; then
  # Root (a fresh Debian has no sudo) installs directly; a user through sudo.
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "quickstart: fio is missing: install it as root (apt-get install fio), then run this again" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  if ! command -v apt-get >/dev/null; then
    echo "quickstart: fio is missing and this is not Debian or Ubuntu: install fio 3.x with your package manager" >&2
    exit 1
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null
fi
mkdir -p bin
CGO_ENABLED=0 go build -o bin/storbench ./cmd/storbench
# Not /tmp: on many systems it is tmpfs, which is memory, not the disk.
target=$(mktemp -d "$PWD/.quickstart.XXXXXX")
trap 'rmdir "$target" 2>/dev/null || true' EXIT
bin/storbench run --suite quick --target "$target" --report storbench-report.html "$@"
echo "Open storbench-report.html in a browser (one self-contained page, works offline)."
