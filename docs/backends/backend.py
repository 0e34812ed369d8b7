"""A Python app backend and Tessera: mint identity tokens, verify session JWTs, introspect.

Needs PyJWT with its crypto extra (`pip install "pyjwt[crypto]"`). Run as a script:

    python backend.py mint SUB                 # prints an identity token
    python backend.py verify JWT [KIND ...]    # prints the claims, or the reason and exits 1
    python backend.py introspect TOKEN         # prints the introspection answer

with TESSERA_URL, TESSERA_PROJECT_ID, TESSERA_IDENTITY_SECRET, TESSERA_IDENTITY_KID and
TESSERA_SECRET_KEY in the environment.
"""

import json
import os
import sys
import time
import urllib.request
import uuid

import jwt

TESSERA_URL = os.environ["TESSERA_URL"]
PROJECT_ID = os.environ["TESSERA_PROJECT_ID"]


def mint_identity_token(sub, email=None, ttl_seconds=60):
    """An identity token for the SDK to exchange at POST /v1/sessions/identify."""
    now = int(time.time())
    claims = {"sub": sub, "aud": PROJECT_ID, "iat": now, "exp": now + ttl_seconds, "jti": str(uuid.uuid4())}
    if email:
        claims["email"] = email
    # The HMAC key is the secret string itself (PyJWT encodes it as UTF-8).
    return jwt.encode(claims, os.environ["TESSERA_IDENTITY_SECRET"], algorithm="HS256",
                      headers={"kid": os.environ["TESSERA_IDENTITY_KID"]})


# One client per process: it caches the JWKS and fetches it again when a kid is unknown (a rotation),
# at most every cooldown_duration seconds (PyJWT's default, 30 s, would refuse the new key's JWTs
# for up to 30 s after a rotation).
jwks_client = jwt.PyJWKClient(
    f"{TESSERA_URL}/v1/projects/{PROJECT_ID}/jwks.json", lifespan=300,
    cooldown_duration=float(os.environ.get("TESSERA_JWKS_COOLDOWN_SECONDS", "10")),
)


def verify_session_jwt(token, kinds=("verified",)):
    """The claims of a session JWT the app sent, verified offline; raises when it is not acceptable."""
    key = jwks_client.get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token, key.key, algorithms=["ES256"], audience=PROJECT_ID, issuer=TESSERA_URL, leeway=60,
        options={"require": ["exp", "iat", "sub", "sid", "kind"]},
    )
    # anonymous and unverified sessions prove nothing about who the user is: require what you need.
    if claims["kind"] not in kinds:
        raise jwt.InvalidTokenError(f"session kind {claims['kind']} is not accepted here")
    return claims  # claims["sub"] is the Tessera profile ID, claims["external_id"] your user ID


def introspect(session_token=None, session_jwt=None):
    """Asks the server whether a session is alive now (an opaque token, or a revocation at once)."""
    body = {"session_token": session_token} if session_token else {"session_jwt": session_jwt}
    request = urllib.request.Request(
        f"{TESSERA_URL}/v1/admin/sessions/introspect", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {os.environ['TESSERA_SECRET_KEY']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)  # {"active": false} or {"active": true, "session", "profile", "capabilities"}


if __name__ == "__main__":
    command, argument = sys.argv[1], sys.argv[2]
    if command == "mint":
        print(mint_identity_token(argument))
    elif command == "verify":
        try:
            print(json.dumps(verify_session_jwt(argument, tuple(sys.argv[3:]) or ("verified",))))
        except jwt.PyJWTError as error:
            print(error, file=sys.stderr)
            sys.exit(1)
    elif command == "introspect":
        key = "session_jwt" if argument.count(".") == 2 else "session_token"
        print(json.dumps(introspect(**{key: argument})))
