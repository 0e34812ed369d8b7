#!/usr/bin/env python3
"""Two `tessera serve` processes on one PostgreSQL database (loopback only, bounded in time).

    Server/Tests/multinode/run.py --tessera PATH --database postgres://… [--outage]

Checks: a session revoked through node A is refused by node B at once; signing-key and secret-key
rotations made on node A are seen by node B within its project cache time; 40 concurrent identifies of
one `sub` split across both nodes give one profile; failed identifies alternating between the nodes
are answered 429 at the project's limit, not at twice it (the counters live in the database); with --outage, PostgreSQL is paused under load
(`scripts/postgres pause`): only 503s and a failing /health, then it is resumed and both nodes
recover without a restart. Prints one line per check and exits non-zero when one fails.
"""
import argparse, concurrent.futures, os, sys, tempfile, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

check = harness.Checks()
failures = check.failures


def call(port, method, path, bearer=None, body=None, timeout=10):
    """(status, JSON body); status 0 with the connection error as the code when nothing came back."""
    reply = harness.call(port, method, path, bearer, body, timeout)
    return reply.status, reply.body if reply.status else {"error": {"code": reply.detail or reply.failure}}


def identity_token(secret, kid, sub):
    return harness.identity_token(secret, kid, harness.claims_for(sub, jti=uuid.uuid4().hex))


def identify_raw(port, pk, token):
    """POST /v1/sessions/identify: (status, error code, Retry-After)."""
    reply = harness.call(port, "POST", "/v1/sessions/identify", pk, {"identity_token": token})
    return reply.status, reply.code, reply.header("Retry-After")


def rate_limits(a_port, b_port, pk, secret, kid, limit):
    """Failed identifies alternating between the nodes: `limit` failures, then 429 on both nodes."""
    while time.time() % 60 > 40:  # keep the whole check inside one one-minute window
        time.sleep(1)
    forged = identity_token("not-the-project-secret-" + "x" * 32, kid, "rate-limited")
    results = [identify_raw(a_port if index % 2 == 0 else b_port, pk, forged) for index in range(2 * limit + 2)]
    statuses = [status for status, _, _ in results]
    failures = statuses.count(401)
    check(f"failed identifies split across both nodes: {limit} answered 401, not {2 * limit}",
          failures == limit and statuses[:limit] == [401] * limit, f"{statuses}")
    limited = [(code, retry) for status, code, retry in results if status == 429]
    check("... then 429 rate_limited with Retry-After on both nodes",
          len(limited) == len(results) - limit
          and all(code == "rate_limited" and retry and 1 <= int(retry) <= 60 for code, retry in limited),
          f"{results}")
    good = [identify_raw(port, pk, identity_token(secret, kid, "rate-limited-good"))[0] for port in (a_port, b_port)]
    check("... and a blocked client's good token is refused on both nodes too", good == [429, 429], f"{good}")


def start_node(tessera, database, port):
    node = harness.serve(tessera, database, port, environment=dict(os.environ, TESSERA_LOG_LEVEL="error"))
    try:
        harness.wait_ready(port, None, f"node on port {port}", interval=0.2)
    except SystemExit:
        node.kill()
        raise
    return node


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--outage", action="store_true")
    arguments = parser.parse_args()
    schema = "mn_" + uuid.uuid4().hex[:12]
    database = harness.with_query(arguments.database, f"schema={schema}")
    # Both nodes and the CLI share one master key, as every node of a deployment must.
    key_directory = tempfile.mkdtemp(prefix="tessera-multinode-key-")
    os.environ["TESSERA_MASTER_KEY_FILE"] = os.path.join(key_directory, "master.key")
    harness.generate_master_key(arguments.tessera, os.environ["TESSERA_MASTER_KEY_FILE"], what="multinode")
    project = harness.create_project(arguments.tessera, database, "Multinode", what="multinode")
    pk, sk, secret, kid = project.publishable_key, project.secret_key, project.identity_secret, project.kid

    a_port, b_port = harness.free_port(), harness.free_port()
    nodes = [start_node(arguments.tessera, database, a_port), start_node(arguments.tessera, database, b_port)]
    try:
        # Before either node caches the project: a small identify limit, and no limit on the load's starts.
        limit = 6
        status, _ = call(a_port, "PATCH", "/v1/admin/project", sk,
                         {"rate_limits": {"failed_identifies_per_minute": limit, "anonymous_starts_per_minute": None}})
        check("PATCH the project's rate limits", status == 200, f"{status}")
        # Revoke on A, refused on B at once.
        installation = str(uuid.uuid4())
        status, started = call(a_port, "POST", "/v1/sessions/anonymous", pk,
                               {"installation_id": installation, "installation_secret": harness.b64url(os.urandom(32))})
        token = started.get("session_token")
        check("anonymous start on node A", status == 201 and token, f"{status}")
        status, _ = call(b_port, "POST", "/v1/sessions/authenticate", token, {})
        check("the session works on node B", status == 200, f"{status}")
        status, _ = call(a_port, "POST", "/v1/sessions/revoke", token, {})
        check("revoke on node A", status == 204, f"{status}")
        status, body = call(b_port, "POST", "/v1/sessions/authenticate", token, {})
        code = body.get("error", {}).get("code")
        check("node B refuses the revoked session at once", status == 401 and code == "session_revoked",
              f"{status} {code}")
        jwt = started.get("session_jwt")
        status, _ = call(b_port, "GET", "/v1/me", jwt)
        check("node B refuses the revoked session's JWT at once", status == 401, f"{status}")

        # Concurrent identifies of one sub, split across both nodes.
        sub = "user-" + uuid.uuid4().hex[:8]

        def identify(index):
            port = a_port if index % 2 == 0 else b_port
            return call(port, "POST", "/v1/sessions/identify", pk,
                        {"identity_token": identity_token(secret, kid, sub)}, timeout=30)

        with concurrent.futures.ThreadPoolExecutor(max_workers=40) as pool:
            results = list(pool.map(identify, range(40)))
        statuses = sorted({status for status, _ in results})
        profiles = {body.get("profile", {}).get("id") for status, body in results if status in (200, 201)}
        check("40 concurrent identifies of one sub across two nodes: all succeed", statuses in ([200], [201], [200, 201]),
              f"statuses {statuses}")
        check("... and give one profile", len(profiles) == 1, f"{len(profiles)} profiles")

        rate_limits(a_port, b_port, pk, secret, kid, limit)
        rotations(a_port, b_port, pk, sk, project.project_id)

        if arguments.outage:
            outage(a_port, b_port, pk)
    finally:
        harness.stop(*nodes)
    print(f"multinode: {len(failures)} failed" + (f": {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


def rotations(a_port, b_port, pk, sk, project_id):
    """Signing-key and API-key rotations made on node A, seen by node B (whose project cache is warm)."""
    status, started = call(a_port, "POST", "/v1/sessions/anonymous", pk,
                           harness.new_installation())
    token, old_jwt = started.get("session_token"), started.get("session_jwt", "")
    check("rotations: a session to rotate under", status == 201 and token, f"{status}")
    check("rotations: node B has the project cached", call(b_port, "GET", "/v1/me", old_jwt)[0] == 200)
    status, rotated = call(a_port, "POST", "/v1/admin/signing-keys/rotate", sk)
    new_kid = rotated.get("signing_key", {}).get("kid")
    check("rotate the signing key on node A", status == 201 and new_kid, f"{status}")
    status, fresh = call(a_port, "POST", "/v1/sessions/authenticate", token, {})
    new_jwt = fresh.get("session_jwt", "")
    check("node A signs with the new key at once", status == 200 and harness.kid_of(new_jwt) == new_kid, f"{status}")
    ok, took = harness.eventually(lambda: call(b_port, "GET", "/v1/me", new_jwt)[0] == 200)
    check(f"node B accepts the new key's JWT (after {took:.1f} s, within the 5 s project cache)", ok and took <= 6)
    check("node B still accepts the old key's JWT", call(b_port, "GET", "/v1/me", old_jwt)[0] == 200)
    jwks = f"/v1/projects/{project_id}/jwks.json"
    ok, took = harness.eventually(lambda: new_kid in {key.get("kid") for key in call(b_port, "GET", jwks)[1].get("keys", [])})
    check(f"node B publishes the new key (after {took:.1f} s, within the 5 s project cache)", ok and took <= 6)
    check("node B still publishes the old key", harness.kid_of(old_jwt) in {key.get("kid") for key in
                                                                     call(b_port, "GET", jwks)[1].get("keys", [])})
    status, rotated_key = call(a_port, "POST", "/v1/admin/api-keys/rotate", sk, {"kind": "secret", "grace_seconds": 0})
    new_sk = rotated_key.get("api_key", {}).get("key")
    check("rotate the secret key on node A without grace", status == 201 and new_sk, f"{status}")
    check("the new secret key works on both nodes at once",
          [call(port, "GET", "/v1/admin/project", new_sk)[0] for port in (a_port, b_port)] == [200, 200])
    check("node A refuses the old secret key at once", call(a_port, "GET", "/v1/admin/project", sk)[0] == 401)
    ok, took = harness.eventually(lambda: call(b_port, "GET", "/v1/admin/project", sk)[0] == 401)
    check(f"node B refuses the old secret key (after {took:.1f} s, within the 5 s project cache)", ok and took <= 6)


def outage(a_port, b_port, pk):
    """Pauses PostgreSQL under load (anonymous starts and heartbeats): only 503s; resumes it: both
    nodes recover by themselves."""
    seen = {}
    errors = set()
    status, started = call(a_port, "POST", "/v1/sessions/anonymous", pk,
                           harness.new_installation())
    check("outage: a session to heartbeat with", status == 201, f"{status}")
    token = started.get("session_token")

    def load(seconds):
        end = time.time() + seconds
        while time.time() < end:
            for port in (a_port, b_port):
                for status, answer in (
                    call(port, "POST", "/v1/sessions/anonymous", pk,
                         harness.new_installation(),
                         timeout=30),
                    call(port, "POST", "/v1/sessions/authenticate", token, timeout=30),
                ):
                    seen[status] = seen.get(status, 0) + 1
                    if status == 0:
                        errors.add(str(answer.get("error", {}).get("code"))[:80])

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        running = [pool.submit(load, 12) for _ in range(8)]
        time.sleep(2)
        harness.PostgresCluster(what="multinode").pause()
        time.sleep(3)
        health_down = [call(port, "GET", "/health", timeout=15)[0] for port in (a_port, b_port)]
        harness.PostgresCluster(what="multinode").resume()
        for future in running:
            future.result()
    check("while PostgreSQL is down /health fails with 503 on both nodes", health_down == [503, 503], f"{health_down}")
    other = {status: count for status, count in seen.items() if status >= 500 and status != 503 or status == 0}
    check("under load: no 5xx but 503, no dropped connection", not other, f"{seen} {errors}")
    check("under load: some 503s were answered", seen.get(503, 0) > 0, f"{seen}")
    deadline = time.time() + 30
    recovered = False
    while time.time() < deadline and not recovered:
        recovered = all(call(port, "GET", "/health", timeout=5)[0] == 200 for port in (a_port, b_port)) and all(
            call(port, "POST", "/v1/sessions/anonymous", pk,
                 harness.new_installation())[0] == 201
            and call(port, "POST", "/v1/sessions/authenticate", token)[0] == 200
            for port in (a_port, b_port))
        if not recovered:
            time.sleep(0.5)
    check("after PostgreSQL returns both nodes recover without a restart (starts and heartbeats)", recovered)


if __name__ == "__main__":
    sys.exit(main())
