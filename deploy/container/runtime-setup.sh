#!/bin/sh
# The runtime stage's one RUN: the libraries refgate links (skipped when the base already has them,
# as a base made by build.sh does), the unprivileged user and the state volume's folder.
# Usage: runtime-setup.sh PACKAGE_LIST [EXTRA_PACKAGES...]
set -eu
list=$1
shift
packages=$(grep -v '^#' "$list" | tr '\n' ' ')
# shellcheck disable=SC2086 # one word per package
if ! dpkg-query -W $packages "$@" >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages "$@"
  rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
fi
# A fixed uid/gid, so that a volume prepared outside (Kubernetes fsGroup, a host folder) matches.
groupadd --gid 10001 refgate
useradd --uid 10001 --gid 10001 --home-dir /var/lib/refgate --no-create-home \
  --shell /usr/sbin/nologin refgate
install -d -m 0700 -o refgate -g refgate /var/lib/refgate
