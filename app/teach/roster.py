"""The instructor's side of a roster: add students, print and download their sign-in codes,
remove a student or give them a new code."""

from collections import Counter
from typing import NamedTuple

from flask import abort, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import func

from .. import roster
from ..audit import audit
from ..auth import class_or_404
from ..extensions import db
from ..models import Attempt, Class, Role, RosterStudent
from ..names import student_key
from ..roster.parse import MOST_BYTES, PREVIEW_ROWS
from . import exports
from .blueprint import bp
from .forms import ColumnsForm, RosterForm
from .views import loopback_fix, qr_code

# A list of 2,000 students with long email addresses, as a paste or a file: far above the answer
# forms' limit, which stays as it is everywhere else. Twice the list, as its line breaks may
# come back from the browser as two characters each, and the rest of the form besides; the list's
# own limit (parse.MOST_BYTES) is checked with a message saying so.
ROSTER_BYTES = 2 * MOST_BYTES + 64 * 1024


class Seen(NamedTuple):
    """A student as the roster page's offer to merge names them: their key and name."""

    key: str
    name: str


def _manage(class_id: int) -> Class:
    """Sign-in codes let anyone answer as the student: only who may change the class sees them."""
    return class_or_404(class_id, need=Role.MANAGE)


def _personal_links(students: list[RosterStudent]) -> dict[int, str]:
    base = url_for("roster.personal", code="", _external=True)
    return {student.id: base + student.sign_in_code for student in students}


def _loopback_fix() -> str | None:
    """The command to run when the personal links point at this computer, which no student's
    phone can open; None when phones can open them."""
    return loopback_fix(url_for("roster.sign_in", _external=True))


@bp.url_value_preprocessor
def allow_a_whole_roster(endpoint, _values):
    """Let a logged-in instructor send a roster larger than other forms may be; this runs before
    anything reads the form (the NUL guard, the CSRF check)."""
    if endpoint == "teach.roster_page" and current_user.is_authenticated:
        request.max_content_length = ROSTER_BYTES
        request.max_form_memory_size = ROSTER_BYTES


@bp.route("/classes/<int:class_id>/roster", methods=["GET", "POST"])
def roster_page(class_id):
    """The class's roster with each student's code, and the form that adds students. A list
    whose columns it cannot tell apart is shown first, to say which is which; the page's second
    step ("columns") adds it."""
    class_ = _manage(class_id)
    if request.form.get("columns-step") == "columns":  # ColumnsForm's step field
        return _add_with_columns(class_)
    form = RosterForm()
    if form.validate_on_submit():
        if not form.table.sure:
            return _roster_page(
                class_, form, columns=ColumnsForm.preview(form.table, pasted=not form.upload.data)
            )
        if added := _add(class_, form.entries, form.source.errors):
            return added
    return _roster_page(class_, form)


def _add_with_columns(class_: Class):
    """The second step: the list again, with the columns the instructor chose; shown again with
    every problem by its column or line, or added."""
    columns = ColumnsForm()
    if columns.validate_on_submit() and (
        added := _add(class_, columns.entries, columns.pending.errors)
    ):
        return added
    pasted = columns.pending.data if columns.pasted.data else ""
    form = RosterForm(formdata=None, data={"students": pasted})
    if columns.table is None:
        # Nothing to show of a list that cannot be read: say so where a list is given.
        form.students.errors = list(columns.pending.errors)
        return _roster_page(class_, form)
    return _roster_page(class_, form, columns=columns)


def _add(class_: Class, entries: list, errors: list):
    """Add the students and go back to the roster saying how many; None, with why in `errors`,
    when the roster refuses them (an id it has already)."""
    try:
        added = roster.add_students(class_.id, entries)
    except roster.RosterError as error:
        errors.extend(error.problems)
        return None
    audit(f"roster: {len(added)} students added to class {class_.id}")
    return redirect(url_for(".roster_page", class_id=class_.id, added=len(added)), 303)


def _roster_page(
    class_: Class,
    form: RosterForm,
    refused: str | None = None,
    columns: ColumnsForm | None = None,
):
    """The roster page, with the columns to choose when `columns` is given; 400 when the list,
    its columns or a restore was refused."""
    students = roster.class_roster(class_.id)
    current = [student for student in students if student.removed_at is None]
    page = render_template(
        "teach/roster.html",
        class_=class_,
        form=form,
        current=current,
        removed=[student for student in students if student.removed_at is not None],
        links=_personal_links(current),
        loopback_fix=_loopback_fix(),
        added=request.args.get("added", type=int),
        most=roster.MOST_STUDENTS,
        spaced=roster.spaced,
        refused=refused,
        columns=columns,
        preview_rows=PREVIEW_ROWS,
        twins=_typed_twins(class_.id, current),
    )
    return page, 400 if form.errors or refused or (columns and columns.refused) else 200


def _typed_twins(class_id: int, current: list[RosterStudent]) -> list[tuple[Seen, Seen]]:
    """Names typed in the class before its roster, each spelled as one roster student's name,
    with that student: the class page and gradebooks count the two apart until merged. One
    query: the roster is read already."""
    typed = db.session.execute(
        db.select(Attempt.student_key, func.min(Attempt.student_name))
        .where(Attempt.class_id == class_id, Attempt.roster_student_id.is_(None))
        .group_by(Attempt.student_key)
    )
    spellings = Counter(student_key(student.name) for student in current)
    # A name two roster students share is left to the instructor: which of them typed it?
    listed = {student_key(s.name): s for s in current if spellings[student_key(s.name)] == 1}
    return [
        (Seen(key, name), Seen(listed[key].student_key, listed[key].name))
        for key, name in typed
        if key in listed
    ]


@bp.get("/classes/<int:class_id>/roster/cards")
def sign_in_cards(class_id):
    """A printable page of cards: each student's name, class, personal link and its QR code."""
    class_ = _manage(class_id)
    current = [s for s in roster.class_roster(class_.id) if s.removed_at is None]
    # Cards whose links no phone opens are found out only once handed round: on loopback the
    # page holds them back until the instructor says "anyway" (?confirm=1).
    fix = _loopback_fix()
    unconfirmed = bool(fix and current) and request.args.get("confirm") != "1"
    links = {} if unconfirmed else _personal_links(current)
    return render_template(
        "teach/cards.html",
        class_=class_,
        students=current,
        unconfirmed=unconfirmed,
        links=links,
        qr_codes={id_: qr_code(link) for id_, link in links.items()},
        sign_in_url=url_for("roster.sign_in", _external=True),
        loopback_fix=fix,
        spaced=roster.spaced,
    )


@bp.get("/classes/<int:class_id>/roster/codes.csv")
def sign_in_codes(class_id):
    """The cards as a file: one row per student with their code and personal link."""
    class_ = _manage(class_id)
    current = [s for s in roster.class_roster(class_.id) if s.removed_at is None]
    links = _personal_links(current)
    header = ["student", "student_id", "class", "sign_in_code", "personal_link"]
    rows = [
        [s.name, s.student_number or "", class_.name, s.sign_in_code, links[s.id]] for s in current
    ]
    audit(f"roster: sign-in codes of class {class_.id} downloaded")
    return exports.download(class_.name, "sign-in", "codes", (header, rows))


def _student(class_: Class, student_id: int) -> RosterStudent:
    found = db.session.get(RosterStudent, student_id)
    if found is None or found.class_id != class_.id:
        abort(404, description="There is no such student on this class's roster.")
    return found


@bp.post("/classes/<int:class_id>/roster/<int:student_id>/remove")
def remove_student(class_id, student_id):
    """Take a student off the roster: their code stops working, their attempts stay."""
    class_ = _manage(class_id)
    student = _student(class_, student_id)
    roster.remove_student(student)
    audit(f"roster: student {student.id} removed from class {class_.id}")
    return redirect(url_for(".roster_page", class_id=class_.id), 303)


@bp.post("/classes/<int:class_id>/roster/<int:student_id>/restore")
def restore_student(class_id, student_id):
    """Undo a removal: the student's code works again and their attempts are theirs."""
    class_ = _manage(class_id)
    student = _student(class_, student_id)
    if student.removed_at is not None:
        refused = roster.restore_student(student)
        if refused:
            return _roster_page(class_, RosterForm(formdata=None), refused)
        audit(f"roster: student {student.id} restored to class {class_.id}")
    back = url_for(".roster_page", class_id=class_.id, _anchor=f"student-{student.id}")
    return redirect(back, 303)


@bp.post("/classes/<int:class_id>/roster/<int:student_id>/new-code")
def new_sign_in_code(class_id, student_id):
    """Give a student a new code, as when a card is lost: the old code stops working at once."""
    class_ = _manage(class_id)
    student = _student(class_, student_id)
    if student.removed_at is not None:
        abort(404, description="This student was removed from the roster.")
    roster.give_new_code(student)
    audit(f"roster: new sign-in code for student {student.id} of class {class_.id}")
    back = url_for(".roster_page", class_id=class_.id, _anchor=f"student-{student.id}")
    return redirect(back, 303)
