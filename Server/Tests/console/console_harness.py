"""What the console's browser tests, screenshots and page benchmark share: a `tessera serve` with a project
and operators, data made through the public API, nginx in front at /auth/, a webhook receiver, and a
headless Chromium (chromium-driver) that runs axe-core on every page it reaches.

Imported by Server/Tests/console/flows.py and screenshots.py, and by Server/Benchmarks/console/bench.py.
Needs .venv's Python (selenium, axe-selenium-python, pyotp: scripts/console-deps installs them) only for
the Browser class; the rest is standard library.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

ENROLLMENT_LINK = re.compile(r"https?://[^\s\"'<>]+/console/enroll\?token=[A-Za-z0-9_\-.~%]+")
PASSWORDS = {"owner": "owner-correct-horse-1", "admin": "admin-correct-horse-2",
             "support": "support-correct-horse-3", "viewer": "viewer-correct-horse-4"}


# ─── The server ──────────────────────────────────────────────────────────────────────────────────


class Server:
    """`tessera serve` on a free loopback port with a temporary SQLite database (or `database`), a project
    made by `tessera projects create --json`, rate limits lifted, and `--allow-insecure-webhooks`."""

    def __init__(self, tessera: str, work: Path, database: str | None = None, create_project: bool = True,
                 options: tuple[str, ...] = ("--allow-insecure-webhooks",)) -> None:
        self.tessera, self.work = str(tessera), work
        self.database = database or f"sqlite:{work / 'tessera.sqlite'}"
        self.environment = harness.clean_environment()
        self.project = (harness.create_project(self.tessera, self.database, "Console test", self.environment,
                                               what="console") if create_project else None)
        self.log_path = work / "tessera.log"
        node = harness.start_node(self.tessera, self.database, *options, log=self.log_path,
                                  environment=self.environment, what="console: tessera serve")
        self.port, self.process = node.port, node.process
        if self.project is not None:
            lifted = harness.lift_rate_limits(self.port, self.project.secret_key)
            if not lifted.ok:
                raise SystemExit(f"console: cannot lift the rate limits: {lifted.status} {lifted.body}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        harness.stop(self.process)

    def cli(self, *arguments: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """A `tessera` command on the same database."""
        return subprocess.run([self.tessera, *arguments, "--database", self.database], capture_output=True,
                              text=True, env=self.environment, timeout=timeout)

    def create_operator(self, email: str, role: str, console_url: str | None = None) -> str:
        """`tessera operators create --email E --role R --console-url URL`; returns the enrollment link it
        prints (SystemExit when it fails or prints none)."""
        done = self.cli("operators", "create", "--email", email, "--role", role,
                        "--console-url", console_url or self.url)
        found = ENROLLMENT_LINK.search(done.stdout + "\n" + done.stderr)
        if done.returncode != 0 or not found:
            raise SystemExit(f"console: tessera operators create failed ({done.returncode}): "
                             f"{done.stdout.strip()} {done.stderr.strip()}")
        return found.group(0)

    # The public and admin API, as the SDK and an app backend call it.

    def api(self, method: str, path: str, credential: str | None = None, body: object = None) -> harness.Reply:
        return harness.call(self.port, method, path, credential, body)

    def admin(self, method: str, path: str, body: object = None) -> harness.Reply:
        return self.api(method, path, self.project.secret_key, body)

    def anonymous(self) -> tuple[dict, dict]:
        """A new installation's anonymous session: (installation body, envelope)."""
        installation = harness.new_installation()
        reply = self.api("POST", "/v1/sessions/anonymous", self.project.publishable_key, installation)
        if reply.status not in (200, 201):
            raise SystemExit(f"console: anonymous start failed: {reply.status} {reply.body}")
        return installation, reply.body

    def identity_token(self, sub: str, **claims: object) -> str:
        return harness.identity_token(self.project.identity_secret, self.project.kid,
                                      harness.claims_for(sub, **claims))

    def identify(self, credential: str, sub: str, **claims: object) -> harness.Reply:
        return self.api("POST", "/v1/sessions/identify", credential, {"identity_token": self.identity_token(sub, **claims)})

    def device(self, session_token: str) -> dict:
        reply = self.api("POST", "/v1/devices", session_token,
                         {"platform": "apns", "token": os.urandom(32).hex(), "environment": "sandbox"})
        if reply.status != 201:
            raise SystemExit(f"console: device registration failed: {reply.status} {reply.body}")
        return reply.body["device"]

    def heartbeat(self, session_token: str) -> harness.Reply:
        return self.api("POST", "/v1/sessions/authenticate", session_token, {})

    def person(self, label: str) -> dict:
        """An installation that starts anonymous, identifies with a signed token (sub, email, name) and
        registers a device: every kind of identifier the console's search takes."""
        installation, anonymous = self.anonymous()
        sub = f"{label}-{uuid.uuid4().hex[:8]}"
        email = f"{sub}@example.com"
        identified = self.identify(anonymous["session_token"], sub, email=email, name=f"{label.title()} Example")
        if identified.status != 200:
            raise SystemExit(f"console: identify failed: {identified.status} {identified.body}")
        envelope = identified.body
        device = self.device(envelope["session_token"])
        return {"profile_id": envelope["profile"]["id"], "session_id": envelope["session"]["id"],
                "session_token": envelope["session_token"], "anonymous_session_id": anonymous["session"]["id"],
                "device_id": device["id"], "installation_id": installation["installation_id"],
                "external_id": sub, "email": email}


# ─── nginx at /auth/ ─────────────────────────────────────────────────────────────────────────────


class Nginx:
    """Debian's nginx as the current user, proxying /auth/ to `upstream_port` (config, pid, logs and
    temporary files in `work`)."""

    def __init__(self, upstream_port: int, work: Path) -> None:
        self.port = harness.free_port()
        self.directory = work / "nginx"
        self.directory.mkdir(parents=True, exist_ok=True)
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.directory / name).mkdir(exist_ok=True)
        d = self.directory
        self.config = d / "nginx.conf"
        self.config.write_text(f"""worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    server {{
        listen 127.0.0.1:{self.port};
        location /auth/ {{
            proxy_pass http://127.0.0.1:{upstream_port}/;
            proxy_set_header Host $host:$server_port;
            proxy_set_header X-Forwarded-For $remote_addr;
        }}
    }}
}}
""")
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([binary, "-c", str(self.config), "-p", str(d), "-e", str(d / "error.log")],
                                        stdout=subprocess.DEVNULL, stderr=open(d / "stderr.log", "w"))
        harness.wait_ready(self.port, self.process, what="console: nginx", path="/auth/health", timeout=20)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/auth"

    def stop(self) -> None:
        harness.stop(self.process)


# ─── The browser ─────────────────────────────────────────────────────────────────────────────────


class Browser:
    """A headless Chromium through Debian's chromium-driver (no Selenium Manager, no download), 1280×900.

    `go` and `submit` wait for the new page and run axe-core on it (once per distinct page: path and
    heading), remembering every violation in `axe_violations`."""

    def __init__(self, base: str, axe: bool = True) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager reach out
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1280,900", "--hide-scrollbars", "--no-first-run", "--lang=en-US"):
            options.add_argument(argument)
        self.profile_dir = tempfile.mkdtemp(prefix="tessera-chromium-")
        options.add_argument(f"--user-data-dir={self.profile_dir}")
        service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(30)
        self.base = base.rstrip("/") + "/"  # …/console/
        self.axe = axe
        self.axe_checked: set[str] = set()
        self.axe_violations: list[str] = []
        self.axe_pages = 0

    def quit(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile_dir, ignore_errors=True)

    # Navigation

    def go(self, relative: str) -> None:
        """Opens `relative` (to …/console/) and checks the page with axe."""
        self.driver.get(urllib.parse.urljoin(self.base, relative))
        self.check_page()

    def submit(self, form, fields: dict[str, str] | None = None) -> None:
        """Fills `fields` of `form` (by name), submits it with its submit button, waits for the next page."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        for name, value in (fields or {}).items():
            element = form.find_element(By.NAME, name)
            tag = element.tag_name.lower()
            if tag == "select":
                from selenium.webdriver.support.ui import Select
                Select(element).select_by_value(value)
            elif (element.get_attribute("type") or "").lower() in ("hidden",):
                self.driver.execute_script("arguments[0].value = arguments[1];", element, value)
            elif (element.get_attribute("type") or "").lower() in ("checkbox", "radio"):
                if element.is_selected() != (value not in ("", "0", "false", "off")):
                    element.click()
            else:
                element.clear()
                element.send_keys(value)
        page = self.mark()
        buttons = form.find_elements(By.CSS_SELECTOR, "button[type=submit], input[type=submit], button:not([type])")
        if buttons:
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", buttons[0])
            danger = "danger" in (buttons[0].get_attribute("class") or "").split()
            buttons[0].click()
            if danger:
                # console.js asks once more before a destructive action (window.confirm): say yes.
                WebDriverWait(self.driver, 5).until(expected_conditions.alert_is_present()).accept()
        else:
            form.submit()
        self.settle(page)

    def mark(self) -> str:
        """Marks the current document (a random property of its window) before an action that navigates."""
        marker = uuid.uuid4().hex
        self.driver.execute_script("window.__consoleTestMarker = arguments[0];", marker)
        return marker

    def settle(self, marker: str) -> None:
        """Waits until the marked document has been replaced and the new one has loaded, then checks it with
        axe. (Waiting on an element of the old document is racy: while Chromium swaps documents, a lookup of
        that element fails with "Node with given id does not belong to the document" rather than as stale.)"""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        def loaded(driver) -> bool:
            try:
                return bool(driver.execute_script(
                    "return window.__consoleTestMarker !== arguments[0] && document.readyState === 'complete';",
                    marker))
            except WebDriverException:  # the document is being replaced: not yet
                return False

        WebDriverWait(self.driver, 30, poll_frequency=0.05).until(loaded)
        self.check_page()

    def post_form(self, action: str, fields: dict[str, str]) -> None:
        """Builds a form in the current page (as another page or a tampered one would) and submits it."""
        page = self.mark()
        self.driver.execute_script("""
            const form = document.createElement('form');
            form.method = 'post'; form.action = arguments[0];
            for (const [name, value] of Object.entries(arguments[1])) {
                const input = document.createElement('input');
                input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input);
            }
            document.body.appendChild(form);
            HTMLFormElement.prototype.submit.call(form);""", action, fields)
        self.settle(page)

    def fetch_post(self, action: str, fields: dict[str, str]) -> tuple[int, str]:
        """A same-origin `fetch` POST of a form body from the page (the browser's cookies): (status, body)."""
        result = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {method: 'POST', credentials: 'same-origin', redirect: 'manual',
                                 headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                                 body: new URLSearchParams(arguments[1]).toString()})
              .then(r => r.text().then(t => done([r.status, t]))).catch(e => done([-1, String(e)]));""",
                                              urllib.parse.urljoin(self.base, action), fields)
        return int(result[0]), str(result[1])

    def fetch_status(self, relative: str) -> int:
        """The status of a same-origin GET (redirects not followed: 0 for an opaque redirect)."""
        return int(self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {credentials: 'same-origin', redirect: 'manual'})
              .then(r => done(r.status)).catch(e => done(-1));""", urllib.parse.urljoin(self.base, relative)))

    # Reading the page

    def forms(self, action: str):
        from selenium.webdriver.common.by import By
        return [form for form in self.driver.find_elements(By.CSS_SELECTOR, "form")
                if (form.get_attribute("action") or "").split("?")[0].rstrip("/").endswith("/" + action)]

    def form_with(self, action: str, **hidden: str):
        """The first form posting to `action` whose fields have these values (None when there is none)."""
        from selenium.webdriver.common.by import By
        for form in self.forms(action):
            values = {element.get_attribute("name"): element.get_attribute("value")
                      for element in form.find_elements(By.CSS_SELECTOR, "input, select, textarea")}
            if all(values.get(name) == value for name, value in hidden.items()):
                return form
        return None

    def field_names(self, form) -> list[str]:
        from selenium.webdriver.common.by import By
        return [element.get_attribute("name") or "" for element in
                form.find_elements(By.CSS_SELECTOR, "input, select, textarea")]

    def error_code(self) -> str | None:
        from selenium.webdriver.common.by import By
        found = self.driver.find_elements(By.CSS_SELECTOR, "[role=alert][data-code], .error[data-code]")
        return found[0].get_attribute("data-code") if found else None

    def notice(self) -> str:
        from selenium.webdriver.common.by import By
        found = self.driver.find_elements(By.CSS_SELECTOR, "[role=status].notice, p.notice")
        return found[0].text if found else ""

    def text(self) -> str:
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.TAG_NAME, "body").text

    def source(self) -> str:
        return self.driver.page_source

    def heading(self) -> str:
        from selenium.webdriver.common.by import By
        found = self.driver.find_elements(By.TAG_NAME, "h1")
        return found[0].text if found else ""

    def path(self) -> str:
        return urllib.parse.urlsplit(self.driver.current_url).path

    def query(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.driver.current_url).query))

    def cookies(self) -> dict[str, str]:
        return {cookie["name"]: cookie["value"] for cookie in self.driver.get_cookies()}

    def csrf(self) -> str | None:
        """The console session's CSRF token, from the sign-out form every signed-in page has."""
        form = self.form_with("logout")
        if form is None:
            return None
        from selenium.webdriver.common.by import By
        return form.find_element(By.NAME, "csrf").get_attribute("value")

    # axe-core

    def check_page(self) -> None:
        """Runs axe-core (the copy inside axe-selenium-python's wheel) on the page, once per path + heading,
        in the light palette and again in the dark one (`prefers-color-scheme: dark`, emulated)."""
        if not self.axe:
            return
        key = f"{self.path()} · {self.heading()}"
        if key in self.axe_checked:
            return
        self.axe_checked.add(key)
        for scheme in ("light", "dark"):
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                        {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            try:
                # The emulation took: the page's own background is the palette's (--wash), so axe's
                # contrast checks below judge the colours a dark-mode operator sees.
                background = self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
                wanted = "rgb(17, 20, 24)" if scheme == "dark" else "rgb(244, 246, 248)"
                if background != wanted:
                    self.axe_violations.append(f"{key} ({scheme}): body background {background}, not {wanted}")
                self._axe(f"{key} ({scheme})")
            finally:
                self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    def _axe(self, key: str) -> None:
        from axe_selenium_python import Axe
        try:
            axe = Axe(self.driver)
            axe.inject()
            result = axe.run()
        except Exception as error:  # noqa: BLE001 (a page axe cannot run on is a finding too)
            self.axe_violations.append(f"{key}: axe did not run: {type(error).__name__}: {str(error)[:200]}")
            return
        self.axe_pages += 1
        for violation in result.get("violations", []):
            targets = ", ".join(str(node.get("target")) for node in violation.get("nodes", [])[:3])
            self.axe_violations.append(f"{key}: {violation['id']} ({violation.get('impact')}): "
                                       f"{violation.get('help')} at {targets}")

    def screenshot(self, path: Path, width: int = 1280, height: int = 900) -> None:
        """A PNG of exactly width × height CSS pixels of the page (the viewport set through the DevTools
        protocol: a window of that size has a smaller viewport)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        try:
            self.driver.save_screenshot(str(path))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def totp_now(secret: str, offset_steps: int = 0) -> str:
    """The RFC 6238 code (SHA-1, 6 digits, 30 s) of the base32 `secret`, `offset_steps` steps from now: pyotp's,
    or the RFC's few lines for a secret shorter than pyotp accepts (112 bits)."""
    moment = int(time.time()) + 30 * offset_steps
    try:
        import pyotp
        return pyotp.TOTP(secret).at(moment)
    except ValueError:
        import base64, hashlib, hmac, struct
        key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
        digest = hmac.new(key, struct.pack(">Q", moment // 30), hashlib.sha1).digest()
        offset = digest[-1] & 0x0F
        return f"{(struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def scan_qr(browser: Browser) -> str | None:
    """The text of the page's QR code (`svg.qr`), read from a screenshot of it by ZXing, or None."""
    import io

    import zxingcpp
    from PIL import Image
    from selenium.webdriver.common.by import By

    codes = browser.driver.find_elements(By.CSS_SELECTOR, "svg.qr")
    if not codes:
        return None
    image = Image.open(io.BytesIO(codes[0].screenshot_as_png))
    found = [result.text for result in zxingcpp.read_barcodes(image) if result.format == zxingcpp.BarcodeFormat.QRCode]
    return found[0] if found else None


def enroll(browser: Browser, link: str, password: str, totp: bool) -> tuple[bool, str, str | None]:
    """Opens an enrollment link, sets `password` and, when `totp`, reads the secret from #totp-secret and
    sends the code. Returns (ok, detail, totp secret)."""
    from selenium.webdriver.common.by import By

    browser.driver.get(link)
    browser.check_page()
    forms = browser.forms("enroll")
    if not forms:
        return False, f"no enrollment form at {link} ({browser.error_code()}: {browser.heading()})", None
    fields = {"password": password, "password_confirmation": password}
    secret = None
    if totp:
        found = browser.driver.find_elements(By.ID, "totp-secret")
        if not found:
            return False, "no #totp-secret on the enrollment page", None
        shown = found[0].text.strip().replace(" ", "")
        # The secret is taken from the QR code as a phone's camera sees it: the rendered SVG's pixels,
        # decoded by ZXing; it must name the key the page shows.
        scanned = scan_qr(browser)
        if scanned is None:
            return False, "the enrollment page's QR code did not decode", None
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(scanned).query)
        secret = (query.get("secret") or [""])[0]
        if not scanned.startswith("otpauth://totp/") or secret != shown:
            return False, f"the QR code says {scanned!r}, the page shows the key {shown!r}", None
        fields["totp"] = totp_now(secret)
    browser.submit(forms[0], fields)
    # Enrollment redirects to the sign-in page (which goes on to the overview for a browser that is
    # already signed in as someone else).
    ok = browser.path().endswith(("/console/login", "/console/")) and browser.error_code() is None
    return ok, f"after enrolling: {browser.driver.current_url} {browser.error_code()} {browser.notice()}", secret


def log_in(browser: Browser, email: str, password: str, code: str | None = None) -> None:
    browser.go("login")
    fields = {"email": email, "password": password}
    if code is not None:
        fields["totp"] = code
    browser.submit(browser.forms("login")[0], fields)
