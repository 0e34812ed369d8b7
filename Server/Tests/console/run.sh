#!/usr/bin/env bash
# The operator console in a real browser (issue 16), twice: straight at `tessera serve`, then behind
# Debian's nginx at /auth/.
#
#   Server/Tests/console/run.sh [--tessera PATH]     # default: $TESSERA_BIN, else the debug build's tessera
#
# 1. scripts/console-deps: chromium, chromium-driver and nginx from Debian's packages when missing;
#    selenium, axe-selenium-python and pyotp into .venv;
# 2. Server/Tests/console/flows.py: every flow once, no retry, axe-core on every page;
# 3. the same with --nginx (http://127.0.0.1:NGINXPORT/auth/console/).
# Prints PASS/FAIL per check and a closing line; exits non-zero when anything failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
tessera="${TESSERA_BIN:-}"
if [[ "${1:-}" == "--tessera" ]]; then
    tessera="$2"
    shift 2
fi
[[ -n "$tessera" ]] || tessera="$(swift build --package-path "$root/Server" --show-bin-path)/tessera"
[[ -x "$tessera" ]] || { echo "console: no tessera binary at $tessera (build it: swift build --package-path Server --product tessera)" >&2; exit 1; }

deps="$("$root/scripts/console-deps")" || { echo "console: scripts/console-deps failed" >&2; exit 1; }
python="$(sed -n 's/^python=//p' <<<"$deps")"

status=0
passed=0
failed=0
for mode in direct nginx; do
    options=()
    [[ "$mode" == nginx ]] && options+=(--nginx)
    log="$(mktemp)"
    timeout 150 "$python" "$root/Server/Tests/console/flows.py" --tessera "$tessera" "${options[@]}" 2>&1 | tee "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
    passed=$((passed + $(grep -c '^PASS ' "$log")))
    failed=$((failed + $(grep -c '^FAIL ' "$log")))
    rm -f "$log"
done
echo "console: ${passed} passed, ${failed} failed"
exit "$status"
