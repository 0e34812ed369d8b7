#!/usr/bin/env python3
"""The operator console in a real browser: headless Chromium (Debian's chromium + chromium-driver) driven by
Selenium against a live `tessera serve`, with axe-core on every page reached.

    Server/Tests/console/flows.py --tessera PATH [--nginx] [--keep]

Starts `tessera serve` on a free loopback port with a temporary SQLite database and
`--allow-insecure-webhooks`, creates a project (`tessera projects create --json`) and operators
(`tessera operators create`, whose enrollment links the browser opens), makes profiles through the public
API (anonymous start, identify with an HS256 identity token, device registration), then runs each flow
once, with no retry, printing `PASS name` or `FAIL name (why)`:

enrollment (one operator with TOTP, its secret scanned from the page's QR code by ZXing), sign-in, a wrong password, search
by each kind of identifier, revoking a session (the SDK's next heartbeat gets 401), a session bound to a
device key (its thumbprint and key tier on the profile page), block and erase (typed
confirmation and password), key rotation, a settings change (a diff before saving), webhook replay to a
local receiver, a POST with a wrong CSRF token (403, nothing changes), a viewer refused a support action
(403 operator_forbidden), and axe-core with 0 violations on every page reached.

With --nginx the browser goes through Debian's nginx, which proxies /auth/ to the server
(http://127.0.0.1:NGINXPORT/auth/console/). Exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import sys
import tempfile
import time
import traceback
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import console_harness as console  # noqa: E402
from console_harness import harness  # noqa: E402
from webhook_receiver import WebhookReceiver  # noqa: E402 (Server/Tests/harness, on the path console_harness set)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
from dpop_proof import DeviceKey  # noqa: E402

check = harness.Checks()


class Flows:
    def __init__(self, server: console.Server, browser: console.Browser, console_url: str, label: str) -> None:
        self.server, self.browser, self.console_url, self.label = server, browser, console_url, label
        self.emails = {role: f"{role}-{label}@example.com" for role in ("owner", "viewer")}
        self.links: dict[str, str] = {}
        self.totp_secret: str | None = None
        self.totp_step = 0
        self.people: dict[str, dict] = {}

    def flow(self, name: str, body) -> None:
        """Runs one flow; an exception is its failure (with the page it was on)."""
        try:
            body()
        except Exception as error:  # noqa: BLE001
            where = ""
            try:
                where = f" at {self.browser.driver.current_url} [{self.browser.heading()}]"
            except Exception:  # noqa: BLE001
                pass
            check(f"{self.label}: {name}", False, f"{type(error).__name__}: {str(error).splitlines()[0][:300]}{where}")
            if "--traceback" in sys.argv:
                traceback.print_exc()

    def ok(self, name: str, condition: object, detail: str = "") -> bool:
        return check(f"{self.label}: {name}", condition, detail)

    # ── Setup ────────────────────────────────────────────────────────────────────────────────────

    def setup(self) -> None:
        for role, email in self.emails.items():
            self.links[role] = self.server.create_operator(email, role, self.console_url)
        for label in ("search", "revoke", "erase", "csrf"):
            self.people[label] = self.server.person(label)
        for _ in range(55):  # more than a page of the profile list (50)
            self.server.anonymous()
        self.bound = self.bound_start()

    def bound_start(self) -> dict:
        """An anonymous start with a DPoP proof and `key_tier: secure_enclave`, as the SDK makes it on a
        device with a Secure Enclave: the session is bound to the key."""
        key, path = DeviceKey(), "/v1/sessions/anonymous"
        pk = self.server.project.publishable_key
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            connection.request("POST", path, json.dumps({**harness.new_installation(), "key_tier": "secure_enclave"}),
                               {"Authorization": f"Bearer {pk}", "Content-Type": "application/json",
                                "DPoP": key.proof("POST", self.server.url + path, pk)})
            response = connection.getresponse()
            body = json.loads(response.read() or b"{}")
        finally:
            connection.close()
        if response.status != 201 or (body["session"].get("binding") or {}).get("jkt") != key.jkt:
            raise SystemExit(f"console: bound anonymous start failed: {response.status} {body}")
        return {"profile_id": body["profile"]["id"], "session_id": body["session"]["id"], "jkt": key.jkt}

    # ── Flows ────────────────────────────────────────────────────────────────────────────────────

    def enrollment(self) -> None:
        b = self.browser
        log = Path(self.server.log_path).read_text(errors="replace")
        self.ok("serve printed the console's URL and, with no operator yet, the command that makes one",
                "/console/" in log and "No operator yet: tessera operators create" in log, "not in the server log")
        ok, detail, secret = console.enroll(b, self.links["owner"], console.PASSWORDS["owner"], totp=True)
        self.totp_step = int(time.time() // 30)
        self.totp_secret = secret
        self.ok("enrollment with TOTP (secret scanned from the QR code)", ok and secret, detail)
        ok, detail, _ = console.enroll(b, self.links["viewer"], console.PASSWORDS["viewer"], totp=False)
        self.ok("enrollment with a password only", ok, detail)
        b.driver.get(self.links["viewer"])
        self.ok("an enrollment link works once", b.error_code() == "enrollment_expired" and not b.forms("enroll"),
                f"second use: {b.error_code()}")

    def wrong_password(self) -> None:
        b = self.browser
        console.log_in(b, self.emails["owner"], "not-the-password-at-all")
        code = b.error_code()
        session = "tessera_console" in b.cookies()
        b.go("")
        self.ok("a wrong password shows an error and opens no session",
                code == "invalid_login" and not session and b.path().endswith("/console/login"),
                f"code {code}, session cookie {session}, then at {b.path()}")

    def log_in(self) -> None:
        b = self.browser
        # The enrollment's own code used this time step; a sign-in takes the next one (±1 step is allowed
        # and a step is never accepted twice).
        console.log_in(b, self.emails["owner"], console.PASSWORDS["owner"])
        needs_code = b.error_code()
        offset = 1 if int(time.time() // 30) <= self.totp_step else 0
        console.log_in(b, self.emails["owner"], console.PASSWORDS["owner"], console.totp_now(self.totp_secret, offset))
        signed_in = b.path().endswith("/console/") and b.csrf() is not None
        self.ok("sign-in with password and TOTP lands on the overview", signed_in and needs_code == "totp_required",
                f"without a code: {needs_code}; then at {b.driver.current_url}, {b.error_code()}")

    def pages(self) -> None:
        """Every page of the menu opens without an error (and gets its axe check)."""
        b = self.browser
        for relative in ("", "profiles", "profiles?kind=identified", "profiles?kind=anonymous", "profiles?verified=true",
                         "profiles?blocked=false", f"profiles?email={self.people['search']['email']}",
                         f"profiles?external_id={self.people['search']['external_id']}",
                         f"profiles?installation_id={self.people['search']['installation_id']}",
                         "sessions", "inspector", "keys", "settings", "webhooks", "audit", "operators"):
            b.go(relative)
            self.ok(f"page {relative or 'overview'} opens", b.error_code() is None and "login" not in b.path(),
                    f"{b.error_code()} [{b.heading()}] at {b.path()}")
        b.go("profiles?kind=identified")
        links = b.driver.find_elements("id", "profiles-csv")
        csv = b.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text().then(t => done([r.status, t])))
              .catch(e => done([-1, String(e)]));""", links[0].get_attribute("href")) if links else [0, ""]
        rows = [line for line in csv[1].split("\r\n")[1:] if line]
        self.ok("the filtered profile list downloads as CSV (identified profiles only)", csv[0] == 200
                and csv[1].startswith("id,kind,external_id") and rows and all(',"identified",' in row for row in rows),
                f"{csv[0]}, {len(rows)} rows")
        b.go("profiles")
        nexts = b.driver.find_elements("css selector", "a[rel=next]")
        if self.ok("the profile list (more than a page of profiles) has a next page link", nexts, "no a[rel=next]"):
            nexts[0].click()
            b.check_page()
            self.ok("the next page opens", b.error_code() is None and "cursor" in b.query(), b.driver.current_url)

    def times(self) -> None:
        """Times read relative with the exact UTC on hover, or in UTC, or in local time; the choice is kept."""
        b = self.browser
        b.go("audit")
        first = lambda: b.driver.find_elements("css selector", "time[datetime]")  # noqa: E731
        if not self.ok("the audit log has times", first(), b.heading()):
            return
        exact = first()[0].get_attribute("title") or ""
        text = first()[0].text
        self.ok("a time reads relative by default, the exact UTC in its title",
                re.search(r"\bago\b|^now$|^in ", text) and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", exact),
                f"{text!r}, title {exact!r}")
        choose = lambda value: b.driver.execute_script(  # noqa: E731
            "var s = document.getElementById('time-display'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('change'));", value)
        b.driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Kolkata"})
        try:
            b.go("audit")
            choose("local")
            local = first()[0].text
            self.ok("local time shows the instant in the browser's zone (UTC+5:30 here)",
                    "GMT+5:30" in local or "IST" in local, f"{local!r} for {exact!r}")
            b.go("audit")
            self.ok("the choice is kept across pages", b.driver.find_element("id", "time-display")
                    .get_attribute("value") == "local" and first()[0].text == local, first()[0].text)
            choose("utc")
            self.ok("UTC shows the exact time", first()[0].text == exact, f"{first()[0].text!r}")
        finally:
            choose("relative")
            b.driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": ""})

    def search(self) -> None:
        b = self.browser
        person = self.people["search"]
        kinds = {"profile ID (usr_)": person["profile_id"], "session ID (ses_)": person["session_id"],
                 "ended session ID (ses_)": person["anonymous_session_id"], "device ID (dev_)": person["device_id"],
                 "installation ID": person["installation_id"], "external ID": person["external_id"],
                 "email": person["email"]}
        for kind, value in kinds.items():
            b.go("")
            form = b.driver.find_element("css selector", "form[role=search]")
            b.submit(form, {"q": value})
            self.ok(f"search by {kind} opens the profile", b.path().endswith("/console/profile")
                    and b.query().get("id") == person["profile_id"] and person["profile_id"] in b.text(),
                    f"{value} → {b.driver.current_url} {b.error_code()}")
        b.go("search?q=usr_000000000000AAAAAAAAAAAAAAAA")
        self.ok("search for an unknown identifier says not found", b.error_code() == "not_found"
                or "not found" in b.text().lower(), f"{b.error_code()} [{b.heading()}]")

    def revoke(self) -> None:
        b, person = self.browser, self.people["revoke"]
        before = self.server.heartbeat(person["session_token"]).status
        b.go(f"profile?id={person['profile_id']}")
        form = b.form_with("revoke-session", session_id=person["session_id"])
        if not self.ok("the profile page has an End session form for the live session", form is not None):
            return
        b.submit(form)
        after = self.server.heartbeat(person["session_token"])
        self.ok("revoking a session in the console: the SDK's next heartbeat gets 401",
                before == 200 and after.status == 401 and b.error_code() is None,
                f"before {before}, after {after.status} {after.code}, page {b.error_code()} {b.notice()}")
        cells = b.driver.find_elements("id", person["session_id"])
        row = cells[0].find_element("xpath", "..").text if cells else ""
        self.ok("the revoked session is listed as ended, with its reason", row and re.search(r"\b(revoked|admin)\b", row)
                and b.form_with("revoke-session", session_id=person["session_id"]) is None, f"row: {row!r}")

    def block_and_erase(self) -> None:
        b, person, server = self.browser, self.people["erase"], self.server
        profile = person["profile_id"]
        b.go(f"profile?id={profile}")
        form = b.forms("block")
        if not self.ok("the profile page has a Block form", form):
            return
        b.submit(form[0], {"reason": "browser test", "password": "wrong-password-here"})
        still = server.heartbeat(person["session_token"]).status
        self.ok("block with a wrong password is refused and changes nothing",
                b.error_code() == "operator_password_wrong" and still == 200, f"{b.error_code()}, heartbeat {still}")
        refused = b.forms("block")
        kept = refused[0].find_element("name", "reason").get_attribute("value") if refused else None
        password = refused[0].find_element("name", "password") if refused else None
        focused = password is not None and b.driver.switch_to.active_element == password
        beside = b.driver.find_elements("css selector", "#password-error.field-error")
        self.ok("a refused form keeps its input: the same profile page, the reason kept, the password not, "
                "the message beside the focused field",
                b.query().get("id") is None and profile in b.text() and kept == "browser test"
                and password is not None and not password.get_attribute("value") and focused and beside,
                f"at {b.driver.current_url}, reason {kept!r}, focused {focused}, message beside {bool(beside)}")
        # Right after the wrong password, the right one works (no "needs your password").
        b.submit(b.forms("block")[0], {"reason": "browser test", "password": console.PASSWORDS["owner"]})
        heartbeat = server.heartbeat(person["session_token"])
        again = server.identify(server.project.publishable_key, person["external_id"])
        self.ok("block ends the sessions and refuses identify (403 profile_blocked)",
                b.error_code() is None and heartbeat.status == 401 and again.status == 403
                and again.code == "profile_blocked", f"page {b.error_code()}, heartbeat {heartbeat.status}, "
                f"identify {again.status} {again.code}")
        b.go(f"profile?id={profile}")
        form = b.forms("erase")[0]
        form.find_element("name", "confirm").send_keys(profile[:-1])
        button = form.find_element("css selector", "button[type=submit]")
        disabled = not button.is_enabled()
        # The server's own check, without the page's script: the same form, posted with the mistyped ID.
        b.post_form("erase", {"csrf": b.csrf(), "profile_id": profile, "confirm": profile[:-1],
                              "password": console.PASSWORDS["owner"]})
        kept = server.admin("GET", f"/v1/admin/profiles/{profile}").status
        self.ok("erase with a mistyped profile ID: the button stays disabled, the server refuses it, nothing changes",
                disabled and b.error_code() is not None and kept == 200,
                f"button disabled {disabled}, server {b.error_code()}, profile {kept}")
        b.go(f"profile?id={profile}")
        b.submit(b.forms("erase")[0], {"confirm": profile, "password": "wrong-password-here"})
        kept = server.admin("GET", f"/v1/admin/profiles/{profile}").status
        self.ok("erase with a wrong password is refused and changes nothing",
                b.error_code() == "operator_password_wrong" and kept == 200, f"{b.error_code()}, profile {kept}")
        b.go(f"profile?id={profile}")
        b.submit(b.forms("erase")[0], {"confirm": profile, "password": console.PASSWORDS["owner"]})
        gone = server.admin("GET", f"/v1/admin/profiles/{profile}")
        self.ok("erase with the typed profile ID and the password erases it", gone.status == 404
                and b.error_code() is None, f"page {b.error_code()}, admin GET {gone.status}")

    def keys(self) -> None:
        """Rotating the publishable key shows the new one once; the project's secret key never reaches a page."""
        b, server = self.browser, self.server
        old_key = server.project.publishable_key
        jwks = server.api("GET", f"/v1/projects/{server.project.project_id}/jwks.json").body.get("keys", [])
        b.go("keys")
        # A key starts a token: `sk_` inside a longer random token (a CSRF token, a publishable key, a
        # key ID: about one page in a thousand has one) is not a secret key.
        found = re.search(r"(?<![A-Za-z0-9_\-])sk_[A-Za-z0-9_\-]{16,}", b.source())
        self.ok("the keys page never shows the secret key", server.project.secret_key not in b.source()
                and not found, f"an sk_ key is in the page: {found.group(0)[:8] if found else ''}…")
        forms = b.forms("rotate-api-key")
        form = b.form_with("rotate-api-key", kind="publishable") or (forms[0] if forms else None)
        if not self.ok("the keys page has a rotate-api-key form", form is not None, b.heading()):
            return
        fields = {"password": console.PASSWORDS["owner"]}
        names = b.field_names(form)
        if "kind" in names and b.form_with("rotate-api-key", kind="publishable") is None:
            fields["kind"] = "publishable"
        b.submit(form, fields)
        shown = re.findall(r"pk_[A-Za-z0-9_\-]{16,}", b.text())
        new = next((key for key in shown if key != old_key), None)
        works = new is not None and server.api("POST", "/v1/sessions/anonymous", new,
                                               harness.new_installation()).status == 201
        old_works = server.api("POST", "/v1/sessions/anonymous", old_key, harness.new_installation()).status == 201
        self.ok("rotating the publishable key shows the new key; it works and the old one keeps its grace period",
                b.error_code() is None and works and old_works,
                f"page {b.error_code()}, new key shown {new is not None}, works {works}, old works {old_works}")
        revealed = b.driver.find_elements("id", "revealed-key")
        b.driver.refresh()
        b.check_page()
        self.ok("the flash is shown once: a reload of the page no longer shows the new key's box",
                revealed and not b.driver.find_elements("id", "revealed-key"), f"before {bool(revealed)}")
        b.go("keys")
        form = b.forms("rotate-signing-key")
        if self.ok("the keys page has a rotate-signing-key form", form):
            b.submit(form[0], {"password": console.PASSWORDS["owner"]})
            after = server.api("GET", f"/v1/projects/{server.project.project_id}/jwks.json").body.get("keys", [])
            self.ok("rotating the signing key adds a key to the JWKS", b.error_code() is None
                    and len(after) == len(jwks) + 1, f"page {b.error_code()}, JWKS {len(jwks)} → {len(after)}")
            landed = b.driver.current_url
            b.driver.refresh()
            b.check_page()
            again = server.api("GET", f"/v1/projects/{server.project.project_id}/jwks.json").body.get("keys", [])
            self.ok("reload after a rotation rotates nothing (Post/Redirect/Get)",
                    "flash=" in landed and b.driver.current_url == landed and len(again) == len(after)
                    and "shown once already" in b.text(), f"at {landed}, JWKS {len(after)} → {len(again)}")

    def settings(self) -> None:
        b, server = self.browser, self.server
        before = server.admin("GET", "/v1/admin/project").body
        b.go("settings")
        forms = b.forms("settings")
        if not self.ok("the settings page has its form", forms, b.heading()):
            return
        form = forms[0]
        names = b.field_names(form)
        target = next((name for name in ("leeway_seconds", "max_identity_token_lifetime_seconds",
                                         "identified_session_minutes", "anonymous_session_minutes") if name in names), None)
        if not self.ok("the settings form has a numeric setting of the API", target, f"fields: {names}"):
            return
        element = form.find_element("name", target)
        old = element.get_attribute("value") or "0"
        new = str(int(old) + 7) if old.isdigit() else "37"
        b.submit(form, {target: new})
        unchanged = server.admin("GET", "/v1/admin/project").body == before
        text = b.text()
        confirm = [form for form in [b.form_with("settings", confirm="1")] if form is not None]
        self.ok("a settings change shows a diff (old and new value) before saving, and saves nothing yet",
                unchanged and b.error_code() is None and old in text and new in text and confirm,
                f"unchanged {unchanged}, {b.error_code()}, old {old} shown {old in text}, new {new} shown {new in text}")
        if not confirm:
            return
        fields = {"password": console.PASSWORDS["owner"]} if "password" in b.field_names(confirm[-1]) else {}
        b.submit(confirm[-1], fields)
        after = server.admin("GET", "/v1/admin/project").body
        changed = [key for key in set(before) | set(after) if before.get(key) != after.get(key)]
        self.ok("confirming the diff saves the setting", b.error_code() is None and changed
                and new in repr({key: after.get(key) for key in changed}),
                f"{b.error_code()} {b.notice()}; changed: {changed}")

    def webhooks(self) -> None:
        b, server = self.browser, self.server
        receiver = WebhookReceiver(status=200).start()
        try:
            b.go("webhooks")
            forms = b.forms("webhook-create")
            if not self.ok("the webhooks page has a create form", forms, b.heading()):
                return
            b.submit(forms[0], {"url": "ftp://example.com/hook", "description": "kept description",
                                "password": console.PASSWORDS["owner"]})
            forms = b.forms("webhook-create")
            kept = forms[0].find_element("name", "description").get_attribute("value") if forms else None
            self.ok("a refused webhook form comes back on the Webhooks page with its input and the URL's message",
                    b.error_code() is not None and kept == "kept description"
                    and b.driver.find_elements("id", "url-error"), f"{b.error_code()}, description {kept!r}")
            if not forms:
                return
            fields = {"url": receiver.url}
            if "password" in b.field_names(forms[0]):
                fields["password"] = console.PASSWORDS["owner"]
            b.submit(forms[0], fields)
            listed = server.admin("GET", "/v1/admin/webhooks").body.get("webhooks", [])
            secret_shown = re.search(r"whsec_[A-Za-z0-9+/=]{20,}", b.text()) is not None
            self.ok("creating a webhook shows its secret once", b.error_code() is None and secret_shown
                    and len(listed) == 1, f"{b.error_code()}, secret shown {secret_shown}, {len(listed)} webhooks")
            b.driver.refresh()
            b.check_page()
            relisted = server.admin("GET", "/v1/admin/webhooks").body.get("webhooks", [])
            self.ok("reloading after creating a webhook makes no second one and shows no secret",
                    len(relisted) == 1 and "whsec_" not in b.text(), f"{len(relisted)} webhooks")
            if not listed:
                return
            webhook = listed[0]["id"]
            server.anonymous()  # a new session: its events go to the endpoint

            def created() -> list[str]:
                return [d.webhook_id for d in receiver.snapshot() if d.body.get("type") == "session.created"]

            arrived, _ = harness.eventually(lambda: bool(created()), 30)
            event = next(iter(created()), None)
            if not self.ok("the new endpoint receives the next events", arrived and event, f"{receiver.ids()[:5]}"):
                return
            b.go(f"webhook?id={webhook}")
            form = b.form_with("webhook-replay", event_id=event)
            if not self.ok("the webhook page lists the delivery with a Replay button", form is not None,
                           f"no webhook-replay form for {event}"):
                return
            fields = {"password": console.PASSWORDS["owner"]} if "password" in b.field_names(form) else {}
            b.submit(form, fields)
            again, seconds = harness.eventually(lambda: receiver.ids().count(event) >= 2, seconds=30)
            self.ok("replaying an event in the console delivers it again to the receiver", b.error_code() is None
                    and again, f"{b.error_code()} {b.notice()}, {event} received {receiver.ids().count(event)} times "
                    f"after {seconds:.1f} s")
        finally:
            receiver.stop()

    def inspector(self) -> None:
        b, server = self.browser, self.server
        b.go("inspector")
        forms = b.forms("inspector")
        if not self.ok("the inspector has its form", forms, b.heading()):
            return
        names = [name for name in b.field_names(forms[0]) if name not in ("csrf",)]
        field = "token" if "token" in names else (names[0] if names else "token")
        forged = server.identity_token("someone")[:-4] + "AAAA"
        b.submit(forms[0], {field: forged})
        self.ok("the inspector names the code identify would answer for a badly signed token",
                "invalid_signature" in b.text() and forged not in b.source(), "no invalid_signature on the page"
                if "invalid_signature" not in b.text() else "the token is echoed back in the page")

    def audit_and_operators(self) -> None:
        b = self.browser
        b.go("audit")
        text = b.text()
        revoked = self.people["revoke"]["session_id"]
        self.ok("the audit log shows the operator's actions (the session they ended)", b.error_code() is None
                and "operator" in text and revoked in text, f"{b.error_code()}, revoked session shown {revoked in text}")
        # Filters: only the sessions the owner ended; the CSV link downloads the same entries.
        forms = b.forms("audit")
        if self.ok("the audit log has a filter form", forms, b.heading()):
            owner = [option.get_attribute("value") for option in b.driver.find_elements("css selector", "#actor option")
                     if option.text == self.emails["owner"]]
            b.submit(forms[0], {"type": "session.ended", "actor": owner[0] if owner else "?"})
            types = [cell.text for cell in b.driver.find_elements(
                "xpath", "//table[caption[normalize-space()='Audit entries']]//tr/td[2]//code")]
            self.ok("filtering the audit log by type and operator lists only those entries", b.error_code() is None
                    and types and set(types) == {"session.ended"} and revoked in b.text(),
                    f"{b.error_code()}, types {sorted(set(types))}")
            link = b.driver.find_element("id", "audit-csv").get_attribute("href")
            csv = b.driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                fetch(arguments[0], {credentials: 'same-origin'})
                  .then(r => r.text().then(t => done([r.status, r.headers.get('content-type'), t])))
                  .catch(e => done([-1, '', String(e)]));""", link)
            lines = csv[2].split("\r\n")
            self.ok("the CSV link downloads the filtered entries as CSV", csv[0] == 200
                    and str(csv[1]).startswith("text/csv") and lines[0].startswith("sequence,type,at,actor")
                    and len([line for line in lines[1:] if line]) == len(types)
                    and all('"session.ended"' in line for line in lines[1:] if line),
                    f"{csv[0]} {csv[1]}, {len(lines)} lines for {len(types)} rows")
        b.go("operators")
        forms = b.forms("operator-create")
        if not self.ok("the operators page has a create form", forms, b.heading()):
            return
        email = f"support-{self.label}@example.com"
        b.submit(forms[0], {"email": email, "role": "support"})
        links = b.driver.find_elements("css selector", "#enrollment-link")
        relative = links[0].get_attribute("data-relative") if links else ""
        href = urllib.parse.urljoin(b.base, relative) if relative else ""
        self.ok("creating an operator in the console shows its enrollment link", b.error_code() is None
                and "/console/enroll?token=" in href and email in b.text(), f"{b.error_code()}, link {href!r}")
        if href:
            ok, detail, _ = console.enroll(b, href, console.PASSWORDS["support"], totp=False)
            listed = json.loads(self.server.cli("operators", "list", "--json").stdout or "{}").get("operators", [])
            enrolled = any(item.get("email") == email and item.get("enrolled") for item in listed)
            self.ok("the console's enrollment link enrolls the new operator (tessera operators list)", ok and enrolled,
                    f"{detail}; enrolled {enrolled}")

    def lockout(self) -> None:
        """A wrong-password storm never locks out the right password; an owner's unlock works."""
        b, server = self.browser, self.server
        jwks = lambda: len(server.api("GET", f"/v1/projects/{server.project.project_id}/jwks.json").body.get("keys", []))
        before = jwks()
        codes = []
        for _ in range(5):
            b.go("keys")
            b.submit(b.forms("rotate-signing-key")[0], {"password": "a-wrong-password-storm"})
            codes.append(b.error_code())
        b.go("keys")
        b.submit(b.forms("rotate-signing-key")[0], {"password": console.PASSWORDS["owner"]})
        self.ok("a wrong-password storm at an action never refuses the right password",
                codes == ["operator_password_wrong"] * 5 and b.error_code() is None and jwks() == before + 1,
                f"codes {codes}, then {b.error_code()}, JWKS {before} → {jwks()}")
        # A sign-in storm against the viewer from this address locks that pair, and says until when.
        viewer = self.emails["viewer"]
        guesser = SignInClient(b.base)
        statuses = [guesser.log_in(viewer, "not-the-password-at-all")[0] for _ in range(10)]
        status, body = guesser.log_in(viewer, console.PASSWORDS["viewer"])
        self.ok("after ten wrong sign-ins the right password from the same address is told plainly until when",
                statuses == [401] * 10 and status == 429 and "locked until" in body, f"{statuses} then {status}")
        b.go("operators")
        form = b.form_with("operator-unlock", email=viewer)
        listed = "locked until" in b.text()
        if not self.ok("the operators page shows the lock and an Unlock button", form is not None and listed,
                       f"form {form is not None}, listed {listed}"):
            return
        b.submit(form)
        status, _ = guesser.log_in(viewer, console.PASSWORDS["viewer"])
        self.ok("an owner's Unlock lets the right password in at once", status == 303 and b.error_code() is None,
                f"{b.error_code()}, sign-in {status}")
        for _ in range(10):
            guesser.log_in(viewer, "not-the-password-at-all")
        done = server.cli("operators", "unlock", "--email", viewer)
        status, _ = guesser.log_in(viewer, console.PASSWORDS["viewer"])
        self.ok("tessera operators unlock --email works too", done.returncode == 0 and status == 303,
                f"{done.returncode} {done.stderr.strip()}, sign-in {status}")
        b.go("operators")
        self.ok("sign-ins, failures, lockouts and unlocks are in the operators' audit",
                all(kind in b.text() for kind in ("operator.sign_in_failed", "operator.locked", "operator.unlocked",
                                                   "operator.signed_in")), "an entry is missing")

    def binding(self) -> None:
        """A profile's bound session shows its key (shortened, whole in the title) and tier; an unbound one says so."""
        b, bound = self.browser, self.bound
        b.go(f"profile?id={bound['profile_id']}")
        cells = b.driver.find_elements("css selector", f"td[id='{bound['session_id']}'] ~ td code.jkt")
        cell = cells[0] if cells else None
        shown = cell.text if cell else ""
        row = cell.find_element("xpath", "./ancestor::tr").text if cell else ""
        self.ok("the profile page shows the session's key: shortened, whole in its title, and its tier",
                cell is not None and cell.get_attribute("title") == bound["jkt"]
                and shown == bound["jkt"][:10] + "…" and "Secure Enclave" in row, f"{shown!r} in {row!r}")
        person = self.people["search"]
        b.go(f"profile?id={person['profile_id']}")
        cells = b.driver.find_elements("css selector", f"td[id='{person['session_id']}'] ~ td")
        self.ok("an unbound session says not bound", any(td.text == "not bound" for td in cells),
                " | ".join(td.text for td in cells))

    def active_users(self) -> None:
        """The overview charts active users as SVG images with a title and a description, with a table
        fallback; today's figures count the profiles this run started; a profile lists its installations."""
        b = self.browser
        deadline = time.monotonic() + 20
        b.go("")
        while "Counting" in b.text() and time.monotonic() < deadline:  # counted in the background
            time.sleep(0.2)
            b.go("")
        charts = b.driver.find_elements("css selector", "svg.chart[role=img]")
        titled = all(chart.find_elements("css selector", "title") and chart.find_elements("css selector", "desc")
                     for chart in charts)
        self.ok("the overview has the daily-active and conversion charts, each an image with a title and a description",
                len(charts) == 2 and titled, f"{len(charts)} charts, titled {titled}")
        rows = b.driver.find_elements("xpath", "//section[@aria-labelledby='active-title']//tbody/tr")
        today = rows[0].find_elements("css selector", "td") if rows else []
        figure = int(today[0].text.replace(",", "")) if today and today[0].text.replace(",", "").isdigit() else 0
        self.ok("today's active profiles count the profiles this run started", figure > 0,
                rows[0].text if rows else "no window rows")
        table = b.driver.find_elements("xpath", "//details[summary[contains(., 'daily figures')]]//table")
        self.ok("the daily figures are also a table", bool(table), "no table under the charts")
        self.ok("the overview says what share of starts and identifies enforce would refuse (App Attest)",
                "App Attest" in b.text() and "Mode:" in b.text(), "no App Attest section")
        person = self.people["search"]
        b.go(f"profile?id={person['profile_id']}")
        section = b.driver.find_elements("css selector", "section[aria-labelledby=installations-title]")
        self.ok("a profile lists its installations with their App Attest verdict",
                section and person["installation_id"] in section[0].text and "not checked" in section[0].text,
                section[0].text if section else "no installations section")

    def get_on_post(self) -> None:
        b = self.browser
        b.go("block")
        on_list = b.path().endswith("/console/profiles") and b.error_code() is None
        b.go("rotate-api-key")
        on_keys = b.path().endswith("/console/keys")
        self.ok("GET of a form's address gives a console page, never JSON", on_list and on_keys
                and not b.source().lstrip().startswith("{"), f"at {b.driver.current_url}")

    def csrf(self) -> None:
        b, person = self.browser, self.people["csrf"]
        b.go(f"profile?id={person['profile_id']}")
        fields = {"csrf": "wrong-" + "x" * 38, "profile_id": person["profile_id"], "session_id": person["session_id"]}
        status, body = b.fetch_post("revoke-session", fields)
        b.post_form("revoke-session", fields)
        alive = self.server.heartbeat(person["session_token"]).status
        self.ok("a POST with a wrong CSRF token gets 403 and changes nothing", status == 403
                and b.error_code() == "csrf_token_invalid" and alive == 200,
                f"status {status}, page {b.error_code()}, heartbeat {alive}")
        status, _ = b.fetch_post("revoke-session", {k: v for k, v in fields.items() if k != "csrf"})
        alive = self.server.heartbeat(person["session_token"]).status
        self.ok("a POST without a CSRF token gets 403 and changes nothing", status == 403 and alive == 200,
                f"status {status}, heartbeat {alive}")

    def viewer(self) -> None:
        b, person = self.browser, self.people["csrf"]
        b.go("")
        logout = b.form_with("logout")
        if logout is not None:
            b.submit(logout)
        signed_out = b.path().endswith("/console/login") and "tessera_console" not in b.cookies()
        self.ok("signing out ends the console session", signed_out, b.driver.current_url)
        console.log_in(b, self.emails["viewer"], console.PASSWORDS["viewer"])
        csrf = b.csrf()
        if not self.ok("the viewer signs in", csrf is not None, f"{b.error_code()} at {b.driver.current_url}"):
            return
        b.go(f"profile?id={person['profile_id']}")
        masked = person["email"] not in b.text()
        no_form = b.form_with("revoke-session", session_id=person["session_id"]) is None
        self.ok("a viewer sees the profile with the email masked and no support action", masked and no_form,
                f"email masked {masked}, no revoke form {no_form}")
        fields = {"csrf": csrf, "profile_id": person["profile_id"], "session_id": person["session_id"]}
        status, body = b.fetch_post("revoke-session", fields)
        b.post_form("revoke-session", fields)
        alive = self.server.heartbeat(person["session_token"]).status
        self.ok("a viewer is refused a support action (403 operator_forbidden) and nothing changes",
                status == 403 and 'data-code="operator_forbidden"' in body and b.error_code() == "operator_forbidden"
                and alive == 200, f"status {status}, page {b.error_code()}, heartbeat {alive}")
        b.go("operators")
        self.ok("a viewer is refused the operators page", b.error_code() == "operator_forbidden", f"{b.error_code()}")

    def axe(self) -> None:
        b = self.browser
        for violation in b.axe_violations:
            print(f"  axe: {violation}", flush=True)
        self.ok(f"axe-core: 0 violations on the {len(b.axe_checked)} pages reached, light and dark palettes",
                b.axe_pages == 2 * len(b.axe_checked) > 0 and not b.axe_violations,
                f"{len(b.axe_violations)} violations, {b.axe_pages} page checks")


class SignInClient:
    """The sign-in form without a browser (a guesser's script): a cookie jar of its own per attempt, the
    form token from the page, one POST; answers the status and the page."""

    def __init__(self, base: str) -> None:
        import http.cookiejar
        import urllib.request

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *arguments, **keywords):  # noqa: ANN002, ANN003
                return None

        self.base = base
        # A fresh cookie jar per attempt: a guesser's script keeps no session between attempts.
        self.opener = lambda: urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect())

    def log_in(self, email: str, password: str) -> tuple[int, str]:
        import urllib.error
        opener = self.opener()
        page = opener.open(urllib.parse.urljoin(self.base, "login")).read().decode()
        token = re.search(r'name="csrf" value="([^"]+)"', page)
        body = urllib.parse.urlencode({"csrf": token.group(1) if token else "", "email": email,
                                       "password": password}).encode()
        try:
            response = opener.open(urllib.parse.urljoin(self.base, "login"), body)
            return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True, help="the tessera binary (debug build)")
    parser.add_argument("--nginx", action="store_true", help="go through nginx at /auth/")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--traceback", action="store_true")
    arguments = parser.parse_args()
    label = "nginx /auth/" if arguments.nginx else "direct"
    work = Path(tempfile.mkdtemp(prefix="tessera-console-"))
    started = time.monotonic()
    server = nginx = browser = None
    try:
        try:
            options = ("--allow-insecure-webhooks",) + (("--trusted-proxy-header", "X-Forwarded-For")
                                                         if arguments.nginx else ())
            server = console.Server(arguments.tessera, work, options=options)
            base = server.url
            if arguments.nginx:
                nginx = console.Nginx(server.port, work)
                base = nginx.url
            browser = console.Browser(base + "/console/")
            flows = Flows(server, browser, base, "nginx" if arguments.nginx else "direct")
            flows.setup()
        except (SystemExit, Exception) as error:  # noqa: BLE001 (no flow can run: one failure, said why)
            check(f"{label}: setup (server, nginx, browser, operators, data)", False, f"{type(error).__name__}: {error}")
            return 1
        print(f"console flows ({label}): browser at {base}/console/, server log {server.log_path}", flush=True)
        for name in ("enrollment", "wrong_password", "log_in", "pages", "times", "search", "binding", "revoke",
                     "block_and_erase", "keys", "settings", "webhooks", "inspector", "audit_and_operators", "lockout",
                     "get_on_post", "csrf",
                     "active_users", "viewer", "axe"):
            flows.flow(name.replace("_", " "), getattr(flows, name))
    finally:
        if browser is not None:
            browser.quit()
        for process in (nginx, server):
            if process is not None:
                process.stop()
    print(f"console flows ({label}): {len(check.passes)} passed, {len(check.failures)} failed "
          f"in {time.monotonic() - started:.0f} s", flush=True)
    if check.failures or arguments.keep:
        print(f"console flows: kept {work}", file=sys.stderr)
    else:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if check.failures or not check.passes else 0


if __name__ == "__main__":
    sys.exit(main())
