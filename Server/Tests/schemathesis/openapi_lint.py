"""Checks the Tessera OpenAPI document without any code generator.

1. The text is strict JSON: UTF-8, no duplicate member names, no NaN/Infinity.
2. It is a valid OpenAPI 3.1 document (openapi-spec-validator, OpenAPIV31SpecValidator).
3. It follows the rules every operation of the contract follows: explicit security per operation,
   an `X-Request-Id` header on every response, `Retry-After` on 429, the shared error schema with a
   code enum drawn from its own `ErrorCode` list on every error response, 413 on every operation
   with a body, 401 on every operation that takes a credential, links that resolve, and the
   5…525600 bounds of `session_duration_minutes`. Which operations and codes the contract holds is
   not transcribed here: the server's tests hold the document against the router and the codes the
   server answers, with their statuses (OpenAPIContractTests).

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

# The contract is the document itself: which operations and error codes it holds is checked against
# the server (OpenAPIContractTests: every route documented and every documented operation routed; the
# ErrorCode enum equals the codes the server answers; each response lists only codes the server answers
# with that status). This lint checks the document's own consistency and the rules every operation
# follows, reading the codes from its ErrorCode schema.

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

    code_list = document.get("components", {}).get("schemas", {}).get("ErrorCode", {}).get("enum", [])
    ALLOWED_CODES = set(code_list)
    if not ALLOWED_CODES:
        problems.add("ErrorCode", "no enum of error codes")
    if len(code_list) != len(ALLOWED_CODES):
        problems.add("ErrorCode", "lists a code twice")
    for code in code_list:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", str(code)):
            problems.add("ErrorCode", f"{code!r} is not a snake_case code")

    operations: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in {"get", "put", "post", "delete", "patch", "head", "options", "trace"}:
                continue
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
                        problems.add(rwhere, f"codes outside ErrorCode: {sorted(codes - ALLOWED_CODES)}")
                    if status == "429" and codes != {"rate_limited"}:
                        problems.add(rwhere, "a 429 is rate_limited and nothing else")

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
