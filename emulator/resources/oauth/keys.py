"""The ES256 key that signs access tokens, and the tokens themselves (oauth.md §3 "Access-token JWT").

The private key derives from the seed (same seed, same key, same JWKS) and signatures use RFC 6979
deterministic ECDSA, so the same seed and requests give byte-identical access tokens.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ec

    from emulator.core.db import Host

# pyjwt and cryptography load on first use (the first token or JWKS), not at start: together they are
# about a quarter of the emulator's import time, and most runs never touch OAuth (issue 18, startup).

KEY_ID = "oauth_key"  # the `kid` of the docs' example token header
ACCESS_TOKEN_SECONDS = 900  # [seed] §2.12
# The order of the P-256 group: a private scalar lies in [1, n - 1].
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
HEADER = {"alg": "ES256", "kid": KEY_ID, "typ": "at+jwt"}


def signing_key(emu: Host) -> ec.EllipticCurvePrivateKey:
    key = emu.state.get("oauth_signing_key")
    if key is None:
        from cryptography.hazmat.primitives.asymmetric import ec

        digest = hashlib.sha256(f"resend-emulator:oauth-signing-key:{emu.settings.seed}".encode()).digest()
        scalar = int.from_bytes(digest, "big") % (P256_ORDER - 1) + 1
        key = emu.state["oauth_signing_key"] = ec.derive_private_key(scalar, ec.SECP256R1())
    return key  # type: ignore[no-any-return]


def jwks(emu: Host) -> dict[str, Any]:
    from jwt.algorithms import ECAlgorithm

    public = ECAlgorithm.to_jwk(signing_key(emu).public_key(), as_dict=True)
    return {"keys": [{**public, "kid": KEY_ID, "use": "sig", "alg": "ES256"}]}


def _segment(value: dict[str, Any]) -> bytes:
    from jwt.utils import base64url_encode

    return base64url_encode(json.dumps(value, separators=(",", ":")).encode())


def sign(emu: Host, claims: dict[str, Any]) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.utils import base64url_encode, der_to_raw_signature

    signing_input = _segment(HEADER) + b"." + _segment(claims)
    der = signing_key(emu).sign(signing_input, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
    return (signing_input + b"." + base64url_encode(der_to_raw_signature(der, ec.SECP256R1()))).decode()


def access_claims(issuer: str, account: str, client_id: str, scope: str, grant_id: str, jti: str,
                  now: datetime) -> dict[str, Any]:
    """RFC 9068-style claims (the reference leaves them open), plus `grant_id` for revocation checks."""
    issued = int(now.timestamp())
    return {"iss": issuer, "sub": account, "aud": issuer, "client_id": client_id, "scope": scope,
            "grant_id": grant_id, "jti": jti, "iat": issued, "exp": issued + ACCESS_TOKEN_SECONDS}


def verified_claims(emu: Host, token: str) -> dict[str, Any] | None:
    """The claims of a token this emulator signed (signature and algorithm checked), else None.
    Expiry is checked by the caller against the emulator's clock, not the wall clock."""
    import jwt

    try:
        claims = jwt.decode(token, signing_key(emu).public_key(), algorithms=["ES256"],
                            options={"verify_exp": False, "verify_aud": False, "verify_iat": False,
                                     "verify_nbf": False, "require": ["exp", "sub", "grant_id"]})
    except jwt.PyJWTError:
        return None
    return claims
