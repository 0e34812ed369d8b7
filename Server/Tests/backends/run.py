#!/usr/bin/env python3
"""Runs the app-backend recipes of docs/BACKENDS.md against a live `tessera serve` (SQLite, loopback).

    Server/Tests/backends/run.py --tessera PATH [--python PATH]

The recipes are real files (docs/backends/mint.mjs, verify.mjs, backend.py) that BACKENDS.md quotes
verbatim, so the documentation cannot rot: this harness checks that every file is quoted unchanged,
then mints identity tokens with each recipe, exchanges them at identify, verifies the session JWTs
with each recipe (requiring `kind: verified`), introspects, and verifies JWTs signed before and after
a signing-key rotation through the JWKS with Node's crypto and with PyJWT. `--python` is a Python
with PyJWT (default: $TESSERA_PYTHON, else this one). Prints one line per check; exits non-zero when
one fails.
"""
import argparse, json, os, subprocess, sys, tempfile, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

DOCS = harness.ROOT / "docs"
RECIPES = [DOCS / "backends" / name for name in ("mint.mjs", "verify.mjs", "backend.py")]
check = harness.Checks()
failures, passes = check.failures, check.passes


def request(port, method, path, credential=None, body=None):
    reply = harness.call(port, method, path, credential, body)
    return reply.status, reply.body


def run(command, environment):
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60)
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--python", default=os.environ.get("TESSERA_PYTHON", sys.executable))
    arguments = parser.parse_args()

    guide = (DOCS / "BACKENDS.md").read_text()
    for recipe in RECIPES:
        check(f"BACKENDS.md quotes {recipe.name} verbatim", recipe.read_text() in guide)

    work = Path(tempfile.mkdtemp(prefix="tessera-backends-"))
    database = f"sqlite:{work / 'tessera.sqlite'}"
    clean = harness.clean_environment()
    project = harness.create_project(arguments.tessera, database, "Backends", clean, what="backends").data
    port = harness.free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = harness.serve(arguments.tessera, database, port, log=open(work / "tessera.log", "w"), environment=clean)
    try:
        harness.wait_ready(port, server)

        pk, sk = project["publishable_key"], project["secret_key"]
        environment = {**clean, "TESSERA_URL": base_url, "TESSERA_PROJECT_ID": project["project_id"],
                       "TESSERA_IDENTITY_SECRET": project["identity_secret"]["secret"],
                       "TESSERA_IDENTITY_KID": project["identity_secret"]["kid"], "TESSERA_SECRET_KEY": sk}
        node = ["node"]
        python = [arguments.python, str(DOCS / "backends" / "backend.py")]

        sessions = {}
        for name, mint in (("node", node + [str(DOCS / "backends" / "mint.mjs")]), ("python", python + ["mint"])):
            status, out, err = run(mint + [f"{name}-user-{uuid.uuid4()}"], environment)
            check(f"{name} mints an identity token", status == 0 and out.count(".") == 2, err)
            code, envelope = request(port, "POST", "/v1/sessions/identify", pk, {"identity_token": out})
            check(f"identify accepts the {name}-minted token", code == 200
                  and envelope.get("capabilities", {}).get("kind") == "verified", json.dumps(envelope))
            sessions[name] = envelope
        anonymous = request(port, "POST", "/v1/sessions/anonymous", pk, harness.new_installation())[1]

        verifiers = {"node": node + [str(DOCS / "backends" / "verify.mjs")], "python": python + ["verify"]}
        for name, verify in verifiers.items():
            for minted, envelope in sessions.items():
                status, out, err = run(verify + [envelope["session_jwt"]], environment)
                ok = status == 0 and json.loads(out or "{}").get("sid") == envelope["session"]["id"]
                check(f"{name} verifies the session JWT of the {minted}-minted identity", ok, err or out)
            status, _, err = run(verify + [anonymous["session_jwt"]], environment)
            check(f"{name} refuses an anonymous session JWT where verified is required", status != 0, "accepted")
            status, _, err = run(verify + [anonymous["session_jwt"], "anonymous"], environment)
            check(f"{name} accepts the anonymous session JWT when anonymous is allowed", status == 0, err)
            forged = sessions["node"]["session_jwt"][:-4] + ("AAAA" if not sessions["node"]["session_jwt"].endswith("AAAA") else "BBBB")
            status, _, _ = run(verify + [forged], environment)
            check(f"{name} refuses a forged signature", status != 0, "accepted")

        token = sessions["python"]["session_token"]
        status, out, err = run(python + ["introspect", token], environment)
        check("introspection: active", status == 0 and json.loads(out or "{}").get("active") is True, err or out)
        request(port, "POST", "/v1/sessions/revoke", token)
        status, out, err = run(python + ["introspect", token], environment)
        check("introspection: revoked at once", status == 0 and json.loads(out or "{}") == {"active": False}, err or out)

        # Signing-key rotation: JWTs of both keys verify through the JWKS.
        old_jwt = sessions["node"]["session_jwt"]
        code, rotated = request(port, "POST", "/v1/admin/signing-keys/rotate", sk)
        check("rotate the signing key", code == 201, json.dumps(rotated))
        code, fresh = request(port, "POST", "/v1/sessions/authenticate", sessions["node"]["session_token"])
        new_jwt = fresh.get("session_jwt", "")
        check("the new key signs", code == 200 and harness.kid_of(new_jwt) == rotated.get("signing_key", {}).get("kid")
              and harness.kid_of(new_jwt) != harness.kid_of(old_jwt))
        for name, verify in verifiers.items():
            for label, token in (("old", old_jwt), ("new", new_jwt)):
                status, _, err = run(verify + [token], environment)
                check(f"{name} verifies a JWT of the {label} signing key through the JWKS", status == 0, err)

        # One long-lived verifier per recipe, across a rotation: it fetches the JWKS again for the new kid.
        node_script = f"""
            import {{ createSessionVerifier }} from {json.dumps((DOCS / "backends" / "verify.mjs").as_uri())};
            const verifier = createSessionVerifier({{ baseUrl: {json.dumps(base_url)},
                projectId: {json.dumps(project["project_id"])}, refetchSeconds: 0 }});
            const auth = {{ Authorization: "Bearer " + {json.dumps(sk)} }};
            await verifier.verify({json.dumps(new_jwt)});
            const rotated = await (await fetch({json.dumps(base_url + "/v1/admin/signing-keys/rotate")},
                {{ method: "POST", headers: auth }})).json();
            const fresh = await (await fetch({json.dumps(base_url + "/v1/sessions/authenticate")}, {{ method: "POST",
                headers: {{ Authorization: "Bearer " + {json.dumps(sessions["node"]["session_token"])} }} }})).json();
            const claims = await verifier.verify(fresh.session_jwt);
            console.log(JSON.stringify({{ kid: rotated.signing_key.kid, sid: claims.sid }}));
        """
        status, out, err = run(node + ["--input-type=module", "-e", node_script], environment)
        check("node's cached verifier fetches the JWKS again after a rotation", status == 0
              and json.loads(out or "{}").get("sid") == sessions["node"]["session"]["id"], err or out)
        python_script = f"""
import json, sys, urllib.request
sys.path.insert(0, {json.dumps(str(DOCS / "backends"))})
import backend
backend.verify_session_jwt({json.dumps(new_jwt)})
def post(path, credential):
    request = urllib.request.Request({json.dumps(base_url)} + path, data=b"", method="POST",
                                     headers={{"Authorization": "Bearer " + credential}})
    return json.load(urllib.request.urlopen(request, timeout=10))
post("/v1/admin/signing-keys/rotate", {json.dumps(sk)})
fresh = post("/v1/sessions/authenticate", {json.dumps(sessions["node"]["session_token"])})
print(json.dumps(backend.verify_session_jwt(fresh["session_jwt"])))
"""
        status, out, err = run([arguments.python, "-c", python_script],
                               {**environment, "TESSERA_JWKS_COOLDOWN_SECONDS": "0"})
        check("PyJWKClient fetches the JWKS again after a rotation", status == 0
              and json.loads(out or "{}").get("sid") == sessions["node"]["session"]["id"], err or out)
    finally:
        harness.stop(server)
    print(f"backends: {len(passes)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
