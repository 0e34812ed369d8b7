# Sourced by scripts/openapi-check, scripts/schemathesis and scripts/bench-server.
# Creates .venv/ at the repository root (git-ignored) and installs the Python tools the
# server's API checks need from PyPI, at the versions pinned in requirements.txt. Sets PYTHON to
# the venv's interpreter.
tessera_venv() {
    local root="$1"
    local venv="$root/.venv"
    local requirements="$root/Server/Tests/schemathesis/requirements.txt"
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "› creating $venv" >&2
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install --quiet --upgrade pip >&2
    fi
    # Installed again whenever the pinned versions change (the stamp is their checksum).
    local wanted installed
    wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
    installed="$(cat "$venv/.tessera-requirements" 2>/dev/null || true)"
    if [[ "$wanted" != "$installed" ]]; then
        echo "› pip install -r ${requirements#"$root/"}" >&2
        "$venv/bin/pip" install --quiet -r "$requirements" >&2 && echo "$wanted" >"$venv/.tessera-requirements"
    fi
    PYTHON="$venv/bin/python"
}
