"""The instructor's own quizzes in the browser: list, write, publish, share, copy, delete."""

import json

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from .. import formats
from ..audit import audit
from ..auth import visible_records
from ..bank import BankError, build_quiz, problems
from ..extensions import db
from ..models import Publication, QuizRecord, QuizRole, QuizShare
from ..served import recheck_bank
from . import drafts
from .access import SHARE_ROLES, allows, record_or_404, share_quiz
from .blueprint import bp, editable
from .checklist import gaps
from .forms import (
    KINDS,
    NewQuizForm,
    QuestionForm,
    SettingsForm,
    ShareForm,
    pools_written,
    question_form_data,
)


@bp.route("", methods=["GET", "POST"])
def quizzes():
    """The quizzes the instructor owns, may edit or use, and the form that starts a new one."""
    form = NewQuizForm()
    if form.validate_on_submit():
        draft = {
            "slug": form.chosen_slug(),
            "title": form.title.data,
            "description": "",
            "shuffle_choices": False,
            "questions": [],
        }
        try:
            record = drafts.new_quiz(current_user.id, draft)
        except drafts.SlugTaken:
            field = form.slug if form.slug.data else form.title
            field.errors.append(f"The address {draft['slug']} is taken: choose another.")
        else:
            audit(f"quiz {record.slug} created")
            return redirect(url_for(".edit", slug=record.slug), 303)
    rows = db.session.execute(
        visible_records().order_by(
            QuizRecord.archived_at.is_not(None), QuizRecord.created_at.desc(), QuizRecord.id.desc()
        )
    ).all()
    drops = {name: formats.dropped(name) for name in formats.FORMATS}
    page = render_template(
        "authoring/quizzes.html", rows=rows, form=form, share_roles=SHARE_ROLES, drops=drops
    )
    return page, 400 if form.errors else 200


def _edit_page(
    record: QuizRecord,
    settings: SettingsForm | None = None,
    conflict=None,
    status: int = 200,
    refused: list[str] | None = None,
):
    draft = drafts.draft_of(record)
    if settings is None:
        settings = SettingsForm(
            data={
                **drafts.settings_of(draft),
                "pools": pools_written(draft.get("pools", [])),
                "base": drafts.digest(drafts.settings_of(draft)),
            }
        )
    found = problems({"quizzes": [draft]}, gaps_allowed=True)
    page = render_template(
        "authoring/edit.html",
        kinds=KINDS,
        record=record,
        draft=draft,
        settings=settings,
        gaps=gaps(draft),
        problems=refused or [drafts.unplaced(p, draft["slug"]) for p in found],
        publishable=not found and record.draft is not None,
        conflict=conflict,
    )
    return page, status


@bp.route("/<slug>/edit", methods=["GET", "POST"])
def edit(slug):
    """The quiz's settings, its questions in order, what they lack, and Publish."""
    record = editable(slug)
    if request.method == "GET":
        return _edit_page(record)
    form = SettingsForm()
    if not form.validate():
        return _edit_page(record, form, status=400)

    def settle(draft: dict) -> None:
        settings = drafts.settings_of(draft)
        if drafts.digest(settings) != form.base.data:
            raise drafts.Conflict(_saved_by(record), settings)
        draft.update(
            slug=form.slug.data,
            title=form.title.data,
            description=form.description.data,
            shuffle_choices=form.shuffle_choices.data,
            shuffle_questions=form.shuffle_questions.data,
            pools=form.read_pools,
        )
        if not draft["pools"]:
            del draft["pools"]

    try:
        drafts.save(record, settle, current_user.id)
    except drafts.Conflict as conflict:
        form.base.data = drafts.digest(conflict.theirs)
        theirs = conflict.theirs | {"pools": pools_written(conflict.theirs.get("pools", []))}
        conflict.theirs = {
            form[key].label.text: value
            for key, value in theirs.items()
            if key in form and form[key].data != value
        }
        return _edit_page(record, form, conflict=conflict, status=409)
    except drafts.SlugTaken:
        fixed = record.published_version_id is not None
        form.slug.errors.append(
            "The address is fixed once the quiz is published: links and assignments use it."
            if fixed
            else f"The address {form.slug.data} is taken: choose another."
        )
        return _edit_page(record, form, status=400)
    audit(f"quiz {record.slug} settings saved")
    flash("Settings saved in the draft.")
    return redirect(url_for(".edit", slug=record.slug), 303)


@bp.post("/<slug>/listing")
def listing(slug):
    """Put the quiz on the home page or take it off, at once: a listing is no draft."""
    record = editable(slug)
    record.listed = request.form.get("listed") == "on"
    drafts.relist(record)
    recheck_bank()
    audit(f"quiz {record.slug} {'listed' if record.listed else 'unlisted'} on the home page")
    flash("Listed on the home page." if record.listed else "No longer on the home page.")
    return redirect(url_for(".edit", slug=record.slug, _anchor="listing"), 303)


def _saved_by(record: QuizRecord) -> str:
    db.session.refresh(record)
    who = record.draft_saved_by
    return who.username if who is not None else "someone"


def _has_question(draft: dict, question_id: str) -> bool:
    return any(q.get("id") == question_id for q in draft["questions"])


def _question_of(draft: dict, question_id: str) -> dict:
    found = next((q for q in draft["questions"] if q.get("id") == question_id), None)
    if found is None:
        abort(404, description="There is no such question in this quiz's draft.")
    return found


@bp.route("/<slug>/new-question", methods=["GET", "POST"], defaults={"question_id": None})
@bp.route("/<slug>/questions/<question_id>", methods=["GET", "POST"])
def question(slug, question_id):
    """Write one question of its type: its prompt, points, choices and which are right (or
    whether the statement is true), explanations and sources."""
    record = editable(slug)
    draft = drafts.draft_of(record)
    # A question deleted since its editor opened is a conflict to show, not a lost page.
    gone = request.method == "POST" and question_id and not _has_question(draft, question_id)
    stored = {} if not question_id or gone else _question_of(draft, question_id)
    if request.method == "GET":
        shown = question_form_data(stored, request.args.get("type"))
        form = QuestionForm(data={**shown, "base": drafts.digest(stored)})
        return _question_page(record, form, stored)
    form = QuestionForm()
    form.pools = [pool["name"] for pool in draft.get("pools", [])]
    if stored:  # a question keeps its type; another type is a new question
        form.kind.data = stored.get("type", "single_choice")
    if not form.validate():
        return _question_page(record, form, stored, status=400)
    form.add_picture()
    written_id = question_id or drafts.new_question_id(draft, form.prompt.data)

    def put(draft: dict) -> None:
        questions = draft["questions"]
        if question_id is None:  # a new question: under a free id, past nobody's
            drafts.add_questions(draft, [form.question(written_id)])
            return
        place = next((n for n, q in enumerate(questions) if q.get("id") == question_id), None)
        current = questions[place] if place is not None else None
        if current is None or drafts.digest(current) != form.base.data:
            raise drafts.Conflict(_saved_by(record), current)
        questions[place] = form.question(written_id)

    try:
        drafts.save(record, put, current_user.id)
    except drafts.Conflict as conflict:
        form.base.data = drafts.digest(conflict.theirs) if conflict.theirs else ""
        return _question_page(record, form, stored, conflict=conflict, status=409)
    except drafts.TooMany as error:
        form.prompt.errors.append(str(error))
        return _question_page(record, form, stored, status=400)
    audit(f"quiz {record.slug} question {written_id} saved")
    flash("Question saved in the draft.")
    return redirect(url_for(".edit", slug=record.slug, _anchor=f"q-{written_id}"), 303)


def _question_page(record, form, stored, conflict=None, status=200):
    number = next(
        (
            n
            for n, q in enumerate(drafts.draft_of(record)["questions"], 1)
            if stored and q["id"] == stored["id"]
        ),
        None,
    )
    page = render_template(
        "authoring/question.html",
        kinds=KINDS,
        record=record,
        form=form,
        stored=stored,
        number=number,
        conflict=conflict,
    )
    return page, status


@bp.post("/<slug>/questions/<question_id>/<any(up, down, duplicate, delete):action>")
def rearrange(slug, question_id, action):
    """Move a question up or down, copy it below itself, or delete it."""
    record = editable(slug)

    def change(draft: dict) -> None:
        drafts.rearrange(draft, question_id, action)

    try:
        drafts.save(record, change, current_user.id)
    except drafts.TooMany as error:
        abort(409, description=str(error))
    except KeyError:
        abort(404, description="There is no such question in this quiz's draft.")
    audit(f"quiz {record.slug} question {question_id}: {action}")
    # Back at the question moved, so that moving it again is one key away.
    anchor = f"q-{question_id}" if action in ("up", "down") else "questions"
    return redirect(url_for(".edit", slug=record.slug, _anchor=anchor), 303)


@bp.post("/<slug>/publish")
def publish(slug):
    """Make the draft what students are served, on every worker within seconds."""
    record = editable(slug)
    try:
        generation = drafts.publish(record, current_user.id)
    except BankError as error:
        return _edit_page(record, status=409, refused=error.errors)
    recheck_bank()
    audit(f"quiz {record.slug} published as release {generation}")
    flash("Published: students are served this version now. Attempts already begun keep theirs.")
    return redirect(url_for(".edit", slug=record.slug), 303)


@bp.get("/<slug>/<any(discard, delete):action>")
def confirm(slug, action):
    """What discarding the draft or deleting the quiz loses, with the button that does it."""
    record, _ = record_or_404(slug, QuizRole.EDIT if action == "discard" else QuizRole.OWN)
    return render_template(
        "authoring/confirm.html", record=record, action=action,
        taken=action == "delete" and drafts.has_history(record),
    )  # fmt: skip


def _confirmed(slug: str, action: str):
    """A destructive POST sent from its confirmation page, or the way back to it."""
    if request.form.get("confirm") != "yes":
        return redirect(url_for(".confirm", slug=slug, action=action), 303)
    return None


@bp.post("/<slug>/discard")
def discard(slug):
    """Throw the draft away and go back to the published version."""
    record = editable(slug)
    if record.published_version_id is None:
        abort(409, description="This quiz was never published: delete it instead.")
    if (back := _confirmed(slug, "discard")) is not None:
        return back
    drafts.discard(record)
    audit(f"quiz {record.slug} draft discarded")
    flash("Draft discarded: the quiz is the published version again.")
    return redirect(url_for(".edit", slug=record.slug), 303)


@bp.post("/<slug>/duplicate")
def duplicate(slug):
    """A copy of a quiz one may use, as a new draft of one's own: its draft only for those who
    may edit it, the published version for those who may use it."""
    record, role = record_or_404(slug)
    try:
        copy = drafts.duplicate(record, current_user.id, with_draft=allows(role, QuizRole.EDIT))
    except ValueError:
        abort(409, description=f"{record.title} is not published yet: there is nothing to copy.")
    audit(f"quiz {record.slug} duplicated as {copy.slug}")
    flash(f"This is your copy of {record.title}: nothing of it is published yet.")
    return redirect(url_for(".edit", slug=copy.slug), 303)


@bp.post("/<slug>/delete")
def delete(slug):
    """Delete a quiz nobody took, or archive one with attempts or assignments."""
    record, _ = record_or_404(slug, QuizRole.OWN)
    if record.from_file:
        abort(
            409,
            description=f"{record.title} is written in questions.json on the server: "
            "remove it there.",
        )
    if (back := _confirmed(slug, "delete")) is not None:
        return back
    title = record.title
    deleted = drafts.delete(record)
    recheck_bank()
    audit(f"quiz {slug} {'deleted' if deleted else 'archived'}")
    flash(
        f"{title} was deleted."
        if deleted
        else f"{title} was archived: it is served no more, and its attempts and reports stay."
    )
    return redirect(url_for(".quizzes"), 303)


@bp.route("/<slug>/share", methods=["GET", "POST"])
def share(slug):
    """Who else may use or edit the quiz, and the form that shares it with one more."""
    record, _ = record_or_404(slug, QuizRole.OWN)
    if record.from_file:
        abort(409, description="Every instructor may use a site quiz already.")
    form = ShareForm()
    if form.validate_on_submit():
        if form.instructor.id == record.owner_id:
            form.username.errors.append("This is the quiz's owner.")
        else:
            share_quiz(record.id, form.instructor.id, QuizRole(form.role.data))
            audit(f"quiz {record.slug} shared with {form.instructor.username} ({form.role.data})")
            flash(f"Shared with {form.instructor.username}.")
            return redirect(url_for(".share", slug=slug), 303)
    shares = db.session.scalars(
        db.select(QuizShare).where(QuizShare.quiz_id == record.id).order_by(QuizShare.created_at)
    ).all()
    page = render_template(
        "authoring/share.html", record=record, form=form, shares=shares, share_roles=SHARE_ROLES
    )
    return page, 400 if form.errors else 200


@bp.post("/<slug>/share/<int:instructor_id>/remove")
def stop_sharing(slug, instructor_id):
    """Take a share back: the quiz is no longer theirs to find."""
    record, _ = record_or_404(slug, QuizRole.OWN)
    found = db.session.get(QuizShare, (record.id, instructor_id))
    if found is not None:
        db.session.delete(found)
        db.session.commit()
        audit(f"quiz {record.slug} no longer shared with instructor {instructor_id}")
    return redirect(url_for(".share", slug=slug), 303)


@bp.get("/<slug>/history")
def history(slug):
    """Every published version, who published it when, and what it changed."""
    record, role = record_or_404(slug)
    publications = db.session.scalars(
        db.select(Publication)
        .where(Publication.quiz_id == record.id)
        .order_by(Publication.published_at.desc(), Publication.id.desc())
    ).all()
    changes = drafts.changes([json.loads(p.quiz_version.snapshot) for p in publications])
    return render_template(
        "authoring/history.html",
        record=record,
        publications=publications,
        changes=changes,
        may_edit=allows(role, QuizRole.EDIT) and not record.from_file and not record.archived_at,
    )


@bp.post("/<slug>/history/<int:publication_id>/restore")
def restore(slug, publication_id):
    """Make an old published version the draft, to look over and publish again."""
    record = editable(slug)
    found = db.session.get(Publication, publication_id)
    if found is None or found.quiz_id != record.id:
        abort(404, description="This quiz has no such published version.")
    drafts.restore(record, found.quiz_version, current_user.id)
    audit(f"quiz {record.slug} version {found.quiz_version_id} restored into the draft")
    flash("That version is now the draft: publish it to serve it again.")
    return redirect(url_for(".edit", slug=record.slug), 303)


@bp.get("/<slug>/draft")
def draft_preview(slug):
    """The draft as the preview shows a published quiz: every question with its key."""
    record = editable(slug)
    draft = drafts.draft_of(record)
    # A description not written yet (an imported file seldom has one) does not hide the key.
    found = problems({"quizzes": [{**draft, "description": draft.get("description") or "-"}]},
                     gaps_allowed=True)  # fmt: skip
    if found:
        abort(409, description="The draft has problems to mend first: the editor lists them.")
    return render_template(
        "teach/preview.html", quiz=build_quiz(draft), offered=False, draft_of=record,
        gaps=gaps(draft),
    )  # fmt: skip
