#!/bin/sh
# Runs one command of an image build with the build host's trust, when build.sh passed it: behind
# a TLS-inspecting proxy (a corporate network, this project's own machines) apt and npm inside the
# build reach their mirrors only with the host's extra CA and proxy settings. build.sh passes them
# as build secrets, which the RUN lines of Containerfile and Containerfile.prebuilt mount
# read-only for that one RUN: nothing of them is ever committed to a layer of any stage.
#   /tmp/host-ca.pem    the host's CA bundle (its system bundle, NODE_EXTRA_CA_CERTS, npm's cafile)
#   /tmp/host-env.sh    exports: the host's proxy variables and npm's proxy, https-proxy, noproxy
#                       and registry settings
#   /tmp/host-apt.conf  the host's apt proxy settings, and the CA bundle for apt over https
# Each is there only when the host has it: without any (a host with no extra CA and no proxy) the
# command runs as it would anywhere. See docs/deploying.md, "Building behind a TLS-inspecting
# proxy". Usage (in a RUN line): sh host-trust.sh COMMAND [ARG...]
set -eu
if [ -s /tmp/host-ca.pem ]; then
  # Node (npm) trusts these on top of its own roots.
  export NODE_EXTRA_CA_CERTS=/tmp/host-ca.pem
fi
if [ -s /tmp/host-apt.conf ]; then
  # Read by apt before its own apt.conf.d.
  export APT_CONFIG=/tmp/host-apt.conf
fi
if [ -s /tmp/host-env.sh ]; then
  # shellcheck disable=SC1091 # made by build.sh
  . /tmp/host-env.sh
fi
exec "$@"
