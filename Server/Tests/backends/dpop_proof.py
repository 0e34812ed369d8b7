"""RFC 9449 DPoP proofs made in Python with `cryptography`, as a device would make them.

Used by Server/Tests/backends/run.py (the app-backend recipes), Server/Tests/replay/run.py (the
replay harness) and Server/Benchmarks/wrk/bench.py (the bound heartbeat): a P-256 key, its public JWK and RFC 7638 thumbprint, and ES256 proofs
(`typ: dpop+jwt`, `jwk`, `htm`, `htu`, `iat`, `jti`, `ath`) whose every claim can be chosen, so that
a test can also make the wrong ones.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def ath(credential: str) -> str:
    """The `ath` of a credential: base64url SHA-256 of its ASCII bytes."""
    return b64url(hashlib.sha256(credential.encode("ascii")).digest())


class DeviceKey:
    """A device's P-256 key and the proofs it signs."""

    def __init__(self) -> None:
        self.private = ec.generate_private_key(ec.SECP256R1())
        numbers = self.private.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                    "y": b64url(numbers.y.to_bytes(32, "big"))}
        # RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace.
        self.jkt = b64url(hashlib.sha256(compact(self.jwk)).digest())
        self._header = b64url(compact({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk}))

    def proof(self, method: str, url: str, credential: str | None = None, *, iat: int | None = None,
              jti: str | None = None, nonce: str | None = None, **overrides: object) -> str:
        """A proof for `method url`, with `ath` of `credential` when there is one; `overrides` replace
        (or, set to None, remove) any claim."""
        claims: dict[str, object] = {"htm": method, "htu": url, "iat": int(time.time()) if iat is None else iat,
                                     "jti": jti or b64url(os.urandom(16))}
        if credential is not None:
            claims["ath"] = ath(credential)
        if nonce is not None:
            claims["nonce"] = nonce
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        signing_input = f"{self._header}.{b64url(compact(claims))}"
        r, s = decode_dss_signature(self.private.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
        return f"{signing_input}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
