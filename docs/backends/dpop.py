"""Verifies a request of a session bound to a device key (RFC 9449 DPoP) with PyJWT:
`Authorization: DPoP <session JWT>` and `DPoP: <proof>`. Run as a script:

    python dpop.py METHOD URL AUTHORIZATION PROOF [KIND ...]   # prints the claims, or the reason and exits 1

with TESSERA_URL and TESSERA_PROJECT_ID in the environment (the JWT is verified by backend.py).
"""

import base64
import hashlib
import json
import sys
import time

import jwt

from backend import verify_session_jwt


def sha256(text):
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


def thumbprint(jwk):
    """RFC 7638: SHA-256 of the key's required members in lexicographic order, no whitespace."""
    return sha256(json.dumps({name: jwk[name] for name in ("crv", "kty", "x", "y")}, separators=(",", ":")))


def verify_proof(proof, method, url, access_token, skew_seconds=60):
    """The proof's key thumbprint and jti, once its header, signature and claims fit this request."""
    header = jwt.get_unverified_header(proof)
    jwk = header.get("jwk")
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
        raise jwt.InvalidTokenError("not an ES256 DPoP proof")
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or "d" in jwk:
        raise jwt.InvalidTokenError("jwk is not a P-256 public key")
    claims = jwt.decode(proof, jwt.PyJWK(jwk, "ES256").key, algorithms=["ES256"],
                        options={"require": ["htm", "htu", "iat", "jti", "ath"]}, leeway=skew_seconds)
    if claims["htm"] != method:
        raise jwt.InvalidTokenError("htm is not this request's method")
    if claims["htu"] != url.split("?")[0].split("#")[0]:
        raise jwt.InvalidTokenError("htu is not this request's URL")
    if abs(time.time() - claims["iat"]) > skew_seconds:
        raise jwt.InvalidTokenError("iat is too far from now")
    if claims["ath"] != sha256(access_token):
        raise jwt.InvalidTokenError("ath is not this session JWT's")
    return thumbprint(jwk), claims["jti"]


def verify_bound_request(method, url, authorization, proof, kinds=("verified",)):
    """The session JWT's claims, once the proof is by the key the session is bound to (cnf.jkt)."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "dpop" or not token or not proof:
        raise jwt.InvalidTokenError("not a DPoP request")
    jkt, jti = verify_proof(proof, method, url, token)
    claims = verify_session_jwt(token, kinds)
    if claims.get("cnf", {}).get("jkt") != jkt:
        raise jwt.InvalidTokenError("the session is bound to another key (or to none)")
    # Keep jti for two minutes and refuse it again on requests that change something.
    return claims


if __name__ == "__main__":
    try:
        print(json.dumps(verify_bound_request(*sys.argv[1:5], tuple(sys.argv[5:]) or ("verified",))))
    except (jwt.PyJWTError, ValueError, KeyError, TypeError) as error:
        print(error, file=sys.stderr)
        sys.exit(1)
