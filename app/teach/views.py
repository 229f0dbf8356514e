"""The instructor pages: classes, the class results page, attempt reviews and CSV exports."""

import functools
import ipaddress
from math import ceil
from typing import NamedTuple
from urllib.parse import urlsplit

from flask import abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from markupsafe import Markup
from sqlalchemy import func
from sqlalchemy.orm import joinedload

from .. import codes, reports, signals
from ..attempts.lookup import attempt_or_404
from ..attempts.service import answers_held_back, progress, quiz_of, shown_choices, standing
from ..audit import audit
from ..auth import class_or_404, may, require_admin, require_author, role_in
from ..authoring import may_see_in, usable_slugs
from ..bank import Quiz
from ..extensions import db
from ..models import Attempt, Class, ClassShare, Instructor, QuizVersion, Role
from ..races import commit_first_free
from ..served import current_bank
from ..stats import FEW_ATTEMPTS
from . import assignments, exports
from .blueprint import bp
from .forms import SHARE_ROLES, ClassForm, ReportForm

REFRESH_SECONDS = 30
ROWS_A_PAGE = 40
"""Rows of the class page's student table at a time: at about 390 bytes a row, 500 students on
one page came to 218 KB of HTML, and counting every attempt to 4.8 MB; 40 keep the page and its
stylesheet under 50 KB with longer names than the bench's (issue 32)."""


@bp.before_request
@login_required
def require_login():
    """Every page here is for logged-in instructors only."""


def _scope(class_id: int | None) -> Class | None:
    """The class a page is about; None means attempts without a class, for admins only."""
    if class_id is None:
        require_admin()
        return None
    return class_or_404(class_id)


def _selection(class_id: int | None) -> tuple[Class | None, ReportForm, Quiz]:
    """The class, and the quiz and counting method its page or export was asked for."""
    class_ = _scope(class_id)
    # The assignment says which attempt is the grade; the selector still explores the others.
    current = class_.current_assignments if class_ else None
    form = ReportForm(
        {a.quiz_slug: a.grade_from for a in current} if class_ else None,
        [a.quiz_slug for a in class_.assignments] if class_ else (),
    )
    if not form.validate():
        abort(400, description="Choose a quiz and which attempts count from the lists.")
    bank = current_bank()
    return class_, form, bank.quizzes.get(form.quiz.data) or bank.retired[form.quiz.data]


def _report(class_id: int | None) -> tuple[Class | None, ReportForm, reports.ClassReport]:
    class_, form, quiz = _selection(class_id)
    return class_, form, reports.class_report(quiz, class_id, form.count.data)


@bp.route("", methods=["GET", "POST"])
def dashboard():
    """The instructor's classes, and the form that creates one with a fresh join code."""
    form = ClassForm()
    if request.method == "POST":
        require_author()
    if form.validate_on_submit():
        made = Class(name=form.name.data, instructor_id=current_user.id)
        db.session.add(made)
        new_join_code(made)
        audit(f"class {made.id} {made.name!r} created")
        return redirect(url_for(".class_page", class_id=made.id), 303)
    archived = request.args.get("archived") == "on"
    # The instructor's own classes and those shared with them (an admin's: every class), with
    # the share's role, in one query.
    share = ClassShare.instructor_id == current_user.id
    listed = (
        db.select(Class, ClassShare.role)
        .outerjoin(ClassShare, (ClassShare.class_id == Class.id) & share)
        .options(joinedload(Class.instructor))
        .order_by(Class.created_at.desc(), Class.id.desc())
    )
    if not current_user.is_admin:
        listed = listed.where((Class.instructor_id == current_user.id) | share)
    # Archived and current classes in the same query: "Show archived classes" only when any is.
    every = db.session.execute(listed).all()
    classes = [row for row in every if (row[0].archived_at is not None) == archived]
    any_archived = any(row[0].archived_at is not None for row in every)
    attempts = dict(
        db.session.execute(
            db.select(Attempt.class_id, func.count(Attempt.id))
            .where(Attempt.class_id.in_([c.id for c, _ in classes]), Attempt.voided_at.is_(None))
            .group_by(Attempt.class_id)
        ).all()
    )
    page = render_template(
        "teach/dashboard.html",
        classes=classes,
        attempts=attempts,
        archived=archived,
        any_archived=any_archived,
        form=form,
        quizzes=_usable_quizzes() if current_user.may_author else (),
        share_roles=SHARE_ROLES,
    )
    return page, 400 if form.errors else 200


def _usable_quizzes() -> list[Quiz]:
    """The quizzes on offer that the instructor may preview and assign, in the bank's order."""
    usable = usable_slugs()
    return [quiz for quiz in current_bank().quizzes.values() if quiz.slug in usable]


def new_join_code(class_: Class) -> None:
    """Give a class a fresh join code and commit: the old code and link stop working at once."""

    def draw() -> None:
        db.session.add(class_)  # a new class, rolled back out of the session, goes back in
        class_.join_code = codes.new_join_code()

    commit_first_free(draw, codes.JOIN_TRIES, "join code")


def _lms_panel(class_id: int, slug: str):
    """What a feature plugged into the class page (LTI) adds for this class, if anything."""
    added = signals.class_page.send(class_id=class_id, slug=slug)
    return next((panel for _, panel in added if panel is not None), None)


class TablePage(NamedTuple):
    """One page of the student table: the whole table's rows, and which page is shown."""

    every: list
    number: int

    @property
    def count(self) -> int:
        return max(1, ceil(len(self.every) / ROWS_A_PAGE))

    @property
    def first(self) -> int:
        """The place of the page's first row in the whole table, from 1."""
        return (self.number - 1) * ROWS_A_PAGE + 1

    @property
    def rows(self) -> list:
        return self.every[self.first - 1 : self.first - 1 + ROWS_A_PAGE]

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1

    @property
    def links(self) -> list[int | None]:
        """The pages to link to: every one when few, else the first, the last and the current
        with two each side, None where two or more pages are left out."""
        if self.count <= 9:
            return list(range(1, self.count + 1))
        near = range(max(1, self.number - 2), min(self.count, self.number + 2) + 1)
        links, previous = [], 0
        for number in sorted({1, *near, self.count}):
            if number - previous == 2:  # one page left out: its number is as short as "…"
                links.append(number - 1)
            elif number - previous > 2:
                links.append(None)
            links.append(number)
            previous = number
        return links


def page_number(text: str) -> int | None:
    """A table page's number as an address writes it, plain ASCII digits from 1; None for
    anything else (`0`, `-1`, ` 2`, `٣`, `1e3`). Past nine digits it is past any table's last
    page, and not read: Python refuses to read a number of thousands of digits."""
    if not (text.isascii() and text.isdigit() and text.strip("0")):
        return None
    return int(text) if len(text) <= 9 else 10**9


def table_page(rows: list, asked: str | None) -> TablePage:
    """The page of rows an address asks for (`?page=2`, the first without). A number past the
    last leads to the last: the table shrinks (attempts voided, students merged) under whoever
    reads its last page, and their refresh should go on."""
    page = TablePage(rows, 1)
    asked = "1" if asked is None else asked
    number = page_number(asked)
    if number is None:
        abort(400, description="Pages of the student table are numbered from 1.")
    if number > page.count:
        last = {**request.view_args, **request.args.to_dict(), "page": page.count}
        abort(redirect(url_for(request.endpoint, **last), 303))
    return page._replace(number=number)


@bp.get("/no-class", defaults={"class_id": None})
@bp.get("/classes/<int:class_id>")
def class_page(class_id):
    """Who took the quiz, how they scored, and which questions and wrong answers troubled them."""
    class_, form, report = _report(class_id)
    # Who has started first, each part by name: in a live class the first page shows them.
    started_first = sorted(report.students, key=lambda row: row.shown is None)
    rows = table_page(started_first, request.args.get("page"))
    join_url, qr, fix = _join(class_) if class_ else (None, None, None)
    refresh = request.args.get("refresh") == "on"
    # Each review links back to this page of the table, counted and refreshing as it is.
    back = {"count": report.counting.value}
    back |= {"page": str(rows.number)} if rows.number > 1 else {}
    back |= {"refresh": "on"} if refresh else {}
    role = role_in(class_) if class_ else Role.OWN
    return render_template(
        "teach/class.html",
        class_=class_,
        role=role,
        # Asked once for the page: a viewer is not offered buttons that end in a 403.
        may_manage=may(role, Role.MANAGE) and not (class_ and class_.archived_at),
        voided=_voided(class_id, report.quiz.slug),
        form=form,
        report=report,
        rows=rows,
        back=back,
        join_url=join_url,
        qr=qr,
        loopback_fix=fix,
        refresh=REFRESH_SECONDS if refresh else None,
        few=FEW_ATTEMPTS,
        retired=report.quiz.slug not in current_bank().quizzes,
        assignments=assignments.listing(class_) if class_ else [],
        # Each quiz is assigned once: with all of them assigned, the form would offer none.
        all_assigned=bool(class_)
        and set(current_bank().quizzes) <= {a.quiz_slug for a in class_.assignments},
        lms=_lms_panel(class_.id, report.quiz.slug) if class_ else None,
        held_elsewhere=_held_elsewhere(class_, report.quiz.slug) if class_ else False,
    )


def _held_elsewhere(class_: Class, slug: str) -> bool:
    """Whether an assignment other than this class's own holds the quiz's key back from its
    students: the instructor is told why their feedback waits."""
    own = next((a.id for a in class_.current_assignments if a.quiz_slug == slug), None)
    return answers_held_back(slug, besides=own)


def _voided(class_id: int | None, slug: str) -> list:
    """The class's voided attempts at a quiz, with who voided them, in one query."""
    return db.session.execute(
        db.select(Attempt.token, Attempt.student_name, Attempt.voided_at, Instructor.username)
        .join(Attempt.quiz_version)
        .outerjoin(Instructor, Instructor.id == Attempt.voided_by_id)
        .where(
            Attempt.class_id.is_(None) if class_id is None else Attempt.class_id == class_id,
            Attempt.voided_at.is_not(None),
            QuizVersion.slug == slug,
        )
        .order_by(Attempt.voided_at.desc())
    ).all()


@bp.get("/classes/<int:class_id>/join")
def join_screen(class_id):
    """The join code, link and QR code alone, large, for a projector: no scores on show."""
    class_ = class_or_404(class_id)
    join_url, qr, fix = _join(class_)
    return render_template(
        "teach/join.html", class_=class_, join_url=join_url, qr=qr, loopback_fix=fix
    )


def _join(class_: Class) -> tuple[str, Markup | None, str | None]:
    """The class's join link, an inline SVG QR code of it, and the command that lets phones
    open it when only this computer can (None when they can)."""
    join_url = url_for("quiz.join", code=class_.join_code, _external=True)
    return join_url, qr_code(join_url), loopback_fix(join_url)


def loopback_fix(url: str) -> str | None:
    """The command that lets phones open a link on this computer's own address; None if they can."""
    parts = urlsplit(url)
    if not is_loopback(parts.hostname or ""):
        return None
    # Another port than make run's 8000 stays in the command, as gunicorn's log line words it.
    port = f"PORT={parts.port} " if parts.port not in (None, 8000) else ""
    return f"HOST=0.0.0.0 {port}make run"


def is_loopback(host: str) -> bool:
    """Whether a host name means "this computer" wherever it is opened: on a phone, the phone."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=256)
def qr_code(text: str) -> Markup | None:
    """An inline SVG QR code, or None for a link too long for any QR code; drawn once per link,
    as the class page reloads every 30 s."""
    import segno  # on the first class page: a worker serving only students never loads it

    try:
        code = segno.make(text, error="m")
    except segno.DataOverflowError:
        return None
    return Markup(code.svg_inline(scale=6, light="#ffffff", omitsize=True))


@bp.post("/classes/<int:class_id>/close", defaults={"is_open": False})
@bp.post("/classes/<int:class_id>/reopen", defaults={"is_open": True})
def set_open(class_id, is_open):
    """Close a class to new attempts, or reopen it."""
    class_ = class_or_404(class_id, Role.MANAGE)
    class_.is_open = is_open
    db.session.commit()
    audit(f"class {class_.id} {'reopened' if is_open else 'closed'}")
    return redirect(url_for(".class_page", class_id=class_id), 303)


def class_attempt_or_404(token: str, need: Role = Role.VIEW) -> tuple[Attempt, Class | None]:
    """An attempt in a class the logged-in instructor may see (or, as `need` says, manage), at a
    quiz they may see there, with its class; attempts without a class are admins'."""
    attempt = attempt_or_404(token)
    if attempt.class_id is None:
        require_admin()
        class_ = None
    else:
        class_ = class_or_404(attempt.class_id, need)
    if not may_see_in(class_, attempt.quiz_version.slug):
        audit("access denied")
        abort(404, description="There is no attempt at this address. Check the link.")
    return attempt, class_


@bp.get("/attempts/<token>")
def attempt_review(token):
    """One student's attempt, answers in the order they were shown."""
    attempt, class_ = class_attempt_or_404(token)
    quiz = quiz_of(attempt)
    return render_template(
        "teach/attempt.html",
        class_=class_,
        back=back_to_table(request.args),
        may_change=may(role_in(class_), Role.MANAGE) and not class_.archived_at if class_ else True,
        attempt=attempt,
        quiz=quiz,
        progress=progress(attempt, quiz),
        state=standing(attempt, quiz),
        choices={question.id: shown_choices(attempt, question) for question in quiz.questions},
        retired=quiz.slug not in current_bank().quizzes,
    )


def back_to_table(args) -> dict[str, str]:
    """The class page's counting, page and refresh a review was opened from
    (`?count=best&page=3&refresh=on`), for its link back; what is not one of them is left out
    rather than refused."""
    back = {}
    if args.get("count") in set(reports.Counting):
        back["count"] = args["count"]
    if page_number(args.get("page", "")) is not None:  # the class page reads it the same way
        back["page"] = args["page"]
    if args.get("refresh") == "on":
        back["refresh"] = "on"
    return back


def _download(class_: Class | None, quiz: Quiz, kind: str, table: exports.Table):
    return exports.download(class_.name if class_ else "no class", quiz.slug, kind, table)


@bp.get("/no-class/gradebook.csv", defaults={"class_id": None})
@bp.get("/classes/<int:class_id>/gradebook.csv")
def gradebook(class_id):
    """One row per student: the counted attempt's score, or the mean when all count."""
    class_, form, quiz = _selection(class_id)
    roster = reports.class_roster(quiz, class_id, form.count.data)
    return _download(class_, quiz, exports.gradebook_kind(roster), exports.gradebook(roster))


LMS_GRADEBOOKS = {"moodle": exports.moodle_gradebook, "canvas": exports.canvas_gradebook}


@bp.get("/classes/<int:class_id>/gradebook-moodle.csv", defaults={"lms": "moodle"})
@bp.get("/classes/<int:class_id>/gradebook-canvas.csv", defaults={"lms": "canvas"})
def lms_gradebook(class_id, lms):
    """The gradebook as Moodle's or Canvas's grade import reads it."""
    class_, form, quiz = _selection(class_id)
    roster = reports.class_roster(quiz, class_id, form.count.data)
    table = LMS_GRADEBOOKS[lms](roster)
    return _download(class_, quiz, exports.gradebook_kind(roster, lms), table)


@bp.get("/no-class/responses.csv", defaults={"class_id": None})
@bp.get("/classes/<int:class_id>/responses.csv")
def responses(class_id):
    """One row per answer, every attempt, with the question and choice as the student saw them."""
    class_, _, quiz = _selection(class_id)
    table = exports.responses(
        class_.name if class_ else "No class", *reports.responses(quiz, class_id)
    )
    return _download(class_, quiz, "responses", table)


@bp.get("/no-class/items.csv", defaults={"class_id": None})
@bp.get("/classes/<int:class_id>/items.csv")
def item_statistics(class_id):
    """One row per question: facility, discrimination and how many chose each choice."""
    class_, _, report = _report(class_id)
    return _download(class_, report.quiz, "items", exports.item_statistics(report))
