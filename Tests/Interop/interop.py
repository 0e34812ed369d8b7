#!/usr/bin/env python3
"""PyJWT side of the TesseraTokens interoperability tests (run by `swift test` through scripts/test).

  interop.py mint SECRET KID SUB AUD EXP       -> prints an HS256 identity token minted by PyJWT
  interop.py verify-identity SECRET AUD TOKEN  -> verifies a Tessera-minted identity token, prints its claims as JSON
  interop.py verify-session JWKS ISS AUD TOKEN -> verifies a Tessera session JWT against the JWKS, prints its claims
  interop.py verify-dpop PROOF                 -> verifies a DPoP proof with the key in its own jwk header (RFC 9449),
                                                  prints its header, claims and RFC 7638 thumbprint
"""
import base64
import hashlib
import json
import sys

import jwt


def main(argv):
    command = argv[1]
    if command == "mint":
        secret, kid, sub, aud, exp = argv[2:7]
        claims = {"sub": sub, "aud": aud, "exp": int(exp), "iat": int(exp) - 300, "name": "Py Thon", "email": "py@example.com"}
        print(jwt.encode(claims, secret, algorithm="HS256", headers={"kid": kid}))
    elif command == "verify-identity":
        secret, aud, token = argv[2:5]
        claims = jwt.decode(token, secret, algorithms=["HS256"], audience=aud, options={"require": ["exp", "sub"]})
        header = jwt.get_unverified_header(token)
        print(json.dumps({"header": header, "claims": claims}, sort_keys=True))
    elif command == "verify-session":
        jwks, issuer, aud, token = argv[2:6]
        key_set = jwt.PyJWKSet.from_json(jwks)
        header = jwt.get_unverified_header(token)
        key = next(k for k in key_set.keys if k.key_id == header["kid"])
        claims = jwt.decode(token, key.key, algorithms=["ES256"], audience=aud, issuer=issuer,
                            options={"require": ["exp", "iat", "nbf", "sub", "sid"]})
        print(json.dumps({"header": header, "claims": claims}, sort_keys=True))
    elif command == "verify-dpop":
        proof = argv[2]
        header = jwt.get_unverified_header(proof)
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
            raise SystemExit("not an ES256 dpop+jwt")
        jwk = header["jwk"]
        if "d" in jwk:
            raise SystemExit("private key in jwk")
        key = jwt.PyJWK.from_dict(jwk, algorithm="ES256")
        claims = jwt.decode(proof, key.key, algorithms=["ES256"], options={"verify_aud": False, "require": ["iat", "jti"]})
        canonical = json.dumps({m: jwk[m] for m in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
        thumbprint = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
        print(json.dumps({"header": header, "claims": claims, "jkt": thumbprint}, sort_keys=True))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
