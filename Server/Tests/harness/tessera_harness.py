"""What every Python harness of Tessera shares: ports, `tessera serve` processes, the CLI, HTTP, tokens.

Imported by the harnesses under Server/Tests and by the benchmarks under Server/Benchmarks, each with
two lines relative to its own file (the shared webhook receiver is `webhook_receiver.py` beside it):

    sys.path.insert(0, str(Path(__file__).resolve().parents[N] / "Tests" / "harness"))
    import tessera_harness as harness

Standard library only (the harnesses run under the system python3 as well as under .venv's).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OPENAPI = ROOT / "Server" / "openapi.json"
POSTGRES_SCRIPT = ROOT / "scripts" / "postgres"
# The project's rate limits, all lifted: a harness is one client address sending thousands of requests.
UNLIMITED_RATE_LIMITS = {"anonymous_starts_per_minute": None, "failed_identifies_per_minute": None,
                         "failed_identifies_per_installation_per_minute": None}


# ─── Command lines ───────────────────────────────────────────────────────────────────────────────


def backend_arguments(description: str | None, cluster: str = "") -> argparse.ArgumentParser:
    """The arguments of a harness run against one backend: --tessera, --database sqlite|postgres and
    --postgres-url (an existing PostgreSQL, else a throwaway cluster of scripts/postgres, `cluster`
    says more). Parse them with `parse_seeded`, which adds --seed and --keep."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True, help="the tessera binary")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres-url", help="an existing PostgreSQL (a fresh schema); default: a throwaway "
                                               "cluster of scripts/postgres" + (f" {cluster}" if cluster else ""))
    return parser


def parse_seeded(parser: argparse.ArgumentParser, keep: str = "keep the work directory even when the run passes"
                 ) -> argparse.Namespace:
    """Adds --seed (default: a random one, drawn here, so that the run can print it) and --keep, and parses."""
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help=keep)
    arguments = parser.parse_args()
    if arguments.seed is None:
        arguments.seed = random.SystemRandom().randrange(1, 1 << 31)
    return arguments


# ─── Encodings and credentials ───────────────────────────────────────────────────────────────────


def b64url(data: bytes) -> str:
    """Unpadded base64url, as the API spells installation secrets and JWT segments."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_installation() -> dict[str, str]:
    """A fresh body for `POST /v1/sessions/anonymous`: a new installation ID and a 256-bit secret."""
    return {"installation_id": str(uuid.uuid4()), "installation_secret": b64url(os.urandom(32))}


def identity_token(secret: str, kid: str | None, claims: dict[str, object]) -> str:
    """An HS256 identity token over `claims`, signed with the UTF-8 bytes of the project's identity secret."""
    header: dict[str, str] = {"alg": "HS256", "typ": "JWT"}
    if kid:
        header["kid"] = kid
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "."
                     + b64url(json.dumps(claims, separators=(",", ":")).encode()))
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


def claims_for(sub: str, ttl: int = 300, **extra: object) -> dict[str, object]:
    """`sub`, `iat` now and `exp` `ttl` seconds later, then `extra`."""
    now = int(time.time())
    return {"sub": sub, "iat": now, "exp": now + ttl, **extra}


def jwt_part(token: str, index: int) -> dict:
    """The JSON of segment `index` of a JWT (0: the header, 1: the claims), unverified."""
    part = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def kid_of(token: str) -> str | None:
    return jwt_part(token, 0).get("kid")


def epoch(text: str | None) -> int | None:
    """Seconds since 1970 of an RFC 3339 time of the API, or None."""
    if not text:
        return None
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


# ─── HTTP ────────────────────────────────────────────────────────────────────────────────────────


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Reply:
    """One answer: status 0 when there was none (`failure` says why: refused, lost or timeout)."""

    status: int
    body: dict
    failure: str = ""  # "", "refused" (never sent), "lost" (connection died), "timeout"
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    detail: str = ""  # the exception text of a failure

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def code(self) -> str | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("code") if isinstance(error, dict) else None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def outcome(self) -> str:
        """ack (2xx read), rejected (4xx, or never sent) or unknown (lost, timeout, 5xx)."""
        if self.ok:
            return "ack"
        if self.failure == "refused" or 400 <= self.status < 500:
            return "rejected"
        return "unknown"


class Client:
    """One keep-alive connection to a server on loopback; a refused connect means the request was never sent."""

    def __init__(self, port: int, timeout: float = 20):
        self.port, self.timeout, self.connection = port, timeout, None

    def reset(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except OSError:
                pass
        self.connection = None

    def call(self, method: str, path: str, bearer: str | None = None, body: object = None) -> Reply:
        """Sends a JSON body (if any) with `Authorization: Bearer …` (if any); the answer's JSON as a dict."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {}
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                connection.connect()
            except OSError as error:
                return Reply(0, {}, "refused", detail=str(error))
            self.connection = connection
        try:
            self.connection.request(method, path, body=data, headers=headers)
            response = self.connection.getresponse()
            raw = response.read()
        except socket.timeout as error:
            self.reset()
            return Reply(0, {}, "timeout", detail=str(error))
        except (OSError, http.client.HTTPException) as error:
            self.reset()
            return Reply(0, {}, "lost", detail=str(error) or type(error).__name__)
        if response.will_close:
            self.reset()
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"raw": raw[:200].decode("utf-8", "replace")}
        return Reply(response.status, parsed if isinstance(parsed, dict) else {"value": parsed},
                     headers={name.lower(): value for name, value in response.getheaders()})


def call(port: int, method: str, path: str, bearer: str | None = None, body: object = None,
         timeout: float = 10) -> Reply:
    """One request on a connection of its own (see Client.call)."""
    client = Client(port, timeout)
    try:
        return client.call(method, path, bearer, body)
    finally:
        client.reset()


def lift_rate_limits(port: int, secret_key: str) -> Reply:
    """Lifts the project's rate limits through the admin API (all load comes from 127.0.0.1)."""
    return call(port, "PATCH", "/v1/admin/project", secret_key, {"rate_limits": UNLIMITED_RATE_LIMITS})


# ─── The tessera CLI and `tessera serve` ─────────────────────────────────────────────────────────


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without any TESSERA_* variable (so nothing of the caller's leaks in), plus `extra`."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("TESSERA_")}
    environment.update(extra)
    return environment


@dataclass
class Project:
    """The keys `tessera projects create --json` prints; `data` is its whole JSON."""

    project_id: str
    publishable_key: str
    secret_key: str
    identity_secret: str
    kid: str | None
    data: dict


def create_project(tessera: str | Path, database: str, name: str, environment: dict[str, str] | None = None,
                   slug: str | None = None, what: str = "tessera") -> Project:
    """`tessera projects create --json` on `database`; exits (SystemExit, prefixed `what: `) when it fails."""
    command = [str(tessera), "projects", "create", "--name", name, "--json", "--database", database]
    if slug:
        command += ["--slug", slug]
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
    if result.returncode != 0 and "There is no database" in result.stderr:
        # Since issue 25 only `serve` makes a database unasked; older binaries have no --create.
        result = subprocess.run(command + ["--create"], capture_output=True, text=True, env=environment, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"{what}: tessera projects create failed ({result.returncode}): {result.stderr.strip()}")
    # {"project_id", "name", "slug", "publishable_key", "secret_key", "identity_secret": {"kid", "secret"}}
    try:
        data = json.loads(result.stdout)
        return Project(data["project_id"], data["publishable_key"], data["secret_key"],
                       data["identity_secret"]["secret"], data["identity_secret"]["kid"], data)
    except (ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{what}: cannot read the keys from `tessera projects create --json`: {error!r}")


def generate_master_key(tessera: str | Path, path: str | Path, environment: dict[str, str] | None = None,
                        what: str = "tessera") -> str:
    """`tessera keys generate --to PATH` (a new master key file); returns the key's ID."""
    done = subprocess.run([str(tessera), "keys", "generate", "--to", str(path)], capture_output=True, text=True,
                          timeout=60, env=environment)
    words = done.stdout.split()
    if done.returncode != 0 or "key" not in words:
        raise SystemExit(f"{what}: tessera keys generate failed: {done.stderr.strip()}")
    return words[words.index("key") + 1]


def write_master_key(path: str | Path) -> str:
    """A master key file (32 random bytes, base64url, mode 0600) written without the CLI (any `tessera`
    binary reads it); returns its path."""
    descriptor = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(b64url(os.urandom(32)) + "\n")
    return str(path)


def serve(tessera: str | Path, database: str, port: int, *options: str, log=None,
          environment: dict[str, str] | None = None, drain_seconds: int = 0) -> subprocess.Popen:
    """Starts `tessera serve` on 127.0.0.1:`port`; its output goes to `log` (an open file), else nowhere.

    A harness stops its nodes with SIGTERM many times: without a load balancer to tell, the drain's
    delay (default 5 s in production) only slows it, so it is `drain_seconds` (0) unless the options
    name one. The shutdown harness, which checks the drain, asks for one."""
    output = log if log is not None else subprocess.DEVNULL
    if "--drain-seconds" not in options:
        options = (*options, "--drain-seconds", str(drain_seconds))
    return subprocess.Popen(
        [str(tessera), "serve", "--host", "127.0.0.1", "--port", str(port), "--database", database, *options],
        stdout=output, stderr=subprocess.STDOUT, env=environment)


def wait_ready(port: int, process: subprocess.Popen | None, what: str = "tessera serve", path: str = "/health",
               timeout: float = 60, interval: float = 0.1) -> float:
    """Polls GET `path` until it answers 200; returns the seconds it took. Exits (SystemExit) when the
    process ends first or `timeout` passes."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if process is not None and process.poll() is not None:
            raise SystemExit(f"{what} exited with status {process.returncode} before answering GET {path}")
        if call(port, "GET", path, timeout=2).status == 200:
            return time.monotonic() - started
        time.sleep(interval)
    raise SystemExit(f"{what} did not answer GET {path} within {timeout:.0f} s")


@dataclass
class Node:
    """One live `tessera serve` of a harness, ready: its port, its process, the file its output goes to."""

    port: int
    process: subprocess.Popen
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def start_node(tessera: str | Path, database: str, *options: str, log: str | Path | None = None,
               environment: dict[str, str] | None = None, what: str = "tessera serve", path: str = "/health",
               timeout: float = 60, interval: float = 0.1, drain_seconds: int = 0) -> Node:
    """The live-server fixture of every harness: `tessera serve` (`serve`) on a free port, its output to
    the file `log` (else nowhere), returned once GET `path` answers 200 (`wait_ready`). A node that
    does not get ready is stopped before the SystemExit goes on."""
    port = free_port()
    output = open(log, "w") if log is not None else None
    try:
        process = serve(tessera, database, port, *options, log=output, environment=environment,
                        drain_seconds=drain_seconds)
    finally:
        if output is not None:
            output.close()  # the child has its own descriptor
    try:
        wait_ready(port, process, what, path, timeout, interval)
    except BaseException:
        stop(process, timeout=5)
        raise
    return Node(port, process, Path(log) if log is not None else None)


def stop(*processes: subprocess.Popen | None, timeout: float = 15, sig: int = signal.SIGTERM) -> list[int | None]:
    """Sends `sig` to every process still running, then waits for each (SIGKILL after `timeout`);
    returns their exit statuses (None for one that had to be killed)."""
    running = [process for process in processes if process is not None]
    for process in running:
        if process.poll() is None:
            process.send_signal(sig)
    statuses: list[int | None] = []
    for process in running:
        try:
            statuses.append(process.wait(timeout=timeout))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            statuses.append(None)
    return statuses


def clean_up(work: str | Path, keep: bool, what: str, processes, cluster: "PostgresCluster | None" = None) -> None:
    """The end of a run: stops its processes and its cluster, then keeps (and names) or removes `work`."""
    stop(*processes)
    if cluster is not None:
        cluster.stop()
    if keep:
        print(f"{what}: kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)


# ─── PostgreSQL (scripts/postgres) ───────────────────────────────────────────────────────────────


class PostgresCluster:
    """A throwaway cluster of scripts/postgres in a directory of its own (TESSERA_PG_DIR); stop() removes it.
    Without a directory: the one scripts/postgres picks ($TESSERA_PG_DIR, else its default)."""

    def __init__(self, directory: str | Path | None = None, what: str = "tessera") -> None:
        self.directory, self.what = (Path(directory) if directory else None), what
        self.environment = dict(os.environ)
        if directory:
            self.environment["TESSERA_PG_DIR"] = str(directory)

    def command(self, action: str, timeout: float, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([str(POSTGRES_SCRIPT), action], capture_output=True, text=True,
                                env=self.environment, timeout=timeout)
        if check and result.returncode != 0:
            raise SystemExit(f"{self.what}: scripts/postgres {action} failed ({result.returncode}):\n{result.stderr}")
        return result

    def start(self) -> str:
        """Starts (or reuses) the cluster; returns its postgres://… URL."""
        lines = self.command("start", 900).stdout.strip().splitlines()
        if not lines or not lines[-1].startswith("postgres"):
            raise SystemExit(f"{self.what}: scripts/postgres start printed no URL")
        return lines[-1]

    def pause(self) -> None:
        self.command("pause", 60)

    def resume(self) -> None:
        self.command("resume", 240)

    def stop(self) -> None:
        self.command("stop", 300, check=False)


def with_query(url: str, item: str) -> str:
    """`url` with one more query item (`schema=…`, `pool_max=…`)."""
    return url + ("&" if "?" in url else "?") + item


def libpq_url(url: str) -> str:
    """The URL without the server's own query items (pool_max, schema, …), which libpq would refuse."""
    return url.split("?", 1)[0]


# ─── Reporting ───────────────────────────────────────────────────────────────────────────────────


class Checks:
    """Prints one line per check, `PASS name` or `FAIL name (detail)`, and remembers both lists."""

    def __init__(self) -> None:
        self.passes: list[str] = []
        self.failures: list[str] = []

    def __call__(self, name: str, ok: object, detail: str = "") -> bool:
        print(("PASS " if ok else "FAIL ") + name + (f" ({detail})" if detail and not ok else ""), flush=True)
        (self.passes if ok else self.failures).append(name)
        return bool(ok)


def eventually(probe, seconds: float = 10, interval: float = 0.1) -> tuple[bool, float]:
    """Polls `probe` (bounded in time) until it answers true; returns (ok, seconds taken)."""
    start = time.monotonic()
    while True:
        if probe():
            return True, time.monotonic() - start
        if time.monotonic() - start > seconds:
            return False, seconds
        time.sleep(interval)


def load_average() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


# ─── The OpenAPI document ────────────────────────────────────────────────────────────────────────


def openapi_text(path: str | Path = OPENAPI) -> str:
    """The contract file's text (Server/openapi.json unless `path` names another JSON file): UTF-8, no BOM."""
    raw = Path(path).read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raise SystemExit(f"{path}: starts with a byte order mark")
    return raw.decode("utf-8")


def strict_json(text: str):
    """json.loads that refuses duplicate member names and NaN/Infinity (ValueError)."""
    def no_duplicates(pairs):
        result = {}
        for key, value in pairs:
            if key in result:
                raise ValueError(f"duplicate member name {key!r}")
            result[key] = value
        return result

    def no_constant(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)


def openapi_document(path: str | Path = OPENAPI) -> dict:
    """The contract, parsed strictly, from Server/openapi.json (or `path`)."""
    return strict_json(openapi_text(path))
