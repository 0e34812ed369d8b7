#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into Fuzz/Corpus/<target>/seed-*.

Seeds use the fixtures of Fuzz/Shared/FuzzSupport.swift (fixed secrets, the session key whose scalar
is bytes 1…32, the clock 1_800_000_000) and the Wycheproof JWS/JWK vectors in
Tests/Vectors/wycheproof (vendored). Each seed starts with the mode byte its target reads first.
Needs `cryptography` (scripts/test installs it into .venv). Run it again only to regenerate seeds;
scripts/fuzz --update-corpus merges what the fuzzers find.
"""
import base64, hashlib, hmac, json, os, pathlib, sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

HERE = pathlib.Path(__file__).resolve().parent
VECTORS = HERE.parent / "Tests/Vectors/wycheproof"
NOW = 1_800_000_000
SECRET = b"tis_0123456789abcdefghijklmnopqrstuvwxyzABCD"
OTHER = b"tis_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkj"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256(header: bytes, payload: bytes, key: bytes = SECRET) -> str:
    signing_input = b64(header) + "." + b64(payload)
    return signing_input + "." + b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())


SESSION_KEY = ec.derive_private_key(int.from_bytes(bytes(range(1, 33)), "big"), ec.SECP256R1())
RETIRED_KEY = ec.derive_private_key(int.from_bytes(bytes(100 + i for i in range(1, 33)), "big"), ec.SECP256R1())


def es256(header: bytes, payload: bytes, key=SESSION_KEY) -> str:
    signing_input = b64(header) + "." + b64(payload)
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256(), deterministic_signing=True)))
    return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def jwk(key, kid: str) -> dict:
    numbers = key.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")),
            "y": b64(numbers.y.to_bytes(32, "big")), "kid": kid, "use": "sig", "alg": "ES256"}


def compact(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def write(target: str, seeds: list[bytes]) -> None:
    directory = HERE / "Corpus" / target
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("seed-*"):
        old.unlink()
    for seed in dict.fromkeys(seeds):  # distinct, in order
        (directory / ("seed-" + hashlib.sha1(seed).hexdigest()[:16])).write_bytes(seed)
    print(f"{target}: {len(set(seeds))} seeds")


wycheproof_jws = json.loads((VECTORS / "json_web_signature_test.json").read_text())
wycheproof_jwk = json.loads((VECTORS / "json_web_key_test.json").read_text())


def vectors(alg: str):
    for group in wycheproof_jws["testGroups"]:
        key = group.get("private") or group.get("public") or {}
        if key.get("alg") == alg:
            for test in group["tests"]:
                if isinstance(test.get("jws"), str):
                    yield test["jws"].encode()


# ── identity tokens ────────────────────────────────────────────────────────────────────────────
HEADERS = [
    b'{"alg":"HS256","typ":"JWT","kid":"k1"}', b'{"alg":"HS256"}', b'{"alg":"HS256","typ":"jwt"}',
    b'{"alg":"HS256","typ":"application/jwt"}', b'{"alg":"HS256","kid":"k2"}', b'{"alg":"none"}',
    b'{"alg":"HS256","crit":["exp"]}', b'{"alg":"HS256","alg":"HS256"}', b'{"alg":"hs256"}',
    b'{"alg":"ES256","kid":"k1"}', b'{"alg":"HS256","kid":""}', b'{"alg":"HS256","kid":"../k1"}',
    b'{"alg":"HS256","jku":"https://evil.example"}', b'{"alg":"HS256","b64":false}',
    b'{"alg":"HS256","typ":7}', b'\xef\xbb\xbf{"alg":"HS256"}', b'{"alg":"HS\\u0032\\u00356"}',
    b' {"alg" : "HS256" } ', b'{"alg":"HS256",}', b'["alg","HS256"]',
]
PAYLOADS = [
    b'{"sub":"user-1","exp":%d}' % (NOW + 300),
    b'{"sub":"user-1","exp":%d,"iat":%d,"nbf":%d,"jti":"j1","aud":"prj_fuzz"}' % (NOW + 300, NOW, NOW),
    b'{"sub":"u","exp":%d,"aud":["x","acme"],"iss":"https://backend.example","name":"Ada",'
    b'"avatar_url":"https://a.example:8443/p?q#f","email":"a.b+c@ex-ample.co"}' % (NOW + 120),
    b'{"sub":"u","exp":%d,"display_name":"D","avatarUrl":"https://[::1]/x","picture":null}' % (NOW + 10),
    b'{"sub":"u","exp":%d,"displayName":"\\u00e9\\ud83d\\ude00","picture":"https://h"}' % (NOW + 10),
    b'{"sub":"u","exp":%d.5,"iat":1e3,"nbf":-0.0}' % (NOW + 10),
    b'{"sub":"u","exp":%d}' % (NOW - 61), b'{"sub":"u","exp":%d}' % (NOW + 3661),
    b'{"sub":"u","exp":%d,"nbf":%d}' % (NOW + 100, NOW + 100), b'{"sub":"u","exp":1e999}',
    b'{"sub":"","exp":%d}' % (NOW + 1), b'{"sub":"a\\u0000b","exp":%d}' % (NOW + 1),
    b'{"sub":1,"exp":%d}' % (NOW + 1), b'{"exp":%d}' % (NOW + 1), b'{"sub":"u"}',
    b'{"sub":"u","exp":"%d"}' % (NOW + 1), b'{"sub":"u","sub":"v","exp":%d}' % (NOW + 1),
    b'{"sub":"u","exp":%d,"aud":[]}' % (NOW + 1), b'{"sub":"u","exp":%d,"aud":"other"}' % (NOW + 1),
    b'{"sub":"u","exp":%d,"email":"no-at"}' % (NOW + 1), b'{"sub":"u","exp":%d,"name":" "}' % (NOW + 1),
    b'{"sub":"u","exp":%d,"avatar_url":"http://x"}' % (NOW + 1),
    b'{"sub":"u","exp":%d,"name":"\xc3\xa9","x":[[[[{}]]]],"y":{"a":[true,false,null,-1.5e-3]}}' % (NOW + 1),
    b'{"sub":"u","exp":%d,"iat":-1e300,"nbf":-1.7976931348623157e308}' % (NOW + 1), b'{"sub":"u","exp":1e308}',
    b'{"sub":"u","exp":%d,"jti":""}' % (NOW + 1), b'{"sub":"\xed\xa0\x80","exp":%d}' % (NOW + 1),
]
identity = []
for payload in PAYLOADS[:6]:
    identity.append(b"\x00" + hs256(HEADERS[0], payload).encode())
    identity.append(b"\x00" + hs256(HEADERS[1], payload).encode())
identity.append(b"\x00" + hs256(HEADERS[4], PAYLOADS[0], OTHER).encode())
identity += [b"\x00" + jws for jws in vectors("HS256")]
valid = hs256(HEADERS[0], PAYLOADS[0])
h, p, s = valid.split(".")
for text in ["", ".", "..", "a.b.c", valid + "=", valid + ".", h + "." + p, h + ".." + s, h + "=." + p + "." + s,
             valid.replace("-", "+"), " " + valid, h + "." + p + "." + s[:-1], "." * 3000, "eyJ" * 200]:
    identity.append(b"\x00" + text.encode())
for header in HEADERS:
    identity.append(b"\x01\x00" + header + b"\x00" + PAYLOADS[0])
for payload in PAYLOADS:
    identity.append(b"\x01\x00" + HEADERS[0] + b"\x00" + payload)
identity.append(b"\x01\x01" + HEADERS[4] + b"\x00" + PAYLOADS[1])
for seed in range(3):
    for segment in range(3):
        for op in range(4):
            identity.append(bytes([2, seed, segment, op]) + (PAYLOADS[2] if op in (1, 3) else b"x"))
for text in [b"", b"A", b"AA", b"AB", b"AAA", b"AAB", b"AAAA", b"_-_-", b"AA==", b"A+/B", b"eyJhbGciOiJIUzI1NiJ9"]:
    identity.append(b"\x03" + text)
for json_text in PAYLOADS[:4] + HEADERS[14:] + [b'{"a":"\\ud800"}', b'{"a":1e309}', b'{"a":01}', b'{"a":"\x01"}']:
    identity.append(b"\x03" + json_text)
write("IdentityToken", identity)

# ── session JWTs ───────────────────────────────────────────────────────────────────────────────
SESSION_HEADER = b'{"alg":"ES256","kid":"sk1","typ":"session+jwt"}'


def session_payload(offset=0, kind="anonymous", external=None, **extra) -> bytes:
    claims = {"iss": "https://tessera.example", "aud": "prj_fuzz", "sub": "usr_1", "sid": "ses_1",
              "exp": NOW + offset + 300, "iat": NOW + offset, "nbf": NOW + offset, "kind": kind,
              "external_id": external}
    claims.update(extra)
    return compact(claims)


SESSION_HEADERS = [
    SESSION_HEADER, b'{"alg":"ES256","kid":"sk0","typ":"session+jwt"}', b'{"alg":"ES256","kid":"sk1"}',
    b'{"alg":"ES256","kid":"sk1","typ":"JWT"}', b'{"alg":"ES256","typ":"session+jwt"}',
    b'{"alg":"HS256","kid":"sk1","typ":"session+jwt"}', b'{"alg":"none","kid":"sk1","typ":"session+jwt"}',
    b'{"alg":"ES256","kid":"sk9","typ":"session+jwt"}', b'{"alg":"ES256","kid":"sk1","typ":"session+jwt","jwk":{}}',
    b'{"alg":"ES256","kid":"sk1","typ":"Session+JWT"}',
]
SESSION_PAYLOADS = [
    session_payload(), session_payload(-100, "verified", "user-42"), session_payload(-10, "unverified", "\u00e9"),
    session_payload(-400), session_payload(200), session_payload(0, iss="https://other.example"),
    session_payload(0, aud="prj_other"), session_payload(0, exp=1e300), session_payload(0, nbf=-1e300, iat=1e300),
    session_payload(0, exp=NOW + 0.5), session_payload(0, external_id=7), session_payload(0, sid=None),
    b'{"iss":"i","aud":"a","sub":"s","sid":"d","exp":%d,"iat":0,"nbf":0,"kind":"k"}' % (NOW + 10), b"{}", b"[]",
]
session = []
for payload in SESSION_PAYLOADS[:6]:
    session.append(b"\x00" + es256(SESSION_HEADER, payload).encode())
session.append(b"\x00" + es256(SESSION_HEADERS[1], SESSION_PAYLOADS[0], RETIRED_KEY).encode())
session += [b"\x00" + jws for jws in vectors("ES256")]
valid = es256(SESSION_HEADER, SESSION_PAYLOADS[0])
h, p, s = valid.split(".")
for text in ["", "..", h + "." + p, h + "." + p + "." + s + "A", h + "." + p + "." + b64(bytes(64)), valid + "."]:
    session.append(b"\x00" + text.encode())
for header in SESSION_HEADERS:
    session.append(b"\x01\x00" + header + b"\x00" + SESSION_PAYLOADS[0])
for payload in SESSION_PAYLOADS:
    session.append(b"\x01\x00" + SESSION_HEADER + b"\x00" + payload)
session.append(b"\x01\x01" + SESSION_HEADERS[1] + b"\x00" + SESSION_PAYLOADS[1])
session.append(b"\x01\x02" + SESSION_HEADER + b"\x00" + SESSION_PAYLOADS[0])
for seed in range(3):
    for segment in range(3):
        session.append(bytes([2, seed, segment, 0]) + b"eyJ")
        session.append(bytes([2, seed, segment, 1]) + b"\x01")
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
r, s_ = int.from_bytes(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))[:32], "big"), None
raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
high_s = raw[:32] + (N - int.from_bytes(raw[32:], "big")).to_bytes(32, "big")
for signature in [bytes(64), raw, high_s, raw[:63], raw + b"\x00", b"\x30\x44" + raw, N.to_bytes(32, "big") * 2]:
    session.append(b"\x03\x00" + signature)
write("SessionJWT", session)

# ── JWKS ───────────────────────────────────────────────────────────────────────────────────────
real, retired = jwk(SESSION_KEY, "sk1"), jwk(RETIRED_KEY, "sk0")
jwks = [compact({"keys": [real, retired]}), compact({"keys": [real]}), compact({"keys": []}),
        compact({"keys": [dict(real, kid="other")]}), compact({"keys": [real, dict(real)]}),
        compact({"keys": [dict(real, d=real["x"])]}), compact({"keys": [dict(real, crv="P-384")]}),
        compact({"keys": [dict(real, kty="RSA")]}), compact({"keys": [dict(real, alg="HS256")]}),
        compact({"keys": [dict(real, use="enc")]}), compact({"keys": [dict(real, x=real["x"] + "=")]}),
        compact({"keys": [dict(real, y=real["x"])]}), compact({"keys": [dict(real, kid="")]}),
        compact({"keys": [{k: v for k, v in real.items() if k not in ("use", "alg")}]}),
        compact({"keys": [dict(real, x=b64(bytes(32)), y=b64(bytes(32)))]}),
        compact({"keys": [dict(real, kid=7)]}), compact({"keys": {}}), b'{"keys":[1]}', b"[]", b"",
        compact({"keys": [real], "keys2": []}), b'{"keys":[],"keys":[]}']
for group in wycheproof_jwk["testGroups"]:
    for name in ("private", "public"):
        if name in group:
            jwks.append(compact(group[name]))
for group in wycheproof_jws["testGroups"]:
    for name in ("private", "public"):
        if name in group:
            jwks.append(compact({"keys": [group[name]]}))
write("JWKS", jwks)

# ── AppAttest ──────────────────────────────────────────────────────────────────────────────────
# The vendored real vectors (Server/Tests/Vectors/app-attest): mode 0 and 1 get every attestation
# object, mode 0 and 2 every assertion, mode 3 every authenticator data; plus small CBOR edge cases.
APP_ATTEST = HERE.parent / "Server/Tests/Vectors/app-attest"
app_attest = [b"\x00", b"\x00\xa0", b"\x00\x80", b"\x00\x5b\x00\x00\x00\x01\x00\x00\x00\x00",
              b"\x00\xbf\xff", b"\x00\xa2\x61a\x01\x61a\x02", b"\x00\xf9\x3c\x00", b"\x00\xf8\x20",
              b"\x00\xc1\x1a\x00\x00\x00\x01", b"\x00" + b"\x81" * 12 + b"\x00"]
for path in sorted(APP_ATTEST.glob("*.json")):
    vector = json.loads(path.read_text())
    if vector["kind"] == "attestation":
        obj = base64.b64decode(vector["attestation_object_b64"])
        app_attest += [b"\x00" + obj, b"\x01" + obj]
        auth = obj[obj.rfind(b"hauthData") + 9:]
        # The authData byte string's head: 0x59 and a two-byte length.
        if auth[:1] == b"\x59":
            app_attest.append(b"\x03" + auth[3:3 + int.from_bytes(auth[1:3], "big")])
    else:
        obj = base64.b64decode(vector["assertion_b64"])
        app_attest += [b"\x00" + obj, b"\x02" + obj]
fuzz_app = hashlib.sha256(b"TEAMID1234.dev.tessera.fuzz").digest()
for counter in (0, 7, 8, 0xFFFFFFFF):
    app_attest.append(b"\x03" + fuzz_app + b"\x40" + counter.to_bytes(4, "big"))
write("AppAttest", app_attest)
