"""The tool's own key pairs: made on first use, the newest signs, every unretired one is
published, and a rotation keeps the old key published for a grace period."""

import json
from datetime import timedelta

from sqlalchemy import or_

from ..extensions import db
from ..models import now
from .models import LtiToolKey

KEY_SIZE = 2048
"""RSA bits: what the 1EdTech Security Framework asks for at least, and what platforms accept."""
GRACE = timedelta(days=7)
"""How long a replaced key stays published: longer than platforms cache a tool's key set
(Moodle and Canvas refetch on an unknown kid, others within a day)."""


def _new_key() -> LtiToolKey:
    from jwcrypto.jwk import JWK  # with cryptography 9 MB, which a worker without LTI never loads

    pair = JWK.generate(kty="RSA", size=KEY_SIZE)
    pem = pair.export_to_pem(private_key=True, password=None).decode()
    return LtiToolKey(kid=pair.thumbprint(), private_key=pem)


def signing_key() -> LtiToolKey:
    """The key the tool signs with now: the newest unretired one, made on first use."""
    key = db.session.scalar(
        db.select(LtiToolKey)
        .where(LtiToolKey.retired_at.is_(None))
        .order_by(LtiToolKey.created_at.desc(), LtiToolKey.id.desc())
        .limit(1)
    )
    if key is None:
        key = _new_key()
        db.session.add(key)
        db.session.commit()
    return key


def published_keys() -> list[LtiToolKey]:
    """Keys platforms may still see signatures from: unretired, or within their grace period."""
    signing_key()
    return list(
        db.session.scalars(
            db.select(LtiToolKey)
            .where(or_(LtiToolKey.retired_at.is_(None), LtiToolKey.retired_at > now()))
            .order_by(LtiToolKey.created_at.desc(), LtiToolKey.id.desc())
        )
    )


def public_jwk(key: LtiToolKey) -> dict:
    """A key's public half as a JWK, with the kid, algorithm and use platforms look for."""
    from jwcrypto.jwk import JWK

    public = json.loads(JWK.from_pem(key.private_key.encode()).export_public())
    return {**public, "kid": key.kid, "alg": "RS256", "use": "sig"}


def key_set() -> dict:
    """The JSON Web Key Set served at /lti/jwks.json."""
    return {"keys": [public_jwk(key) for key in published_keys()]}


def rotate(grace: timedelta = GRACE) -> tuple[LtiToolKey, list[LtiToolKey]]:
    """Make a new signing key; the keys it replaces stay published for `grace`, then retire.
    Returns the new key and the replaced ones."""
    signing_key()
    replaced = list(db.session.scalars(db.select(LtiToolKey).filter_by(retired_at=None)))
    fresh = _new_key()
    db.session.add(fresh)
    for key in replaced:
        key.retired_at = now() + grace
    db.session.commit()
    return fresh, replaced
