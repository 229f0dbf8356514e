"""Import a file in the browser: a report of what it holds and leaves out before anything is
stored, then a new draft quiz or questions added to one."""

from flask import abort, current_app, flash, redirect, render_template, url_for
from flask_login import current_user
from itsdangerous import BadSignature, URLSafeSerializer
from wtforms import SelectChoice

from .. import formats, images
from ..audit import audit
from ..auth import visible_records
from ..bank import BankError
from ..extensions import db
from ..formats import slugify
from ..models import QuizRecord
from ..text import plain
from . import drafts
from .blueprint import bp, editable
from .checklist import gaps
from .forms import ImportedForm, ImportForm


def import_serializer() -> URLSafeSerializer:
    """Signs the parsed quiz an import's report hands its second step, so none is forged."""
    return URLSafeSerializer(current_app.secret_key, salt="quizwright.import")


def import_targets() -> list[QuizRecord]:
    """The quizzes an import may add its questions to: those the instructor may edit."""
    rows = db.session.execute(
        visible_records()
        .where(QuizRecord.owner_id.is_not(None), QuizRecord.archived_at.is_(None))
        .order_by(QuizRecord.title)
    ).all()
    return [
        record
        for record, shared in rows
        if record.owner_id == current_user.id or shared == "edit" or current_user.is_admin
    ]


@bp.route("/import", methods=["GET", "POST"])
def import_file():
    """Read a quiz file and report, before storing any question, what it will import, every
    question it skips and why, and what its questions lack; the pictures it carries are kept
    now, under addresses only its questions name."""
    form = ImportForm()
    if not form.validate_on_submit():
        return render_template("authoring/import.html", form=form), 400 if form.errors else 200
    upload, limit = form.upload.data, current_app.config["IMPORT_BYTES"]
    with upload.stream:  # a large upload is a temporary file: closed once read
        data = upload.read(limit + 1)
    try:
        imported = formats.draft_from(data, upload.filename, form.format_name.data or None, limit)
    except (formats.FormatError, BankError) as error:
        form.upload.errors.extend(error.errors)
        return render_template("authoring/import.html", form=form), 400
    # Kept now, as an upload in the editor is: a picture's address is its content's digest,
    # so the confirmed questions find it, and a second import of the file stores nothing more.
    for address, data in imported.pictures.items():
        images.keep(address, data)
    confirm = ImportedForm(
        formdata=None,
        parsed=import_serializer().dumps(imported.quiz),
        title=imported.quiz["title"],
    )
    confirm.into.choices = _into_choices()
    return render_template(
        "authoring/imported.html",
        imported=imported,
        form=confirm,
        name=upload.filename,
        gaps=gaps(imported.quiz),
    )


def _wording(prompt: str) -> str:
    """A prompt as a reader compares two: its words, whatever their case, spacing or markup."""
    return " ".join(plain(prompt).casefold().split())


def _into_choices() -> list[SelectChoice]:
    return [SelectChoice("", "A new draft quiz")] + [
        SelectChoice(record.slug, f"The draft of {record.title}") for record in import_targets()
    ]


@bp.post("/import/confirm")
def import_confirm():
    """Store an import the report showed: as a new draft quiz, or added to one of the
    instructor's drafts."""
    form = ImportedForm()
    form.into.choices = _into_choices()
    if not form.validate_on_submit():
        abort(400, description="This import's form was incomplete: import the file again.")
    try:
        quiz = import_serializer().loads(form.parsed.data or "")
    except BadSignature:
        abort(400, description="This import was not read here: import the file again.")
    if not form.into.data:
        if form.title.data and form.title.data != quiz["title"]:
            quiz["title"], quiz["slug"] = form.title.data, slugify(form.title.data) or quiz["slug"]
        base, n = quiz["slug"][:58], 2
        while not drafts.slug_free(quiz["slug"]):
            quiz["slug"], n = f"{base}-{n}", n + 1
        record = drafts.new_quiz(current_user.id, quiz)
        audit(f"quiz {record.slug} imported with {len(quiz['questions'])} questions")
        flash(f"Imported {len(quiz['questions'])} questions into a new draft.")
        return redirect(url_for(".edit", slug=record.slug), 303)
    record = editable(form.into.data)
    if record not in import_targets():
        abort(404, description="There is no quiz of yours at this address.")
    repeated: list[dict] = []

    def add(draft: dict) -> None:
        # A file imported twice doubles every question: said, and left for the author to undo.
        known = {_wording(question["prompt"]) for question in draft["questions"]}
        repeated[:] = [q for q in quiz["questions"] if _wording(q["prompt"]) in known]
        drafts.add_questions(draft, quiz["questions"])

    try:
        drafts.save(record, add, current_user.id)
    except drafts.TooMany as error:
        abort(409, description=str(error))
    audit(f"quiz {record.slug}: {len(quiz['questions'])} questions imported")
    flash(f"Added {len(quiz['questions'])} imported questions to the draft."
          + (f" {len(repeated)} of them are worded as questions it already had: delete the "
             "copies you do not want." if repeated else ""))  # fmt: skip
    return redirect(url_for(".edit", slug=record.slug, _anchor="questions"), 303)
