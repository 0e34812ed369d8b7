# Sourced by scripts/openapi-check, scripts/schemathesis and scripts/bench-server.
# Creates .venv/ at the repository root (git-ignored) and installs the Python tools the
# server's API checks need from PyPI, once. Sets PYTHON to the venv's interpreter.
tessera_venv() {
    local root="$1"
    local venv="$root/.venv"
    local wanted=(openapi-spec-validator schemathesis PyJWT cryptography)
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "› creating $venv" >&2
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install --quiet --upgrade pip >&2
    fi
    local missing=()
    for package in "${wanted[@]}"; do
        "$venv/bin/pip" show --quiet "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if ((${#missing[@]})); then
        echo "› pip install ${missing[*]}" >&2
        "$venv/bin/pip" install --quiet "${missing[@]}" >&2
    fi
    PYTHON="$venv/bin/python"
}
