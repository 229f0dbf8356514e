"""pylti1p3's launch data storage kept in the database: the login may reach one app server and
the launch another, so nonces, states and launches cannot live in one process's memory."""

import secrets
from datetime import timedelta

from pylti1p3.launch_data_storage.base import LaunchDataStorage

from ..extensions import db
from ..models import now
from ..races import insert_or_get
from .models import LtiLaunchData

DEFAULT_LIFETIME = 24 * 3600
"""Seconds a value lives when pylti1p3 names no expiry."""


class DatabaseStorage(LaunchDataStorage):
    """Values by key with an expiry; a nonce is taken, not read, so it works once."""

    def __init__(self, browser_bound: bool = True):
        """Keys are kept under pylti1p3's session-id cookie, which ties a login's nonce to its
        browser; not `browser_bound` for a login whose state the platform's frame keeps, as it
        sets no cookie."""
        super().__init__()
        if not browser_bound:
            self._session_cookie_name = None

    def can_set_keys_expiration(self) -> bool:
        return True

    def get_value(self, key: str):
        row = db.session.get(LtiLaunchData, self._prepare_key(key))
        if row is None or aware(row.expires_at) <= now():
            return None
        return row.value

    def set_value(self, key: str, value, exp: int | None = None) -> None:
        key = self._prepare_key(key)
        expires = now() + timedelta(seconds=exp or DEFAULT_LIFETIME)
        replace = (
            db.update(LtiLaunchData)
            .where(LtiLaunchData.key == key)
            .values(value=value, expires_at=expires)
            .execution_options(synchronize_session=False)
        )
        if db.session.execute(replace).rowcount == 0:
            # Another server may store the same key first (two launches caching one platform's
            # key set): theirs is as fresh as ours.
            insert_or_get(LtiLaunchData(key=key, value=value, expires_at=expires))
            return
        db.session.commit()

    def check_value(self, key: str) -> bool:
        """Take the value (pylti1p3 asks this only of nonces): of two launches carrying the
        same nonce, whatever server each reaches, the database lets exactly one delete it."""
        taken = db.session.execute(
            db.delete(LtiLaunchData)
            .where(LtiLaunchData.key == self._prepare_key(key), LtiLaunchData.expires_at > now())
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
        return taken.rowcount == 1

    def forget(self, key: str) -> None:
        """Drop a value, so that the next read finds nothing (a stale platform key set)."""
        db.session.execute(db.delete(LtiLaunchData).where(LtiLaunchData.key == key))
        db.session.commit()


HAND_OFF_SECONDS = 120
"""How long an instructor's launch, handed from the platform's frame to a window, waits."""


def hand_off(launched: dict) -> str:
    """Keep a checked launch for a window of its own; the code that takes it, once."""
    code = secrets.token_urlsafe(32)
    DatabaseStorage(browser_bound=False).set_value(f"hand-off-{code}", launched, HAND_OFF_SECONDS)
    return code


def take_hand_off(code: str) -> dict | None:
    """The launch kept under `code`, taken: of two requests with one code, only one gets it."""
    storage = DatabaseStorage(browser_bound=False)
    launched = storage.get_value(f"hand-off-{code}")
    if launched is None or not storage.check_value(f"hand-off-{code}"):
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
