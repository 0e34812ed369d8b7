#!/usr/bin/env python3
"""Runs the app-backend recipes of docs/BACKENDS.md against a live `tessera serve` (SQLite, loopback).

    Server/Tests/backends/run.py --tessera PATH [--python PATH]

The recipes are real files (docs/backends/mint.mjs, verify.mjs, backend.py) that BACKENDS.md quotes
verbatim, so the documentation cannot rot: this harness checks that every file is quoted unchanged,
then mints identity tokens with each recipe, exchanges them at identify, verifies the session JWTs
with each recipe (requiring `kind: verified`), introspects, and verifies JWTs signed before and after
a signing-key rotation through the JWKS with Node's crypto and with PyJWT. The DPoP recipes
(docs/backends/dpop.mjs, dpop.py) get sessions the live server bound to a key (identify with a proof)
and must accept their genuine `Authorization: DPoP` + proof pair, and refuse a proof of another key,
a wrong htm or htu, a stale iat, an ath of another credential, the Bearer scheme, a session JWT bound
to another key and an unbound one. `--python` is a Python with PyJWT (default: $TESSERA_PYTHON, else
this one); this script makes the proofs with `cryptography`. Prints one line per check; exits non-zero
when one fails.
"""
import argparse, http.client, json, os, subprocess, sys, tempfile, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dpop_proof import DeviceKey  # noqa: E402

DOCS = harness.ROOT / "docs"
RECIPES = [DOCS / "backends" / name for name in ("mint.mjs", "verify.mjs", "backend.py", "dpop.mjs", "dpop.py")]
# The app backend's own URL, which its clients' proofs name in htu.
APP_URL = "https://api.example.com/orders"
check = harness.Checks()
failures, passes = check.failures, check.passes


def request(port, method, path, credential=None, body=None):
    reply = harness.call(port, method, path, credential, body)
    return reply.status, reply.body


def send(port, method, path, headers, body=None):
    """One request with the given headers (Authorization and DPoP); the status and the JSON answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers = {**headers, "Content-Type": "application/json"}
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


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
    node = harness.start_node(arguments.tessera, database, log=work / "tessera.log", environment=clean)
    port, server, base_url = node.port, node.process, node.url
    try:

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

        check_dpop(port, base_url, project, environment, node, python)
    finally:
        harness.stop(server)
    print(f"backends: {len(passes)} passed, {len(failures)} failed")
    return 1 if failures else 0


def check_dpop(port, base_url, project, environment, node, python):
    """The DPoP recipes against sessions the live server bound to a key at identify (with a proof)."""
    pk = project["publishable_key"]

    def identify(key):
        token = harness.identity_token(project["identity_secret"]["secret"], project["identity_secret"]["kid"],
                                       harness.claims_for(f"dpop-user-{uuid.uuid4()}", aud=project["project_id"]))
        headers = {"Authorization": f"Bearer {pk}"}
        if key is not None:
            headers["DPoP"] = key.proof("POST", base_url + "/v1/sessions/identify", pk)
        body = {"identity_token": token, **({"key_tier": "software"} if key is not None else {})}
        return send(port, "POST", "/v1/sessions/identify", headers, body)

    key, other, stranger = DeviceKey(), DeviceKey(), DeviceKey()
    code, bound = identify(key)
    binding = bound.get("session", {}).get("binding") or {}
    check("identify with a proof binds the session to the key", code == 200 and binding.get("jkt") == key.jkt
          and binding.get("key_tier") == "software"
          and harness.jwt_part(bound.get("session_jwt", "a.e30.c"), 1).get("cnf") == {"jkt": key.jkt},
          json.dumps(bound))
    code, elsewhere = identify(other)
    check("a second user's session is bound to another key", code == 200
          and (elsewhere.get("session", {}).get("binding") or {}).get("jkt") == other.jkt, json.dumps(elsewhere))
    code, unbound = identify(None)
    check("identify without a proof leaves the session unbound", code == 200
          and unbound.get("session", {}).get("binding") is None, json.dumps(unbound))
    jwt, other_jwt, unbound_jwt = bound["session_jwt"], elsewhere["session_jwt"], unbound["session_jwt"]

    stale = int(time.time()) - 120
    cases = [  # (what, Authorization, DPoP, accepted or the words of the refusal)
        ("the genuine pair", f"DPoP {jwt}", key.proof("POST", APP_URL, jwt), None),
        ("the genuine pair (a query in the URL)", f"DPoP {jwt}", key.proof("POST", APP_URL, jwt), None),
        ("a proof from another key", f"DPoP {jwt}", stranger.proof("POST", APP_URL, jwt), "another key"),
        ("a wrong htm", f"DPoP {jwt}", key.proof("GET", APP_URL, jwt), "htm"),
        ("a wrong htu", f"DPoP {jwt}", key.proof("POST", "https://api.example.com/refunds", jwt), "htu"),
        ("a stale iat", f"DPoP {jwt}", key.proof("POST", APP_URL, jwt, iat=stale), "iat"),
        ("an ath of another credential", f"DPoP {jwt}", key.proof("POST", APP_URL, other_jwt), "ath"),
        ("a forged proof signature", f"DPoP {jwt}", key.proof("POST", APP_URL, jwt)[:-6] + "AAAAAA", "signature"),
        ("the Bearer scheme", f"Bearer {jwt}", key.proof("POST", APP_URL, jwt), "not a DPoP request"),
        ("a JWT whose cnf.jkt is another key's", f"DPoP {other_jwt}", key.proof("POST", APP_URL, other_jwt),
         "another key"),
        ("an unbound session JWT", f"DPoP {unbound_jwt}", key.proof("POST", APP_URL, unbound_jwt), "or to none"),
    ]
    recipes = {"node": node + [str(DOCS / "backends" / "dpop.mjs")],
               "python": [python[0], str(DOCS / "backends" / "dpop.py")]}
    for name, recipe in recipes.items():
        for what, authorization, proof, refusal in cases:
            url = APP_URL + ("?page=2" if "query" in what else "")
            status, out, err = run(recipe + ["POST", url, authorization, proof], environment)
            if refusal is None:
                ok = status == 0 and json.loads(out or "{}").get("sid") == bound["session"]["id"]
                check(f"{name} DPoP recipe accepts {what}", ok, err or out)
            else:
                check(f"{name} DPoP recipe refuses {what}", status != 0 and not out
                      and refusal.lower() in err.lower(), out or err or "accepted")


if __name__ == "__main__":
    sys.exit(main())
