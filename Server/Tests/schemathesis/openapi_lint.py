"""Checks the Tessera OpenAPI document without any code generator.

1. The text is strict JSON: UTF-8, no duplicate member names, no NaN/Infinity.
2. It is a valid OpenAPI 3.1 document (openapi-spec-validator, OpenAPIV31SpecValidator).
3. It describes the wire contract of docs/API.md: every path and method, explicit security per
   operation, an `X-Request-Id` header on every response, `Retry-After` on 429, the shared error
   schema with a code enum drawn from the contract's codes on every error response, 413 on every
   operation with a body, 401 on every operation that takes a credential, links that resolve, and
   the 5…525600 bounds of `session_duration_minutes`.

Usage: python openapi_lint.py [FILE]   (default: the contract file, Server/openapi.json)
"""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

# The contract, transcribed from docs/API.md.
EXPECTED_OPERATIONS = {
    ("post", "/v1/sessions/anonymous"),
    ("get", "/v1/projects/{project_id}/jwks.json"),
    ("post", "/v1/sessions/identify"),
    ("post", "/v1/sessions/authenticate"),
    ("post", "/v1/sessions/revoke"),
    # v2 additions: the user's devices (docs/API.md, sessions bound to a device key).
    ("post", "/v1/sessions/revoke-others"),
    ("get", "/v1/sessions"),
    ("delete", "/v1/sessions/{session_id}"),
    ("get", "/v1/me"),
    ("post", "/v1/devices"),
    ("delete", "/v1/devices/{device_id}"),
    ("get", "/v1/admin/profiles/{profile_id}"),
    ("get", "/v1/admin/profiles"),
    ("get", "/v1/admin/profiles/{profile_id}/sessions"),
    ("post", "/v1/admin/profiles/{profile_id}/sessions/revoke"),
    ("get", "/v1/admin/profiles/{profile_id}/devices"),
    ("delete", "/v1/admin/profiles/{profile_id}"),
    ("get", "/v1/admin/project"),
    ("patch", "/v1/admin/project"),
    ("post", "/v1/admin/identity-secrets"),
    ("delete", "/v1/admin/identity-secrets/{kid}"),
    # v1 additions: rotation, blocking and introspection.
    ("get", "/v1/admin/identity-secrets"),
    ("post", "/v1/admin/sessions/introspect"),
    ("delete", "/v1/admin/sessions/{session_id}"),
    ("post", "/v1/admin/profiles/{profile_id}/block"),
    ("post", "/v1/admin/profiles/{profile_id}/unblock"),
    ("get", "/v1/admin/signing-keys"),
    ("post", "/v1/admin/signing-keys/rotate"),
    ("post", "/v1/admin/api-keys/rotate"),
    ("get", "/v1/admin/events"),
    ("get", "/v1/admin/audit"),
    # v1 additions: the console's admin endpoints (lookup by any identifier, merge history).
    ("get", "/v1/admin/lookup"),
    ("get", "/v1/admin/profiles/{profile_id}/aliases"),
    # v1 additions: webhook endpoints.
    ("post", "/v1/admin/webhooks"),
    ("get", "/v1/admin/webhooks"),
    ("get", "/v1/admin/webhooks/{webhook_id}"),
    ("patch", "/v1/admin/webhooks/{webhook_id}"),
    ("delete", "/v1/admin/webhooks/{webhook_id}"),
    ("post", "/v1/admin/webhooks/{webhook_id}/rotate-secret"),
    ("get", "/v1/admin/webhooks/{webhook_id}/deliveries"),
    ("post", "/v1/admin/webhooks/{webhook_id}/replay"),
    ("post", "/v1/admin/webhooks/{webhook_id}/test"),
    ("get", "/health"),
    # v2 additions (Operations): liveness and readiness, HEAD on every health check.
    ("head", "/health"),
    ("get", "/health/live"),
    ("head", "/health/live"),
    ("get", "/health/ready"),
    ("head", "/health/ready"),
    ("get", "/metrics"),
    ("get", "/openapi.json"),
    # v2 additions: attested installations (App Attest).
    ("post", "/v1/attestations/challenge"),
}

ERROR_CODES = {
    "invalid_request", "payload_too_large", "invalid_api_key", "invalid_credentials",
    "invalid_identity_token", "invalid_signature", "unsupported_algorithm", "identity_token_expired",
    "identity_token_not_yet_valid", "identity_token_lifetime_too_long", "identity_token_replayed",
    "audience_mismatch", "invalid_claims", "invalid_email", "invalid_name", "invalid_avatar_url",
    "external_user_id_changed", "unverified_identify_disabled", "installation_conflict",
    "invalid_session_duration", "session_not_found", "session_expired", "session_revoked",
    "not_found", "rate_limited",
    # v1 additions (docs/API.md, "Error codes added")
    "profile_blocked", "session_token_required", "webhook_url_not_allowed",
    # v2 additions (docs/API.md, sessions bound to a device key)
    "dpop_proof_required", "dpop_proof_invalid", "dpop_key_mismatch", "dpop_proof_replayed", "use_dpop_nonce",
    # v2 additions (docs/API.md, attested installations)
    "attestation_required", "attestation_invalid", "challenge_invalid",
}

# Codes the server adds where the contract is silent (each documented in the OpenAPI document and
# reported to the lead): 405 for a known path with another method, the identity-secret rules, and
# the 5xx of a bug or an unavailable database.
EXTENSION_CODES = {
    "method_not_allowed": 405,
    "identity_secret_limit_reached": 409,
    "last_identity_secret": 409,
    "internal_error": 500,
    "service_unavailable": 503,
}

# Where a code may appear (status of each code, per the contract).
CODE_STATUS = {**EXTENSION_CODES,
    "invalid_request": 400, "invalid_claims": 400, "invalid_email": 400, "invalid_name": 400,
    "invalid_avatar_url": 400, "invalid_session_duration": 400, "payload_too_large": 413,
    "unverified_identify_disabled": 403, "profile_blocked": 403, "external_user_id_changed": 409,
    "installation_conflict": 409, "not_found": 404, "rate_limited": 429,
    "session_token_required": 403, "webhook_url_not_allowed": 400,
    # 401 on a session credential, 400 at an anonymous start or identify that requires binding.
    "dpop_proof_required": (400, 401),
    "attestation_required": 403, "attestation_invalid": 403, "challenge_invalid": 400,
}
for code in ERROR_CODES - set(CODE_STATUS):
    CODE_STATUS[code] = 401
ALLOWED_CODES = ERROR_CODES | set(EXTENSION_CODES)

SECURITY_SCHEMES = {"publishableKey", "secretKey", "sessionToken", "sessionJWT"}

# The links from creating operations to the DELETE that undoes them.
REQUIRED_LINKS = {
    "startAnonymousSession": "deleteSession",
    "identify": "deleteSession",
    "registerDevice": "deleteDevice",
    "createIdentitySecret": "deleteIdentitySecret",
}


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")


def resolve(document: dict[str, Any], node: Any, problems: Problems, where: str) -> Any:
    seen = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            problems.add(where, f"circular $ref {ref}")
            return {}
        seen.add(ref)
        if not ref.startswith("#/"):
            problems.add(where, f"external $ref {ref}")
            return {}
        target: Any = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                problems.add(where, f"unresolvable $ref {ref}")
                return {}
            target = target[part]
        node = target
    return node


def all_refs(node: Any):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from all_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from all_refs(value)


def error_codes_of(document: dict[str, Any], schema: Any, problems: Problems, where: str) -> set[str] | None:
    """The code enum of an error schema: allOf [Error, {properties.error.properties.code.enum}]."""
    schema = resolve(document, schema, problems, where)
    branches = schema.get("allOf")
    if not isinstance(branches, list):
        return None
    has_base = any(isinstance(b, dict) and b.get("$ref") == "#/components/schemas/Error" for b in branches)
    if not has_base:
        return None
    for branch in branches:
        branch = resolve(document, branch, problems, where)
        code = branch.get("properties", {}).get("error", {}).get("properties", {}).get("code", {})
        if "enum" in code:
            return set(code["enum"])
    return None


def find_key(node: Any, key: str):
    if isinstance(node, dict):
        for name, value in node.items():
            if name == key:
                yield value
            yield from find_key(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from find_key(value, key)


def canonical_base64url_disagreements(pattern: re.Pattern[str]):
    """Yields a message for each string on which `pattern` and canonical unpadded base64url disagree."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for size in range(32, 40):
        encoded = base64.urlsafe_b64encode(bytes(range(7, 7 + size))).rstrip(b"=").decode()
        if not pattern.fullmatch(encoded):
            yield f"refuses the canonical encoding of {size} bytes ({len(encoded)} characters)"
        unused_bits = {0: 0, 2: 4, 3: 2}[len(encoded) % 4]
        for index, character in enumerate(alphabet):
            candidate = encoded[:-1] + character
            canonical = index & ((1 << unused_bits) - 1) == 0
            if bool(pattern.fullmatch(candidate)) != canonical:
                verb = "refuses" if canonical else "accepts"
                yield f"{verb} {len(encoded)} characters ending in {character!r}"
        padded = encoded + "=" * (-len(encoded) % 4)
        standard_alphabet = encoded[:-2] + "+/"
        misaligned = encoded + "A" if len(encoded) % 4 == 0 else encoded[: len(encoded) // 4 * 4 + 1]
        for noncanonical in {padded, standard_alphabet, misaligned} - {encoded}:
            if pattern.fullmatch(noncanonical):
                yield f"accepts {noncanonical!r}, which is not canonical base64url"


def lint(document: dict[str, Any]) -> list[str]:
    problems = Problems()
    if not str(document.get("openapi", "")).startswith("3.1."):
        problems.add("openapi", "must be 3.1.x")
    for ref in set(all_refs(document)):
        resolve(document, {"$ref": ref}, problems, "$ref")

    schemes = document.get("components", {}).get("securitySchemes", {})
    if set(schemes) != SECURITY_SCHEMES:
        problems.add("securitySchemes", f"expected {sorted(SECURITY_SCHEMES)}, found {sorted(schemes)}")
    for name, scheme in schemes.items():
        if scheme.get("type") != "http" or scheme.get("scheme") != "bearer" or not scheme.get("description"):
            problems.add(f"securitySchemes.{name}", "must be an HTTP bearer scheme with a description")

    error_schema = document.get("components", {}).get("schemas", {}).get("Error")
    if error_schema is None:
        problems.add("components.schemas", "no Error schema")
    else:
        error = error_schema.get("properties", {}).get("error", {})
        if set(error_schema.get("required", [])) != {"error"} or set(error.get("required", [])) != {"code", "message"}:
            problems.add("Error", "must require error.code and error.message")

    code_enum = set(document.get("components", {}).get("schemas", {}).get("ErrorCode", {}).get("enum", []))
    if code_enum != ALLOWED_CODES:
        problems.add("ErrorCode", f"enum differs from the contract's codes: missing {sorted(ALLOWED_CODES - code_enum)}, "
                     f"extra {sorted(code_enum - ALLOWED_CODES)}")

    operations: dict[str, tuple[str, str, dict[str, Any]]] = {}
    found = set()
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in {"get", "put", "post", "delete", "patch", "head", "options", "trace"}:
                continue
            found.add((method, path))
            where = f"{method.upper()} {path}"
            operation_id = operation.get("operationId")
            if not operation_id:
                problems.add(where, "no operationId")
            elif operation_id in operations:
                problems.add(where, f"duplicate operationId {operation_id}")
            else:
                operations[operation_id] = (method, path, operation)
            if not operation.get("summary") or not operation.get("tags"):
                problems.add(where, "needs a summary and tags")
            if "security" not in operation:
                problems.add(where, "no explicit security")
            security = operation.get("security", [])
            used = {name for requirement in security for name in requirement}
            if used - SECURITY_SCHEMES:
                problems.add(where, f"unknown security schemes {sorted(used - SECURITY_SCHEMES)}")
            responses = operation.get("responses", {})
            if not any(status.startswith("2") for status in responses):
                problems.add(where, "no 2xx response")
            if "default" in responses:
                problems.add(where, "a default response hides undocumented statuses")
            if used and "401" not in responses:
                problems.add(where, "takes a credential but documents no 401")
            if "requestBody" in operation:
                for status in ("400", "413"):
                    if status not in responses:
                        problems.add(where, f"has a body but documents no {status}")
                body = resolve(document, operation["requestBody"], problems, where)
                if "application/json" not in body.get("content", {}):
                    problems.add(where, "request body is not application/json")
            for status in ("413",) + (("429", "503") if path.startswith("/v1/") else ()):
                if status not in responses:
                    problems.add(where, f"documents no {status}")
            for status, response in responses.items():
                rwhere = f"{where} {status}"
                response = resolve(document, response, problems, rwhere)
                headers = response.get("headers", {})
                request_id = resolve(document, headers.get("X-Request-Id", {}), problems, rwhere)
                if not request_id.get("required"):
                    problems.add(rwhere, "no required X-Request-Id header")
                if status == "429":
                    retry = resolve(document, headers.get("Retry-After", {}), problems, rwhere)
                    if not retry.get("required"):
                        problems.add(rwhere, "no required Retry-After header")
                if status[0] in "45":
                    content = response.get("content", {})
                    if list(content) != ["application/json"]:
                        problems.add(rwhere, "an error response must be application/json only")
                        continue
                    codes = error_codes_of(document, content["application/json"].get("schema"), problems, rwhere)
                    if codes is None:
                        problems.add(rwhere, "error schema is not allOf [Error, {code enum}]")
                        continue
                    if codes - ALLOWED_CODES:
                        problems.add(rwhere, f"codes outside the contract: {sorted(codes - ALLOWED_CODES)}")
                    for code in codes & ALLOWED_CODES:
                        statuses = CODE_STATUS[code] if isinstance(CODE_STATUS[code], tuple) else (CODE_STATUS[code],)
                        if status not in {str(each) for each in statuses}:
                            problems.add(rwhere, f"{code} belongs to status {CODE_STATUS[code]}")
    for method, path in sorted(EXPECTED_OPERATIONS - found):
        problems.add(f"{method.upper()} {path}", "missing from the document")
    for method, path in sorted(found - EXPECTED_OPERATIONS):
        problems.add(f"{method.upper()} {path}", "not in the contract")

    for operation_id, (method, path, operation) in operations.items():
        for status, response in operation.get("responses", {}).items():
            response = resolve(document, response, problems, operation_id)
            for name, link in response.get("links", {}).items():
                link = resolve(document, link, problems, f"{operation_id} link {name}")
                target = operations.get(link.get("operationId", ""))
                if target is None:
                    problems.add(f"{operation_id} link {name}", f"unknown operationId {link.get('operationId')}")
                    continue
                declared = {
                    resolve(document, p, problems, name).get("name")
                    for p in target[2].get("parameters", []) + document["paths"][target[1]].get("parameters", [])
                }
                for parameter in link.get("parameters", {}):
                    if parameter.split(".")[-1] not in declared:
                        problems.add(f"{operation_id} link {name}", f"target has no parameter {parameter}")
    for source, target in REQUIRED_LINKS.items():
        if source not in operations:
            continue
        created = [
            resolve(document, r, problems, source)
            for s, r in operations[source][2].get("responses", {}).items()
            if s.startswith("2")
        ]
        for response in created:
            targets = {
                resolve(document, link, problems, source).get("operationId")
                for link in response.get("links", {}).values()
            }
            if target not in targets:
                problems.add(source, f"a 2xx response has no link to {target}")

    # The installation secret's pattern must accept exactly the canonical unpadded base64url spellings
    # (the server's decoder is strict): a pattern that is off by one in its tail makes fuzzers send valid
    # secrets as "invalid" (and would let a client validator refuse what the server takes).
    secrets = [schema for schema in find_key(document, "installation_secret") if isinstance(schema, dict)]
    if not secrets:
        problems.add("installation_secret", "never described")
    for schema in secrets:
        pattern = resolve(document, schema, problems, "installation_secret").get("pattern")
        if not isinstance(pattern, str):
            problems.add("installation_secret", "has no pattern")
            continue
        for wrong in canonical_base64url_disagreements(re.compile(pattern)):
            problems.add("installation_secret.pattern", wrong)
            break

    durations = [
        schema for schema in find_key(document, "session_duration_minutes") if isinstance(schema, dict)
    ]
    if not durations:
        problems.add("session_duration_minutes", "never described")
    for schema in durations:
        schema = resolve(document, schema, problems, "session_duration_minutes")
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        if "integer" not in types or schema.get("minimum") != 5 or schema.get("maximum") != 525600:
            problems.add("session_duration_minutes", "must be an integer 5…525600")
    return problems.items


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[1]) if len(argv) == 2 else harness.OPENAPI
    try:
        document = harness.openapi_document(path)
    except ValueError as error:
        print(f"openapi-check: not strict JSON: {error}", file=sys.stderr)
        return 1
    if not isinstance(document, dict):
        print("openapi-check: the document is not a JSON object", file=sys.stderr)
        return 1

    from openapi_spec_validator import OpenAPIV31SpecValidator

    try:
        errors = [
            f"{error.message} at {'/'.join(map(str, error.path))}"
            for error in OpenAPIV31SpecValidator(document).iter_errors()
        ]
    except Exception as error:  # the validator raises on, e.g., an unresolvable $ref
        errors = [f"{type(error).__name__}: {str(error)[:300]}"]
    for error in errors:
        print(f"openapi-check: OpenAPI 3.1: {error}", file=sys.stderr)
    problems = lint(document)
    for problem in problems:
        print(f"openapi-check: contract: {problem}", file=sys.stderr)
    operations = sum(
        1 for item in document.get("paths", {}).values() for method in item if method in {"get", "head", "post", "delete", "patch"}
    )
    if errors or problems:
        print(f"openapi-check: FAILED ({len(errors)} OpenAPI errors, {len(problems)} contract problems)", file=sys.stderr)
        return 1
    print(f"openapi-check: OK — valid OpenAPI {document['openapi']}, {operations} operations, contract lint clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
