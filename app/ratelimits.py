"""Rate-limit counts in the app's own database, so every worker and restart sees the same ones.

The limits library finds this storage by its scheme, `database://`, the default
RATELIMIT_STORAGE_URI; Redis and the library's other storages keep working through theirs.
"""

import functools
import hashlib
import logging
import math
import time

import sqlalchemy as sa
from flask import Flask, abort, after_this_request, current_app, g, has_request_context, request
from limits import parse
from limits.storage import MemoryStorage, Storage
from limits.strategies import FixedWindowRateLimiter
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.exceptions import TooManyRequests

from .extensions import db, limiter
from .models import RateLimitCount

logger = logging.getLogger(__name__)
COUNTS = RateLimitCount.__table__
_FRESH, _AMOUNT = sa.bindparam("fresh", type_=sa.Integer), sa.bindparam("amount", type_=sa.Integer)
_EXPIRES = sa.bindparam("expires", type_=sa.Float)
_ENDED = COUNTS.c.expires_at <= sa.bindparam("moment", type_=sa.Float)


def _upsert(insert) -> sa.Insert:
    """Count in one statement, so that workers counting at once each see their own total."""
    return (
        insert(COUNTS)
        .values(key=sa.bindparam("key"), count=_FRESH, expires_at=_EXPIRES)
        .on_conflict_do_update(
            index_elements=[COUNTS.c.key],
            set_={
                "count": sa.case((_ENDED, _FRESH), else_=COUNTS.c.count + _AMOUNT),
                "expires_at": sa.case((_ENDED, _EXPIRES), else_=COUNTS.c.expires_at),
            },
        )
        .returning(COUNTS.c.count, COUNTS.c.expires_at)
    )


# Built once: every answer and sign-in counts through one of them.
UPSERTS = {"postgresql": _upsert(postgresql.insert), "sqlite": _upsert(sqlite.insert)}
# Expired rows are only garbage; one sweep per this many counts keeps the table small.
SWEEP_EVERY = 1000


ANSWER_COUNTS = "quizwright.answer_counts"
"""Where an app keeps its answer counts (limited_answers)."""


def init_app(app: Flask) -> None:
    """Hand the database storage its engine, then start the limiter."""
    if app.config["RATELIMIT_STORAGE_URI"] == DatabaseStorage.STORAGE_SCHEME[0] + "://":
        with app.app_context():
            engine = db.engine
            if engine.dialect.name != "sqlite":
                engine = _counts_engine(engine.url, app.config["SQLALCHEMY_ENGINE_OPTIONS"])
            app.config["RATELIMIT_STORAGE_OPTIONS"] = {"engine": engine}
    limiter.init_app(app)
    app.extensions[ANSWER_COUNTS] = FixedWindowRateLimiter(MemoryStorage())
    # One limiter serves every app a process builds (the tests build hundreds), and it remembers
    # a dead storage across init_app: a new app's new storage starts alive, not in memory.
    limiter._storage_dead = False


# Join codes are 6 of 31 characters, about 887 million: counting the unknown codes one address
# tries makes guessing one take years, while a hall's typing mistakes still fit.
UNKNOWN_CODES_PER_ADDRESS = parse("150 per 10 minutes")
TOO_MANY_UNKNOWN_CODES = (
    "Many class codes that match no class have been tried from your network. Check the code "
    "with your instructor and try again in ten minutes."
)


ANSWERS_PER_BROWSER = parse("60 per minute")
"""Far above any student's pace, which a script hammering "Check answer" reaches in a second."""
TOO_MANY_ANSWERS = (
    "Answers are arriving faster than anyone can read the questions. Wait a minute and try "
    "again: your answers so far are saved."
)
# Counted in each worker's memory, not the database: on SQLite a count is a write, and a
# second write on every answer doubled the wait for SQLite's one write lock in a lecture hall
# (bench/analysis.md). A script spread over the workers gets at most their number of allowances:
# it guesses nothing (an answer is stored once), so a bound is all this limit must give. Each
# app keeps its own (init_app, under ANSWER_COUNTS), as each keeps its own database.


def limited_answers(key):
    """Refuse a browser's answers (POSTs) past ANSWERS_PER_BROWSER; `key()` names the browser."""

    def decorate(view):
        @functools.wraps(view)
        def counted(*args, **kwargs):
            if request.method == "POST" and limiter.enabled:
                counts, browser = current_app.extensions[ANSWER_COUNTS], key()
                if not counts.hit(ANSWERS_PER_BROWSER, "answers", browser):
                    # Say when the minute ends, so that a client that waits waits long enough.
                    reset, _ = counts.get_window_stats(ANSWERS_PER_BROWSER, "answers", browser)
                    wait = max(1, math.ceil(reset - time.time()))
                    raise TooManyRequests(TOO_MANY_ANSWERS, retry_after=wait)
            return view(*args, **kwargs)

        return counted

    return decorate


def reset_answer_counts() -> None:
    """Forget every browser's answer count in this app (for tests)."""
    current_app.extensions[ANSWER_COUNTS].storage.reset()


CODE_LOOKUPS_PER_ADDRESS = "3000 per 10 minutes"
"""Every code looked up, found or not: ten each for a hall of 300 behind one address. It bounds
how fast a guesser past the unknown-code allowance, whose hits still work, can go on. An app's
CODE_LOOKUPS_PER_ADDRESS overrides it (the tests set a smaller one)."""


def _count_code(address: str, amount: int) -> bool | None:
    """Add to an address's count of unknown codes; whether it is within the allowance, None if
    the count failed (a storage outage must not stop a student starting)."""
    try:
        return limiter.limiter.hit(UNKNOWN_CODES_PER_ADDRESS, "unknown codes", address, cost=amount)
    except Exception:  # noqa: BLE001 - any storage's failure
        logger.exception("the unknown-code count failed; this code is not counted")
        return None


def _names_a_code() -> bool:
    """Whether the request carries a code to look up: in its link, its query or its form (the
    sign-in page's `class` is a class code too)."""
    in_link = (request.view_args or {}).get("code")
    asked = request.args.get("code") or request.args.get("class")
    return bool(in_link or asked or request.form.get("class_code"))


def charges_code_lookups(view):
    """Charge a request that looks a code up as one unknown code before the lookup, in one
    atomic step, so that guesses sent at once cannot pass the allowance together; a request
    whose codes all matched gives its charge back with its response (see note_code)."""

    @limiter.limit(
        lambda: current_app.config.get("CODE_LOOKUPS_PER_ADDRESS", CODE_LOOKUPS_PER_ADDRESS),
        scope="code lookups per address",
        exempt_when=lambda: not _names_a_code(),
        error_message="Very many codes have been looked up from your network. Try again in ten "
        "minutes: your answers so far are saved.",
    )
    @functools.wraps(view)
    def charged(*args, **kwargs):
        if limiter.enabled and _names_a_code():
            address = request.remote_addr or ""
            g.code_allowance = _count_code(address, 1)

            @after_this_request
            def give_back(response):
                if g.get("code_found") and not g.get("code_missed"):
                    # The view has committed what it saves: its connection goes back to the pool
                    # first, or a hall's requests, each holding one and waiting for a second
                    # to count with, would wait on one another.
                    db.session.close()
                    _count_code(address, -1)
                return response

        return view(*args, **kwargs)

    return charged


def note_code(found) -> None:
    """After a code lookup in a view charges_code_lookups guards: past the allowance a code
    that matched nothing is refused; one that matched is never refused and costs nothing."""
    if not has_request_context() or "code_allowance" not in g:
        return
    if found is not None:
        g.code_found = True
        return
    g.code_missed = True
    if g.code_allowance is False:
        abort(429, description=TOO_MANY_UNKNOWN_CODES)


_COUNTS_ENGINES: dict[str, sa.Engine] = {}


def _counts_engine(url: sa.URL, options: dict) -> sa.Engine:
    """A pool of its own for the counts, one per database and process: a gevent worker's
    requests each hold a session connection while they count, and counting from the same pool
    would leave them all waiting for one another's."""
    key = url.render_as_string(hide_password=False) + repr(sorted(options.items()))
    if key not in _COUNTS_ENGINES:
        _COUNTS_ENGINES[key] = sa.create_engine(url, **options)
    return _COUNTS_ENGINES[key]


def counts_engine(app: Flask) -> sa.Engine:
    """The engine the app's rate-limit counts use: the app's own on SQLite."""
    with app.app_context():
        return app.config.get("RATELIMIT_STORAGE_OPTIONS", {}).get("engine", db.engine)


def _stored(key: str) -> str:
    """Keys carry what people typed (usernames): long ones, and ones with a NUL that PostgreSQL
    text cannot hold (the limiter counts before the app refuses NUL), go by their digest."""
    if len(key) <= COUNTS.c.key.type.length and "\x00" not in key:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class DatabaseStorage(Storage):
    """Fixed-window counts in one table, each changed by one atomic upsert."""

    STORAGE_SCHEME = ["database"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, *, engine: sa.Engine, **_):
        super().__init__(uri, wrap_exceptions)
        self.engine = engine
        self.counted = 0

    @property
    def base_exceptions(self):
        return SQLAlchemyError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add to the count in the key's current window, starting a new window if it ended."""
        moment = time.time()
        values = {
            "key": _stored(key),
            # A give-back (amount -1) after its window ended must not start the next one below 0.
            "fresh": max(amount, 0),
            "amount": amount,
            "moment": moment,
            "expires": moment + expiry,
        }
        with self.engine.begin() as connection:
            window = connection.execute(UPSERTS[self.engine.dialect.name], values).one()
            self.counted += 1
            if self.counted % SWEEP_EVERY == 0:
                connection.execute(COUNTS.delete().where(COUNTS.c.expires_at <= moment))
        if has_request_context():
            # The rate-limit headers of this response read the window back: no second query.
            g.setdefault("rate_limit_windows", {})[key] = window
        return window.count

    def _window(self, key: str) -> tuple[int, float] | None:
        if has_request_context() and key in g.get("rate_limit_windows", {}):
            return g.rate_limit_windows[key]
        query = sa.select(COUNTS.c.count, COUNTS.c.expires_at).where(
            COUNTS.c.key == _stored(key), COUNTS.c.expires_at > time.time()
        )
        with self.engine.connect() as connection:
            return connection.execute(query).one_or_none()

    def get(self, key: str) -> int:
        window = self._window(key)
        return window.count if window else 0

    def get_expiry(self, key: str) -> float:
        window = self._window(key)
        return window.expires_at if window else time.time()

    def check(self) -> bool:
        try:
            with self.engine.connect() as connection:
                connection.execute(sa.select(1))
        except SQLAlchemyError:
            return False
        return True

    def reset(self) -> int | None:
        with self.engine.begin() as connection:
            return connection.execute(COUNTS.delete()).rowcount

    def clear(self, key: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(COUNTS.delete().where(COUNTS.c.key == _stored(key)))
