"""Break it on purpose (issue 7): fuzzed requests, question banks and answer matrices.

Every rule in the URL map gets arbitrary paths, query strings, methods, bodies, content types
and cookies, from a visitor, a student with attempts, an instructor and an admin, with CSRF
protection on and off: no answer is a 500, and a refused request leaves every table as it was.
The question bank loader gets arbitrary JSON and bytes and answers with a bank or a BankError
that says where; the statistics get arbitrary answer matrices and answer with finite numbers
or None, and the class page built from such answers never says "nan" or "inf".
"""

import copy
import json
import math
import re
from dataclasses import dataclass
from urllib.parse import quote_from_bytes

import factories
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from app import stats
from app.auth import create_instructor
from app.bank import BankError, build_quiz, load_bank
from app.cli import quiz_cli
from app.config import PROJECT_ROOT
from app.extensions import db, limiter
from app.models import Accommodation, Assignment, Class, Instructor, Publication
from app.question_types import right_choice
from app.ratelimits import reset_answer_counts
from app.served import current_bank
from app.teach.exceptions import Said, save_exception

from helpers import SLUG, csrf_token, make_app, stored_rows

pytestmark = pytest.mark.postgres


def fuzz_settings(examples: int):
    """Hypothesis settings for these tests: bounded, no deadline, nothing saved to disk."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


# ---------------------------------------------------------------------------------------------
# Payloads

NASTY = [
    "", " ", "\x00", "Ada\x00Lovelace", "\t\r\n", "\x1b[31m", "\x7f", "\u202egnp.exe", "\ufeff",
    "\ufffd", "ß", "İ", "ﬃ" * 80, "👩🏽‍🏫", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "x" * 81, "x" * 101, "x" * 241,
    "0", "-1", "1e309", "NaN", "Infinity", "9" * 30, "%00", "%ff", "%", "../../etc/passwd",
    "/\\evil.example", "//evil.example", "<script>alert(1)</script>", "{{ 7 * 7 }}",
    "' OR 1=1 --", '=HYPERLINK("http://x")', "\r\nSet-Cookie: admin=1", "null", "[]", "{}",
    "abc-def", "ABCDEF ", " a b c d e f ",
]  # fmt: skip
"""Strings that have broken web apps before: NUL, controls, bidi, case folding, lengths at the
model's limits (80, 100, 240), numbers that overflow, traversal, markup, injection."""

INVALID_UTF8 = [
    b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xa0\xa1", b"\xe2\x28\xa1", b"\xe2\x82",
    b"\xf0\x28\x8c\xbc", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80",
]  # fmt: skip
"""Stray continuation bytes, truncated and overlong sequences, surrogates, beyond U+10FFFF."""

LONG = st.builds(
    lambda unit, times: unit * times,
    st.sampled_from(["x", "é", "😀", "\x00", " ", "9"]),
    st.one_of(st.sampled_from([64, 65, 80, 81, 100, 101, 240, 241, 1025]), st.integers(1, 6000)),
)
TEXT = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=24),
    st.text(st.characters(categories=["Cc", "Cf", "Cs", "Co", "Zs", "Zl", "Zp", "Mn"]), max_size=8),
    LONG,
)
BYTES = st.one_of(
    # Lone surrogates encode to bytes no UTF-8 decoder accepts.
    TEXT.map(lambda value: value.encode("utf-8", "surrogatepass")),
    st.sampled_from(INVALID_UTF8),
    st.binary(max_size=24),
)

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"]
FORM = "application/x-www-form-urlencoded"
BOUNDARY = "fuzzboundary"
CONTENT_TYPES = [
    FORM, f"{FORM}; charset=latin-1", f"multipart/form-data; boundary={BOUNDARY}",
    "multipart/form-data", "multipart/form-data; boundary=", 'multipart/form-data; boundary="',
    "application/json", "text/plain; charset=utf-16", "application/octet-stream", "",
    "text/html", "ÿ/ÿ; boundary=ÿ",
]  # fmt: skip
FIELD_NAMES = ["csrf_token", "name", "class_code", "choice", "username", "password", "submit",
               "quiz", "opens", "closes", "time_zone", "time_limit", "attempts_allowed",
               "grade_from", "feedback"]  # fmt: skip
QUERY_NAMES = ["quiz", "count", "refresh", "next", "code"]
ROLES = ["anonymous", "student", "instructor", "admin"]
ACCOUNTS = {"instructor": ("teacher", "teacher password"), "admin": ("boss", "boss password")}
# Numbers an <int:> converter accepts that no id is: beyond PostgreSQL's integer, beyond
# SQLite's, zero-padded, and an Arabic-Indic three, which the converter's \d matches.
ODD_NUMBERS = [b"2147483648", b"9223372036854775808", b"9" * 40, b"0" * 40 + b"1", "٣".encode()]


# ---------------------------------------------------------------------------------------------
# The world the requests land in


def page_token(client, url) -> str:
    """The CSRF token a page's form carries; empty when CSRF protection is off."""
    return csrf_token(client.get(url).get_data(as_text=True), missing="")


def submit(client, url, **fields):
    """Fill in the form at url as a browser would, token included."""
    return client.post(url, data={"csrf_token": page_token(client, url), **fields})


def cookie_of(client) -> str | None:
    cookie = client.get_cookie("session")
    return cookie.value if cookie else None


def changes(before: dict, after: dict) -> str:
    """The rows that differ between two snapshots, for a failure message."""
    found = []
    for name in before:
        gone = [row for row in before[name] if row not in after[name]]
        new = [row for row in after[name] if row not in before[name]]
        if gone or new:
            found.append(f"{name}: removed {gone[:3]!r}, added {new[:3]!r}")
    return "; ".join(found)


def check_tallies(state: dict) -> None:
    """Each attempt's answered and points agree with the answers stored for it."""
    answers: dict[int, list[bool]] = {}
    for answer in state["answers"]:
        answers.setdefault(answer["attempt_id"], []).append(answer["is_correct"])
    for attempt in state["attempts"]:
        mine = answers.get(attempt["id"], [])
        assert (attempt["answered"], attempt["points"]) == (len(mine), sum(mine)), attempt


@dataclass(frozen=True)
class Sent:
    """One fuzzed request, as bytes on the wire would give it to the app."""

    role: str
    method: str
    path: bytes
    query: bytes = b""
    body: bytes | None = None
    content_type: str | None = None
    cookie: str = "role"
    """"role": the role's own session; "none": no cookie; anything else: that cookie value."""

    def __str__(self):
        body = self.body if self.body is None or len(self.body) < 300 else self.body[:300] + b"..."
        return (
            f"{self.role} {self.method} {self.path!r} ?{self.query[:300]!r} "
            f"[{self.content_type!r}] cookie={self.cookie[:80]!r} body={body!r}"
        )


@dataclass
class World:
    """An app with two classes, a student's attempts in and out of a class, and every role's
    session cookie and form token, plus the last snapshot of the database."""

    app: object
    csrf: bool
    tally: object
    rules: list
    real: dict[str, list[str]]
    """URL variable -> values that lead somewhere real, so handler bodies run."""
    values: list[str]
    """Real form and query values: slugs, codes, choice ids, credentials, counting methods."""
    cookies: dict[str, str | None]
    tokens: dict[str, str]
    student_browser: str
    """The student's browser id cookie, sent with the student's session."""
    sessions: list[dict] | None = None
    state: dict | None = None
    sitting: "Sitting | None" = None
    """The attempt the answer-form fuzz is answering in."""

    def refresh(self):
        """Read the database again after a change made on purpose, not by a fuzzed request."""
        self.state = stored_rows(self.app)
        self.sessions = self.state["instructors"]

    def log_in(self):
        """Fresh sessions for the accounts, after a fuzzed request logged one out."""
        for role, (username, password) in ACCOUNTS.items():
            client = self.app.test_client()
            response = submit(client, "/login", username=username, password=password)
            assert response.status_code == 303, f"{role} could not log in again"
            self.cookies[role] = cookie_of(client)
            self.tokens[role] = page_token(client, "/teach")
        self.refresh()

    def send(self, sent: Sent):
        """Send one request, then check that it did not crash and, if refused, wrote nothing."""
        with self.app.app_context():
            # One example's failed logins or answers must not turn the next one's into 429s.
            limiter.reset()
            reset_answer_counts()
        client = self.app.test_client()
        cookie = self.cookies[sent.role] if sent.cookie == "role" else sent.cookie
        if cookie and cookie != "none":
            client.set_cookie("session", cookie)
        if sent.role == "student":
            client.set_cookie("browser", self.student_browser)
        response = client.open(
            "/",
            method=sent.method,
            data=sent.body,
            content_type=sent.content_type,
            # As a WSGI server hands them over: percent-decoded bytes, read as Latin-1.
            environ_overrides={
                "PATH_INFO": sent.path.decode("latin-1"),
                "QUERY_STRING": sent.query.decode("latin-1"),
            },
        )
        response.get_data()  # a streamed CSV runs its queries only now
        response.close()  # a static file's handle, for one
        self.tally["requests fuzzed"] += 1
        before, after = self.state, stored_rows(self.app)
        self.state = after
        assert response.status_code < 500, f"{sent}\n-> {response.status_code}"
        if refused(response):
            assert after == before, f"{sent}\n-> {response.status_code}: {changes(before, after)}"
        check_tallies(after)
        if after["instructors"] != self.sessions:  # a fuzzed logout ended a session
            self.log_in()
        return response


def refused(response) -> bool:
    """A 4xx, or a redirect to the login page: the request was turned away."""
    location = response.headers.get("Location", "")
    return 400 <= response.status_code < 500 or (
        300 <= response.status_code < 400 and location.startswith("/login?")
    )


def build_world(tmp_path, csrf: bool, tally) -> World:
    app = make_app(tmp_path, WTF_CSRF_ENABLED=csrf)
    with app.app_context():
        teacher = create_instructor(*ACCOUNTS["instructor"])
        other = create_instructor("other", "other password")
        create_instructor(*ACCOUNTS["admin"], is_admin=True)
        mine = Class(name="Physics 101", join_code="ABCDEF", instructor_id=teacher.id)
        theirs = Class(name="Chemistry 202", join_code="GHJKMN", instructor_id=other.id)
        db.session.add_all([mine, theirs])
        db.session.commit()
        class_ids = [str(mine.id), str(theirs.id)]
        quiz = current_bank().quizzes[SLUG]
        # The other instructor's class signs in by code: a roster student to aim at.
        [rostered] = factories.roster(theirs.id, "Dana Diaz, 20231234")
        roster_ids, sign_in_code = [str(rostered.id)], rostered.sign_in_code
        # The instructor's own quiz, shared with the other: the editor's pages to aim at.
        own = factories.owned_quiz(teacher, "owners-quiz")
        factories.share_quiz(own, other)
        publication_ids = [str(id_) for id_ in db.session.scalars(db.select(Publication.id))]
        other_ids = [str(other.id)]

    student = app.test_client()
    tokens = []
    for code in ("ABCDEF", ""):  # one attempt in the instructor's class, one in none
        response = submit(student, f"/quizzes/{SLUG}", name="Ada", class_code=code)
        assert response.status_code == 303
        tokens.append(response.location.split("/")[2])
        for number in (1, 2):
            url = f"/attempts/{tokens[-1]}/questions/{number}"
            choice = right_choice(quiz.questions[number - 1]).id
            assert submit(student, url, choice=choice).status_code == 303
    with app.app_context():  # after the starts: an assignment in each class, its rules loose
        assignments = [Assignment(class_id=int(id_), quiz_slug=SLUG) for id_ in class_ids]
        db.session.add_all(assignments)
        db.session.commit()
        assignment_ids = [str(assignment.id) for assignment in assignments]
        save_exception(assignments[0], {"ada": "Ada"}, Said(time_limit_minutes=45))
        exception_ids = [str(id_) for id_ in db.session.scalars(db.select(Accommodation.id))]
    anonymous = app.test_client()  # has seen the login form, so has a session with a token
    anonymous_token = page_token(anonymous, "/login")
    choice_ids = sorted({c.id for q in quiz.questions for c in q.choices})
    world = World(
        app=app,
        csrf=csrf,
        tally=tally,
        rules=sorted(app.url_map.iter_rules(), key=lambda rule: (rule.rule, rule.endpoint)),
        real={
            "token": tokens,
            "slug": [SLUG, "owners-quiz"],
            "question_id": ["q1", "q2"],
            "action": ["delete", "up", "down", "duplicate", "discard"],
            "instructor_id": other_ids,
            "publication_id": publication_ids,
            "code": ["ABCDEF", "abc-def", sign_in_code],
            "number": [str(n) for n in range(1, len(quiz.questions) + 1)],
            "class_id": class_ids,
            "assignment_id": assignment_ids,
            "exception_id": exception_ids,
            "student_id": roster_ids,
            "filename": ["quizwright.css"],
            "name": ["checkpointing"],  # a measurement's page, script and numbers
            "format_name": ["moodle-xml", "qti", "gift"],  # a quiz's downloads
        },
        values=[
            SLUG,
            "ABCDEF",
            "abc def",
            "GHJKMN",
            "Ada",
            "Ada Lovelace",
            "on",
            "/teach",
            "first",
            "best",
            "latest",
            "all",
            "UTC",
            "Europe/Berlin",
            "2026-12-07T09:00",
            "30",
            "after-close",
            "Start quiz",
            "Log in",
            *ACCOUNTS["instructor"],
            *ACCOUNTS["admin"],
            *choice_ids,
        ],
        cookies={
            "anonymous": cookie_of(anonymous),
            "student": cookie_of(student),
        },
        tokens={
            "anonymous": anonymous_token,
            "student": page_token(student, f"/attempts/{tokens[1]}/questions/3"),
        },
        student_browser=student.get_cookie("browser").value,
    )
    if world.cookies["anonymous"] is None:  # the login page wrote no session (CSRF off)
        world.cookies["anonymous"] = "none"
    world.log_in()
    return world


@pytest.fixture(params=[True, False], ids=["csrf-on", "csrf-off"])
def world(request, tmp_path, tally):
    built = build_world(tmp_path, request.param, tally)
    yield built
    with built.app.app_context():
        db.engine.dispose()


# ---------------------------------------------------------------------------------------------
# Building requests

VARIABLE = re.compile(r"<(?:(\w+)(?:\([^>]*\))?:)?(\w+)>")


def fill(rule, choose) -> bytes:
    """The rule's path with each <variable> replaced by choose(name, converter), as bytes."""
    parts, last = [], 0
    for match in VARIABLE.finditer(rule.rule):
        parts += [rule.rule[last : match.start()].encode(), choose(match[2], match[1] or "")]
        last = match.end()
    return b"".join([*parts, rule.rule[last:].encode()])


def path_values(world, name, converter):
    """Real values for a URL variable, so the view runs, and values made to break it."""
    assert name in world.real, f"the fuzz has no real value for <{name}>: give it one"
    real = st.sampled_from(world.real[name]).map(str.encode)
    if converter == "int":
        broken = st.one_of(
            st.sampled_from(ODD_NUMBERS), st.integers(0, 10**30).map(lambda n: str(n).encode())
        )
    else:
        broken = BYTES
    return st.one_of(real, broken)


@st.composite
def with_token(draw, pairs, token: bytes):
    """The fields with the session's CSRF token somewhere among them, a forged one, or none."""
    kind = draw(st.sampled_from(["session's", "session's", "forged", "none"]))
    if kind != "none":
        value = token if kind == "session's" else draw(BYTES)
        pairs.insert(draw(st.integers(0, len(pairs))), (b"csrf_token", value))
    return pairs


@st.composite
def field_pairs(draw, names, values, token):
    """Form or query fields: known and unknown names, missing, repeated, real or broken values,
    and usually the CSRF token, so that forms get past it to their own validation."""
    pairs = []
    for _ in range(draw(st.integers(0, 8))):
        key = draw(st.one_of(st.sampled_from(names).map(str.encode), BYTES))
        pairs.append((key, draw(st.one_of(st.sampled_from(values).map(str.encode), BYTES))))
    return draw(with_token(pairs, token.encode()))


def urlencoded(pairs) -> bytes:
    return b"&".join(
        quote_from_bytes(key, safe="").encode() + b"=" + quote_from_bytes(value, safe="").encode()
        for key, value in pairs
    )


def multipart(pairs) -> bytes:
    parts = [
        b'--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
        % (BOUNDARY.encode(), key, value)
        for key, value in pairs
    ]
    return b"".join([*parts, b"--%s--\r\n" % BOUNDARY.encode()])


ENCODINGS = {
    "form": (urlencoded, FORM),
    # Bytes straight into the body, unescaped: invalid UTF-8, "&" and "=" inside values.
    "raw form": (lambda pairs: b"&".join(key + b"=" + value for key, value in pairs), FORM),
    "multipart": (multipart, f"multipart/form-data; boundary={BOUNDARY}"),
    "json": (
        lambda pairs: json.dumps(
            {key.decode(errors="replace"): value.decode(errors="replace") for key, value in pairs}
        ).encode(),
        "application/json",
    ),
}


@st.composite
def bodies(draw, pairs):
    """A body and its content type: a form in some encoding, bare bytes, nothing, or too much;
    the content type is sometimes the one that fits and sometimes any other."""
    kind = draw(st.sampled_from(["none", *ENCODINGS, "bytes", "oversized"]))
    if kind == "none":
        return None, draw(st.sampled_from([None, *CONTENT_TYPES]))
    if kind == "bytes":
        return draw(st.binary(max_size=300)), draw(st.sampled_from(CONTENT_TYPES))
    if kind == "oversized":  # over MAX_CONTENT_LENGTH (64 KiB)
        return b"choice=a&padding=" + b"x" * 70_000, FORM
    encode, fits = ENCODINGS[kind]
    body = encode(draw(pairs))
    return body, draw(st.one_of(st.just(fits), st.sampled_from(CONTENT_TYPES)))


def queries(world, token):
    return st.one_of(
        st.just(b""),
        field_pairs(QUERY_NAMES, world.values, token).map(urlencoded),
        field_pairs(QUERY_NAMES, world.values, token).map(
            lambda pairs: b"&".join(key + b"=" + value for key, value in pairs)
        ),
        st.binary(max_size=60),
    )


COOKIES = st.one_of(
    st.just("role"),
    st.just("none"),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=80),
)


@st.composite
def fuzzed_requests(draw, world):
    """A request to any rule of the URL map, by any role, fuzzed everywhere."""
    rule = draw(st.sampled_from(world.rules))
    role = draw(st.sampled_from(ROLES))
    method = draw(st.one_of(st.sampled_from(sorted(rule.methods)), st.sampled_from(METHODS)))
    path = fill(rule, lambda name, converter: draw(path_values(world, name, converter)))
    token = world.tokens[role]
    body, content_type = draw(bodies(field_pairs(FIELD_NAMES, world.values, token)))
    return Sent(
        role=role,
        method=method,
        path=path,
        query=draw(queries(world, token)),
        body=body,
        content_type=content_type,
        cookie=draw(COOKIES),
    )


# ---------------------------------------------------------------------------------------------
# Requests: a sweep of every rule, then Hypothesis


PATH_BREAKERS = [b"\x00", b"%00", b"x" * 300, b"\xff\xfe", "Ω≈ç√".encode(), b"..", b"a/b", b" "]


ROTATIONS = 12
"""Nasty forms per rule and role; with four roles each field meets every NASTY value."""


def sweep(world, rule, role) -> list[Sent]:
    """For one rule and role: every method (and two it does not allow) with real variables and a
    plain form; forms and queries whose every field is a NASTY value; each variable broken."""
    token = (b"csrf_token", world.tokens[role].encode())
    real = fill(rule, lambda name, _: world.real[name][0].encode())
    plain = urlencoded([token, (b"name", b"Sweep Student")])
    found = [
        Sent(role, method, real, b"", plain, FORM)
        for method in sorted(rule.methods | {"PUT", "DELETE"})
    ]
    main = "POST" if "POST" in rule.methods else "GET"
    names = [name.encode() for name in FIELD_NAMES + QUERY_NAMES]
    for turn in range(ROTATIONS):
        start = turn + ROTATIONS * ROLES.index(role)
        nasty = [NASTY[(start + n) % len(NASTY)].encode() for n in range(len(names))]
        fields = list(zip(names, nasty, strict=True))
        body = urlencoded([token, *fields[: len(FIELD_NAMES)]])
        found.append(Sent(role, main, real, urlencoded(fields[len(FIELD_NAMES) :]), body, FORM))
    for converter, variable in VARIABLE.findall(rule.rule):
        # Anything but digits misses an <int:> rule in routing: only odd numbers get past it.
        for broken in ODD_NUMBERS if converter == "int" else PATH_BREAKERS:

            def choose(name, _, variable=variable, broken=broken):
                return broken if name == variable else world.real[name][0].encode()

            found.append(Sent(role, main, fill(rule, choose), b"", plain, FORM))
    return found


SHARDS = 4
"""The sweep's rules dealt into this many tests, which xdist's workers take in parallel."""


# The sweep sends each form its session's token, so it runs the same code with CSRF on or off:
# it runs once, as production does (the Hypothesis fuzz below varies the token in both).
@pytest.mark.parametrize("world", [True], ids=["csrf-on"], indirect=True)
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_route_survives_nasty_requests(world, shard):
    """Every rule of the URL map, every method, every NASTY value in every field, each variable
    broken in turn, by every role: no 500, and nothing written by a refused request."""
    rules = world.rules[shard::SHARDS]
    unreached = {rule.rule: rule.endpoint for rule in rules}
    for role in ROLES:
        for rule in rules:
            for sent in sweep(world, rule, role):
                response = world.send(sent)
                if response.status_code < 400 and not refused(response):
                    unreached.pop(rule.rule, None)
    # The real variables must lead into every view, or the sweep only ever tested 404s.
    assert not unreached, f"no role got past these rules' checks: {unreached}"


@fuzz_settings(250)
@given(data=st.data())
def test_fuzzed_requests_never_crash_or_write_when_refused(world, data):
    """Hypothesis-made requests to random rules as random roles: no 500, and a 4xx (or a
    redirect to log in) leaves every table exactly as it was."""
    world.send(data.draw(fuzzed_requests(world)))


def test_the_snapshot_sees_every_kind_of_write(world):
    """The sweep's detector: a row added, changed or removed in any table shows as a change."""
    before = stored_rows(world.app)
    with world.app.app_context():
        owner = world.sessions[0]["id"]
        made = Class(name="Snapshot Probe", instructor_id=owner, join_code="PRB234")
        db.session.add(made)
        db.session.commit()
        added = stored_rows(world.app)
        made.name = "Snapshot Probe, renamed"
        db.session.commit()
        renamed = stored_rows(world.app)
        db.session.delete(made)
        db.session.commit()
    assert before != added != renamed != stored_rows(world.app) == before


def test_huge_class_id_is_not_found(world):
    """A class id beyond the database's integer range is a 404, not an overflow crash."""
    for role in ("instructor", "admin"):
        for number in ODD_NUMBERS[:3]:
            path = b"/teach/classes/" + number
            assert world.send(Sent(role, "GET", path)).status_code == 404
            response = world.send(Sent(role, "POST", path + b"/close", body=b"", content_type=FORM))
            assert response.status_code in (400, 404)


@pytest.mark.parametrize(
    ("role", "method", "path", "body"),
    [
        ("anonymous", "GET", b"/attempts/a\x00b/results", None),
        ("anonymous", "GET", b"/join/ABC\x00DEF", None),
        ("admin", "GET", b"/teach/attempts/\x00", None),
        ("anonymous", "POST", f"/quizzes/{SLUG}".encode(), b"name=Ada%00Lovelace"),
        ("anonymous", "POST", f"/quizzes/{SLUG}".encode(), b"name=Ada&class_code=ABC%00DEF"),
        ("anonymous", "POST", b"/login", b"username=teacher%00&password=x"),
        ("instructor", "POST", b"/teach", b"name=Physics%00102"),
    ],
)
def test_nul_characters_are_refused_not_stored(world, role, method, path, body):
    """NUL, which PostgreSQL text cannot hold, in an address or a field: a 4xx, nothing stored."""
    if body is not None and world.csrf:
        body += b"&csrf_token=" + world.tokens[role].encode()
    response = world.send(Sent(role, method, path, body=body, content_type=FORM))
    assert 400 <= response.status_code < 500


@pytest.mark.parametrize(
    ("role", "path"),
    [
        ("anonymous", f"/quizzes/{SLUG}".encode()),
        ("instructor", b"/teach/classes/1"),
        ("admin", b"/teach/no-class/items.csv"),
    ],
)
def test_query_string_of_raw_bytes_not_utf8_is_a_400(world, role, path):
    """Raw bytes that are not UTF-8 in the query string (werkzeug's request.args raises on
    them; gunicorn refuses them, other servers pass them on): a 400, not a crash."""
    response = world.send(Sent(role, "GET", path, query=b"code=\xff&quiz=\xc3\x28&count=\x80"))
    assert response.status_code == 400


def test_query_string_of_raw_bytes_on_an_attempts_page_is_a_400(world):
    """The same on an attempt's marks page, whose error page leads back to the attempt with
    the class page's table read from that same query string."""
    path = f"/teach/attempts/{world.real['token'][0]}/marks".encode()
    response = world.send(Sent("admin", "GET", path, query=b"page=\xff&count=\x80"))
    assert response.status_code == 400


# ---------------------------------------------------------------------------------------------
# The answer form, fuzzed by the browser that owns the attempt


@dataclass
class Sitting:
    """The student's current attempt and what it has answered so far."""

    token: str
    answered: set


@st.composite
def answer_fields(draw, question, others, token):
    """Answer form fields: no choice, one or several (this question's, another's, or broken),
    the token or not, and strangers after them."""
    shown = st.sampled_from([choice.id.encode() for choice in question.choices])
    pairs = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["shown", "shown", "shown", "another question's", "broken"]))
        value = {"shown": shown, "another question's": st.sampled_from(others)}.get(kind, BYTES)
        pairs.append((b"choice", draw(value)))
    pairs = draw(with_token(pairs, token))
    strangers = st.tuples(st.sampled_from([b"submit", b"extra", b"choice[]", b"Choice"]), BYTES)
    return pairs + draw(st.lists(strangers, max_size=2))


@fuzz_settings(150)
@given(data=st.data())
def test_fuzzed_answers_store_only_a_shown_choice(world, data):
    """The owner's browser sends answer forms with odd, missing, repeated and extra fields: an
    answer is stored only for a choice of that question, the first one sent, and only once."""
    with world.app.app_context():
        quiz = current_bank().quizzes[SLUG]
    number = data.draw(st.integers(1, len(quiz.questions)), label="question")
    # Drawn whatever the state, so that Hypothesis can replay the example.
    fresh = data.draw(st.booleans(), label="fresh attempt if answered")
    sitting = world.sitting
    if sitting is None or (number in sitting.answered and fresh):
        client = world.app.test_client()
        client.set_cookie("session", world.cookies["student"])
        client.set_cookie("browser", world.student_browser)
        response = submit(client, f"/quizzes/{SLUG}", name="Grace")
        sitting = world.sitting = Sitting(response.location.split("/")[2], set())
        world.refresh()
    question = quiz.questions[number - 1]
    others = [c.id.encode() for q in quiz.questions if q is not question for c in q.choices]
    token = world.tokens["student"].encode()
    pairs = data.draw(answer_fields(question, others, token), label="fields")
    kind = data.draw(st.sampled_from(list(ENCODINGS)), label="encoding")
    encode, fits = ENCODINGS[kind]
    method = data.draw(st.sampled_from(["POST"] * len(METHODS) + METHODS), label="method")
    path = f"/attempts/{sitting.token}/questions/{number}".encode()
    before = answers_of(world, sitting)
    world.send(Sent("student", method, path, body=encode(pairs), content_type=fits))

    after = answers_of(world, sitting)
    assert after[: len(before)] == before  # a stored answer never changes
    new = after[len(before) :]
    assert len(new) <= 1
    if number in sitting.answered:
        assert new == [], "a second answer to one question was stored"
    choices = [value for key, value in pairs if key == b"choice"]
    tokens = [value for key, value in pairs if key == b"csrf_token"]
    valid = (
        method == "POST"
        and kind == "form"
        and number not in sitting.answered
        and choices[:1] in ([choice.id.encode()] for choice in question.choices)
        and (not world.csrf or tokens[:1] == [token])
        and not any(b"\x00" in value for _, value in pairs)  # refused before any view
    )
    if valid:  # the fuzz must not only ever see refusals: a proper answer is stored
        assert len(new) == 1, (pairs, new)
    for answer in new:
        assert answer["question_id"] == question.id
        assert answer["choice_id"] in [choice.id for choice in question.choices]
        if kind == "form":  # WTForms reads the first of repeated fields
            assert answer["choice_id"] == choices[0].decode(errors="replace")
        sitting.answered.add(number)


def answers_of(world, sitting) -> list[dict]:
    attempt = next(a["id"] for a in world.state["attempts"] if a["token"] == sitting.token)
    return [answer for answer in world.state["answers"] if answer["attempt_id"] == attempt]


# ---------------------------------------------------------------------------------------------
# The question bank

REAL_PATH = PROJECT_ROOT / "questions.json"
REAL = json.loads(REAL_PATH.read_text(encoding="utf-8"))
BANK_KEYS = [
    "$schema", "quizzes", "slug", "title", "description", "shuffle_choices", "questions", "id",
    "prompt", "choices", "text", "correct", "explanation", "references", "url",
]  # fmt: skip
# Messages about the file as a whole; every other message names a quiz or a field.
WHOLE_FILE = re.compile(
    r"not valid JSON: .* \(line \d+, column \d+\)|not UTF-8 text: |nested too deeply|"
    r"not usable JSON: |the key \".*\" appears twice in one object|expected an object, got |"
    r"contains half a surrogate pair",
    re.DOTALL,
)
PLACED = re.compile(
    r'(quiz (".*"|#\d+)(, question (".*"|#\d+))?(, field ".*")?|field ".*"): ', re.S
)


def json_containers(children):
    """Lists and objects of JSON values, the objects often with the bank's own keys."""
    keys = st.one_of(st.sampled_from(BANK_KEYS), st.text(max_size=8))
    return st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=5))


JSON_VALUES = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
        st.sampled_from(["https://example.org", "a", "-", "x" * 65, "\ud800"]),
    ),
    json_containers,
    max_leaves=25,
)  # fmt: skip


def paths_in(node, path=()):
    """Every key path in a JSON document, the root excepted."""
    if isinstance(node, dict | list):
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            yield (*path, key)
            yield from paths_in(child, (*path, key))


def field_of(path) -> str:
    """How the loader names a path inside a question or quiz: "choices[1].correct"."""
    rest = list(path)
    for container in ("quizzes", "questions"):
        if len(rest) > 2 and rest[0] == container:
            rest = rest[2:]
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in rest).removeprefix(".")


DEEP = "\x00deep\x00"
"""Stands in for nesting too deep to build as Python objects; dump() writes it out as text."""


@st.composite
def mutated_banks(draw):
    """The real bank with one to three edits: a key dropped, a value swapped for any JSON, a huge
    string, deep nesting, a list item doubled (so ids repeat) or an object nested in itself.
    Returns (bank, edits, depth)."""
    bank = copy.deepcopy(REAL)
    edits = []
    depth = draw(st.integers(1, 5000))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(paths_in(bank))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        *parents, last = path
        parent = bank
        for key in parents:
            parent = parent[key]
        edit = draw(st.sampled_from(["drop", "replace", "huge", "deep", "duplicate"]))
        edits.append((edit, path))
        if edit == "drop":
            del parent[last]
        elif edit == "replace":
            parent[last] = draw(JSON_VALUES)
        elif edit == "huge":
            parent[last] = draw(st.sampled_from(["x", "é", " "])) * draw(st.integers(1, 200_000))
        elif edit == "deep":
            parent[last] = DEEP
        elif isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        else:
            parent[last] = copy.deepcopy(parent)
    return bank, edits, depth


def dump(draw, bank, depth) -> bytes:
    """The bank as a file's bytes, compact or indented, escaped or not; DEEP becomes nesting."""
    text = json.dumps(
        bank, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2]))
    )
    text = text.replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    # Lone surrogates from the JSON strategy stay as the invalid bytes they would be on disk.
    return text.encode("utf-8", "surrogatepass")


@st.composite
def broken_bytes(draw, document: bytes) -> bytes:
    """A document as a file might arrive: with a BOM, in UTF-16, cut short, a byte flipped or
    inserted, or a key written twice."""
    edit = draw(st.sampled_from(["none", "bom", "utf16", "truncate", "flip", "insert", "repeat"]))
    if edit == "bom":
        boms = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"]
        return draw(st.sampled_from(boms)) + document
    if edit == "utf16":
        return document.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass")
    if not document:
        return document
    at = draw(st.integers(0, len(document) - 1))
    if edit == "truncate":
        return document[:at]
    if edit == "flip":
        return (
            document[:at] + bytes([document[at] ^ draw(st.integers(1, 255))]) + document[at + 1 :]
        )
    if edit == "insert":
        return document[:at] + draw(st.sampled_from(INVALID_UTF8)) + document[at:]
    if edit == "repeat":
        return document.replace(b'"slug":', b'"slug": "twice", "slug":', 1)
    return document


def check_bank_file(path, tally) -> BankError | None:
    """Load a file as the app and `flask quiz check` do: a valid bank or a located BankError."""
    tally["question banks fuzzed"] += 1
    try:
        bank = load_bank(path)
    except BankError as caught:
        error = caught
    else:
        error = None
        assert bank.quizzes
        for quiz in bank.quizzes.values():
            assert build_quiz(json.loads(quiz.snapshot)) == quiz  # stored versions rebuild
            for question in quiz.questions:
                assert sum(choice.correct for choice in question.choices) == 1
                assert len({choice.id for choice in question.choices}) == len(question.choices)
                assert all(ref.url.startswith("https://") for ref in question.references)
    result = CliRunner().invoke(quiz_cli, ["check", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result
    if error is None:
        assert result.exit_code == 0 and ": OK, " in result.output
        return None
    assert error.errors and result.exit_code == 1
    assert result.stderr.count(f"{path}: ") == len(error.errors)  # every problem is printed
    for message in error.errors:
        assert message.startswith(f"{path}: "), message
        where = message.removeprefix(f"{path}: ")
        assert WHOLE_FILE.match(where) or PLACED.match(where), f"not located: {message!r}"
    return error


@fuzz_settings(120)
@given(document=JSON_VALUES)
def test_any_json_document_is_a_bank_or_a_located_error(tmp_path, tally, document):
    """Arbitrary JSON: the loader and `flask quiz check` say where each problem is, never crash."""
    path = tmp_path / "questions.json"
    path.write_bytes(json.dumps(document).encode("utf-8", "surrogatepass"))
    check_bank_file(path, tally)


@fuzz_settings(150)
@given(data=st.data(), mutated=mutated_banks())
def test_mutated_real_bank_is_a_bank_or_a_located_error(tmp_path, tally, data, mutated):
    """The real bank, edited the way question writers slip and files get damaged: a bank or a
    located BankError; a required key dropped on its own is reported missing, by its field."""
    bank, edits, depth = mutated
    document = dump(data.draw, bank, depth)
    path = tmp_path / "questions.json"
    path.write_bytes(data.draw(broken_bytes(document)))
    error = check_bank_file(path, tally)
    [(edit, where)] = edits if len(edits) == 1 else [(None, None)]
    dropped = where[-1] if edit == "drop" else None
    # The schema's optional keys: a question's evidence panel is one too.
    optional = ("$schema", "shuffle_choices", "evidence")
    required = isinstance(dropped, str) and dropped not in optional
    if required and path.read_bytes() == document:  # one key gone, the bytes left alone
        assert error is not None
        missing = f'field "{field_of(where)}": missing'
        assert any(missing in message for message in error.errors), (missing, error.errors)


@fuzz_settings(100)
@given(content=st.one_of(st.binary(max_size=400), st.sampled_from(INVALID_UTF8)))
def test_arbitrary_bytes_are_a_located_error(tmp_path, tally, content):
    """Bytes that are not a bank at all get a BankError naming the file, never a traceback."""
    path = tmp_path / "questions.json"
    path.write_bytes(content)
    assert check_bank_file(path, tally) is not None


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        # A quizzes object instead of a list, holding half a surrogate pair: was a TypeError.
        ('{"quizzes": {"x": "\\ud800"}}', 'field "quizzes.x": contains half a surrogate pair'),
        # An empty key: was "unknown field", naming nothing.
        ('{"quizzes": [], "": 1}', 'field "": unknown field'),
        # A key with a leading dot: was named without it, as "x".
        ('{"quizzes": [{".x": 1}]}', 'quiz #1, field ".x": unknown field'),
    ],
)
def test_odd_keys_and_containers_are_named_exactly(tmp_path, tally, document, expected):
    """Keys and containers the fuzz found misnamed or crashing are located as written."""
    path = tmp_path / "questions.json"
    path.write_text(document, encoding="utf-8")
    error = check_bank_file(path, tally)
    assert any(message.startswith(f"{path}: {expected}") for message in error.errors), error


def test_repeated_id_given_as_a_list_is_reported(tmp_path, tally):
    """A slug or id written as a list (unhashable) is a located error, not a TypeError."""
    bank = copy.deepcopy(REAL)
    bank["quizzes"][0]["slug"] = ["gradient", "checkpointing"]
    bank["quizzes"][0]["questions"][0]["id"] = {"id": "the-trade"}
    bank["quizzes"][0]["questions"][1]["choices"][0]["id"] = [1]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(bank), encoding="utf-8")
    error = check_bank_file(path, tally)
    assert error is not None and len(error.errors) == 3
    assert all("expected a string, got " in message for message in error.errors)


# ---------------------------------------------------------------------------------------------
# Statistics

CELL = st.sampled_from([0, 1, None])


@st.composite
def answer_matrices(draw):
    """Rectangular 0/1/None matrices (the module's contract: a row per attempt, a column per
    question): empty, one row, all rows equal, one column, or large and random."""
    items = draw(st.integers(0, 12))
    shape = draw(st.sampled_from(["random", "empty", "single", "equal", "huge", "one-wrong"]))
    row = st.lists(CELL, min_size=items, max_size=items)
    if shape == "empty":
        return []
    if shape == "single":
        return [draw(row)]
    if shape == "equal":
        return [draw(row)] * draw(st.integers(2, 50))
    if shape == "huge":  # too big to draw cell by cell: a seeded generator fills it
        rng = draw(st.randoms(use_true_random=False))
        rows, items = draw(st.integers(500, 3000)), draw(st.integers(1, 40))  # a longer quiz
        right, missing = rng.random(), rng.random() * 0.3
        return [
            [None if rng.random() < missing else int(rng.random() < right) for _ in range(items)]
            for _ in range(rows)
        ]
    if shape == "one-wrong":  # everyone right but one: a column of near-zero variance
        rows = draw(st.integers(2, 2000))
        return [[0] * max(items, 1)] + [[1] * max(items, 1) for _ in range(rows - 1)]
    return draw(st.lists(row, max_size=40))


def finite_or_none(value, low=-math.inf, high=math.inf) -> bool:
    return value is None or (math.isfinite(value) and low - 1e-9 <= value <= high + 1e-9)


@fuzz_settings(150)
@given(matrix=answer_matrices(), scale=st.integers(1, 20))
def test_any_answer_matrix_gives_finite_figures_or_none(tally, matrix, scale):
    """Facility, discrimination, alpha, the score summary and histogram: finite numbers in
    range, or None exactly when there is not enough data; never an exception, NaN or inf."""
    tally["answer matrices fuzzed"] += 1
    items = len(matrix[0]) if matrix else 0
    for j in range(items):
        column = [row[j] for row in matrix if row[j] is not None]
        f = stats.facility(matrix, j)
        assert finite_or_none(f, 0, 1) and (f is None) == (not column)
        d = stats.discrimination(matrix, j)
        assert finite_or_none(d, -1, 1)
        if len(set(column)) < 2:
            assert d is None  # an item that never varies cannot discriminate
    alpha = stats.cronbach_alpha(matrix)
    assert finite_or_none(alpha, high=1)
    complete = [row for row in matrix if None not in row]
    if len(complete) < 2 or items < 2:
        assert alpha is None
    # Scores as the class page makes them: points rescaled to the current quiz's length.
    totals = [sum(filter(None, row)) for row in matrix]
    scores = [total * scale / max(items, 1) for total in totals]
    summary = stats.summary(scores)
    assert summary.count == len(scores)
    for figure in (summary.mean, summary.median, summary.sd):
        assert finite_or_none(figure)
    assert (summary.mean is None) == (not scores) and (summary.sd is None) == (len(scores) < 2)
    bins = stats.histogram([round(score) for score in scores], scale)
    assert len(bins) == scale + 1 and sum(bins) == len(scores)


NOT_A_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


@dataclass
class Classroom:
    """An app with a logged-in instructor, and how many classes it has seated."""

    app: object
    client: object
    classes: int = 0


@pytest.fixture
def classroom(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        factories.instructor("teacher", "teacher password")
    client = app.test_client()
    response = submit(client, "/login", username="teacher", password="teacher password")
    assert response.status_code == 303
    yield Classroom(app, client)
    with app.app_context():
        db.engine.dispose()


def asking(quiz, kept: tuple[int, ...]):
    """The quiz as an older edit of the bank that asked only the questions kept."""
    if len(kept) == len(quiz.questions):
        return quiz
    data = json.loads(quiz.snapshot)
    data["questions"] = [data["questions"][j] for j in kept]
    return build_quiz(data)


def seat_class(classroom, matrix) -> int:
    """A class whose students answered as the matrix says: a row's None questions are ones its
    version of the quiz did not ask; a row of only None is an attempt not yet answered."""
    with classroom.app.app_context():
        quiz = current_bank().quizzes[SLUG]
        teacher = db.session.scalars(select(Instructor)).one()
        classroom.classes += 1
        seated = factories.class_(teacher, join_code=f"{classroom.classes:06d}")
        for n, row in enumerate(matrix):
            asked = tuple(j for j, cell in enumerate(row) if cell is not None)
            taken = asking(quiz, asked or tuple(range(len(quiz.questions))))
            marks = [row[j] for j in asked] if asked else [None] * len(quiz.questions)
            factories.attempts(
                taken,
                [factories.right_or_wrong(taken, marks)],
                names=[f"Student {n}"],
                class_id=seated.id,
            )
        return seated.id


@st.composite
def class_matrices(draw):
    """Answer matrices for the eight-question quiz: one student, everyone alike, or anything."""
    row = st.lists(CELL, min_size=8, max_size=8)
    shape = draw(st.sampled_from(["random", "single", "equal"]))
    if shape == "single":
        return [draw(row)]
    if shape == "equal":
        return [draw(row)] * draw(st.integers(2, 30))
    return draw(st.lists(row, min_size=1, max_size=60))


@fuzz_settings(25)
@given(matrix=class_matrices())
def test_class_page_never_shows_nan_or_inf(classroom, tally, matrix):
    """A class built from an arbitrary matrix: the page and item export show no nan or inf,
    and the alpha and discriminations shown are the statistics module's, rounded."""
    tally["answer matrices fuzzed"] += 1
    class_id = seat_class(classroom, matrix)
    counted = [row for row in matrix if any(cell is not None for cell in row)]

    page = classroom.client.get(f"/teach/classes/{class_id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert not NOT_A_NUMBER.search(html), NOT_A_NUMBER.search(html)
    alpha = stats.cronbach_alpha(counted)
    shown = re.search(r"Cronbach’s alpha</dt><dd>([^<]*)</dd>", html).group(1)
    assert shown == ("–" if alpha is None else f"{alpha:.2f}")
    if counted:
        expected = [stats.discrimination(counted, j) for j in range(8)]
        assert re.findall(r"answered\) · discrimination ([^\s<]+)", html) == [
            "–" if d is None else f"{d:.2f}" for d in expected
        ]
    for export in ("items.csv", "gradebook.csv"):
        response = classroom.client.get(f"/teach/classes/{class_id}/{export}")
        assert response.status_code == 200
        assert not NOT_A_NUMBER.search(response.get_data(as_text=True))


def test_seated_class_shows_the_hand_worked_alpha(classroom, tally):
    """The class seat_class builds for a known matrix shows the alpha worked out by hand."""
    tally["answer matrices fuzzed"] += 1
    # test_stats' SMALL in the first three questions (item variances .72, total variance 1.04),
    # and five questions everyone got right, which add nothing to either:
    # alpha = 8/7 * (1 - .72/1.04) = 32/91 = 0.35
    small = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0]]
    class_id = seat_class(classroom, [row + [1] * 5 for row in small])
    html = classroom.client.get(f"/teach/classes/{class_id}").get_data(as_text=True)
    assert "Cronbach’s alpha</dt><dd>0.35</dd>" in html
