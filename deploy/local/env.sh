# shellcheck shell=bash
# Source this in a second terminal while deploy/local/run.sh serves:
#
#   source deploy/local/env.sh
#
# It sets what the README's walk-through uses: REFGATE_DATABASE_URL and REFGATE_REDIS_URL (so the
# refgate CLI reaches run.sh's PostgreSQL and Redis), P and A (the public and admin base URLs,
# e.g. http://127.0.0.1:8080 and http://127.0.0.1:9090) and PATH (with build/release, where
# run.sh's refgate binary is). run.sh writes them to .state/run/env when it starts serving;
# REFGATE_ENV_FILE names another such file (the README test writes its own).

if ! (return 0 2>/dev/null); then
  printf '[refgate] ERROR: source this file, do not run it: source deploy/local/env.sh\n' >&2
  exit 2
fi

_refgate_env_file=${REFGATE_ENV_FILE:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)/.state/run/env}
if [[ ! -r $_refgate_env_file ]]; then
  printf '[refgate] ERROR: %s not found: start deploy/local/run.sh in another terminal and wait for "refgate is starting"\n' \
    "$_refgate_env_file" >&2
  unset _refgate_env_file
  return 1
fi
# shellcheck source=/dev/null
source "$_refgate_env_file"
unset _refgate_env_file
if ! curl -fsS -o /dev/null --max-time 5 "$A/healthz"; then
  printf '[refgate] ERROR: nothing answers on %s: is deploy/local/run.sh still running?\n' "$A" >&2
  return 1
fi
printf '[refgate] P=%s (redirects)  A=%s (admin API, /metrics)  refgate=%s\n' \
  "$P" "$A" "$(command -v refgate)" >&2
