#!/usr/bin/env python3
"""Screenshots of the operator console (1280×900 PNGs) with sample data, for docs/console/.

    Server/Tests/console/screenshots.py --tessera PATH [--out docs/console]

Starts `tessera serve` on a temporary SQLite database, makes a few people through the public API (an
anonymous start, identify with an identity token, a device; one merged anonymous profile), a webhook
to a local receiver, a few admin actions for the audit log, enrolls an owner and takes the overview
(with its active-user charts), profiles, a search of them, a profile (timeline, sessions with their
last client), recent sessions, the token inspector (with a token pasted), keys, webhooks and audit pages, the
profile again in the dark palette, and an enrollment page with its TOTP QR code.
Needs .venv's Python (scripts/console-deps).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import shutil
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import console_harness as console  # noqa: E402
from console_harness import harness  # noqa: E402

PAGES = ("overview", "profiles", "profiles-search", "profile", "sessions", "inspector", "keys", "webhooks", "audit",
         "profile-dark", "enroll")


def shoot(browser, out: Path, name: str) -> None:
    problem = browser.error_code()
    browser.screenshot(out / f"{name}.png")
    print(f"{'PASS' if problem is None else 'FAIL'} {out / (name + '.png')} [{browser.heading()}]"
          + (f" ({problem})" if problem else ""), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--out", default=str(harness.ROOT / "docs" / "console"))
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tessera-console-shots-"))
    server = console.Server(arguments.tessera, work)
    receiver = console.Receiver()
    browser = None
    try:
        people = [server.person(name) for name in ("ada", "grace", "alan", "edsger", "barbara")]
        for _ in range(6):
            server.anonymous()
        # A second device and session for the first person, and an anonymous profile merged into it.
        _, anonymous = server.anonymous()
        merged = server.identify(anonymous["session_token"], people[0]["external_id"])
        if merged.status == 200:
            server.device(merged.body["session_token"])
        server.admin("POST", "/v1/admin/webhooks", {"url": receiver.url, "description": "CRM sync"})
        server.admin("DELETE", f"/v1/admin/sessions/{people[2]['session_id']}")
        server.admin("POST", f"/v1/admin/profiles/{people[4]['profile_id']}/block", {"reason": "chargeback"})
        server.admin("POST", "/v1/admin/identity-secrets")

        link = server.create_operator("ops@example.com", "owner")
        browser = console.Browser(server.url + "/console/", axe=False)
        ok, detail, _ = console.enroll(browser, link, console.PASSWORDS["owner"], totp=False)
        if not ok:
            raise SystemExit(f"screenshots: enrollment failed: {detail}")
        console.log_in(browser, "ops@example.com", console.PASSWORDS["owner"])
        if browser.csrf() is None:
            raise SystemExit(f"screenshots: sign-in failed: {browser.error_code()}")
        shots = {"overview": "", "profiles": "profiles", "profiles-search": "profiles?search=ada",
                 "profile": f"profile?id={people[0]['profile_id']}", "sessions": "sessions",
                 "inspector": "inspector", "keys": "keys", "webhooks": "webhooks", "audit": "audit"}
        for name, relative in shots.items():
            browser.go(relative)
            # The overview's counts and active users are summed in the background after the first
            # look (and the active users after the node's next flush): look again until they are.
            for _ in range(20):
                if name != "overview" or "Counting" not in browser.driver.page_source:
                    break
                time.sleep(0.5)
                browser.go(relative)
            if name == "inspector" and browser.forms("inspector"):
                form = browser.forms("inspector")[0]
                names = [n for n in browser.field_names(form) if n != "csrf"]
                field = "token" if "token" in names else (names[0] if names else "token")
                browser.submit(form, {field: server.identity_token("user-4711", email="ada@example.com")})
            shoot(browser, out, name)
        # The dark palette (prefers-color-scheme: dark), and an enrollment page with its TOTP QR code.
        browser.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                       {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        browser.go(f"profile?id={people[0]['profile_id']}")
        shoot(browser, out, "profile-dark")
        browser.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        browser.driver.get(server.create_operator("grace@example.com", "support"))
        shoot(browser, out, "enroll")
    finally:
        if browser is not None:
            browser.quit()
        receiver.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
