"""Short-lived values kept in the database by key: LTI logins' nonces and states, platforms' key
sets, launches handed to a window and registration links. The login may reach one app server
and the launch another, so they cannot live in one process's memory. pylti1p3 reads and writes
them through launch.DatabaseStorage; nothing here loads the LTI library."""

import secrets
from datetime import timedelta

from ..extensions import db
from ..models import now
from ..races import insert_or_get
from .models import LtiLaunchData

DEFAULT_LIFETIME = 24 * 3600
"""Seconds a value lives when pylti1p3 names no expiry."""
PREFIX = "lti1p3-"
"""pylti1p3 keeps every key under this prefix; the tool's own values (hand-offs, registration
links) share it, as they did when they went through pylti1p3's storage."""


def _stored(key: str) -> str:
    return key if key.startswith(PREFIX) else PREFIX + key


def value(key: str):
    """The value kept under `key`, or None once it has expired."""
    row = db.session.get(LtiLaunchData, _stored(key))
    if row is None or aware(row.expires_at) <= now():
        return None
    return row.value


def keep(key: str, kept, seconds: int | None = None) -> None:
    """Keep a value under `key` for `seconds` (a day without), replacing any, and commit."""
    key = _stored(key)
    expires = now() + timedelta(seconds=seconds or DEFAULT_LIFETIME)
    replace = (
        db.update(LtiLaunchData)
        .where(LtiLaunchData.key == key)
        .values(value=kept, expires_at=expires)
        .execution_options(synchronize_session=False)
    )
    if db.session.execute(replace).rowcount == 0:
        # Another server may store the same key first (two launches caching one platform's
        # key set): theirs is as fresh as ours.
        insert_or_get(LtiLaunchData(key=key, value=kept, expires_at=expires))
        return
    db.session.commit()


def take(key: str) -> bool:
    """Take the value under `key` if it has not expired: of two requests taking the same one,
    whatever server each reaches, the database lets exactly one delete it."""
    taken = db.session.execute(
        db.delete(LtiLaunchData)
        .where(LtiLaunchData.key == _stored(key), LtiLaunchData.expires_at > now())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    return taken.rowcount == 1


def forget(key: str) -> None:
    """Drop a value, so that the next read finds nothing (a stale platform key set)."""
    db.session.execute(db.delete(LtiLaunchData).where(LtiLaunchData.key == _stored(key)))
    db.session.commit()


HAND_OFF_SECONDS = 120
"""How long an instructor's launch, handed from the platform's frame to a window, waits."""


def hand_off(launched: dict) -> str:
    """Keep a checked launch for a window of its own; the code that takes it, once."""
    code = secrets.token_urlsafe(32)
    keep(f"hand-off-{code}", launched, HAND_OFF_SECONDS)
    return code


def take_hand_off(code: str) -> dict | None:
    """The launch kept under `code`, taken: of two requests with one code, only one gets it."""
    launched = value(f"hand-off-{code}")
    if launched is None or not take(f"hand-off-{code}"):
        return None
    return launched


def purge_expired() -> int:
    """Delete expired values; returns how many. Each login runs it, so the table stays small."""
    gone = db.session.execute(
        db.delete(LtiLaunchData)
        .where(LtiLaunchData.expires_at <= now())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    return gone.rowcount


def aware(moment):
    """A stored moment as an aware datetime: SQLite hands back naive ones, stored in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=now().tzinfo)
