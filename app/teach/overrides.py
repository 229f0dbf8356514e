"""Overriding: an instructor gives one answer of a finished attempt another mark, or the whole
attempt another score, with a comment its student reads in their review, and may undo it. Each
change is audit-logged, and the grade goes to the LMS again through the outbox, as a regrade's."""

from flask import abort, flash, redirect, render_template, request, url_for
from flask_wtf import FlaskForm
from wtforms import HiddenField, StringField, TextAreaField
from wtforms.validators import Length, ValidationError

from ..attempts.service import (
    finish_attempt,
    grade_changed,
    progress,
    quiz_of,
    rescore,
    standing,
)
from ..audit import audit
from ..authoring.forms import number_typed, stripped
from ..bank import Quiz
from ..extensions import db
from ..grading import in_points
from ..models import Answer, Attempt
from ..question_types import Question, type_of
from .blueprint import bp
from .manage import managed_attempt
from .views import back_to_table


class OverrideForm(FlaskForm):
    """The points one answer (or, without a question, the whole attempt) earns instead, and
    why."""

    question = HiddenField()
    points = StringField("Points", filters=[stripped])
    comment = TextAreaField(
        "Comment for the student (optional)",
        filters=[stripped],
        validators=[Length(max=2000, message="Keep the comment to 2,000 characters.")],
    )

    def checked(self, most: float) -> float | None:
        """The points given, from 0 to `most`; None, with the reason on the field, if not."""
        words = f"Give a number of points from 0 to {in_points(most)}."
        try:
            points = number_typed(self.points.data, 0, most, words)
        except ValidationError as error:
            self.points.errors = [str(error)]
            return None
        if points is None:
            self.points.errors = [words]
        return points


@bp.get("/attempts/<token>/marks")
def marks(token):
    """The attempt's answers with the marks the key gave them, each with the form that gives
    another, and the whole score's."""
    attempt = managed_attempt(token)
    return marks_page(attempt, quiz_of(attempt))


def marks_page(attempt: Attempt, quiz: Quiz, sent: OverrideForm | None = None):
    """The marks page; with a form sent back with what is wrong with it, beside its field."""
    answers = {answer.question_id: answer for answer in attempt.answers}
    page = render_template(
        "teach/marks.html",
        attempt=attempt,
        quiz=quiz,
        state=standing(attempt, quiz),
        progress=progress(attempt, quiz),
        answers=answers,
        said={q.id: type_of(q).describe(q, answers[q.id].response)
              for q in quiz.questions if q.id in answers},  # fmt: skip
        sent=sent,
        back=back_to_table(request.args),
    )
    return page, 400 if sent else 200


def _finished(token: str) -> tuple[Attempt, Quiz]:
    """An attempt the instructor manages, finished (at its deadline, if that ended it), with
    its quiz: an attempt still being answered has no mark to override yet."""
    attempt = managed_attempt(token)
    quiz = quiz_of(attempt)
    state = standing(attempt, quiz)
    if not state.finished:
        abort(409, description="This attempt is still being answered: override its marks once "
                               "it is finished.")  # fmt: skip
    if attempt.voided_at is not None:
        abort(409, description="This attempt is voided: restore it to override its marks.")
    if attempt.finished_at is None:  # its time ran out with nobody there: finished now
        finish_attempt(attempt, state.deadline)
    return attempt, quiz


def _answer_to(attempt: Attempt, quiz: Quiz, question_id: str) -> tuple[Question, Answer, int]:
    """The question, its answer in this attempt, and its number there; 404 if unanswered."""
    for number, question in enumerate(quiz.questions, 1):
        answer = next((a for a in attempt.answers if a.question_id == question_id), None)
        if question.id == question_id and answer is not None:
            return question, answer, number
    abort(404, description="This attempt has no answer to that question.")


@bp.post("/attempts/<token>/override")
def override(token):
    """Give one answer another mark, or the attempt another score, with a comment."""
    attempt, quiz = _finished(token)
    form = OverrideForm()
    if form.question.data:
        question, answer, number = _answer_to(attempt, quiz, form.question.data)
        most = question.points
    else:
        answer, number, most = None, None, quiz.out_of
    points = form.checked(most) if form.validate() else None
    if points is None:
        return marks_page(attempt, quiz, sent=form)
    given = (points / most, form.comment.data or None)
    if answer is not None:
        was = (answer.override_mark, answer.override_comment)
        answer.override_mark, answer.override_comment = given
        said = f"question {number} marked {in_points(points)} of {in_points(most)}"
    else:
        given = (points, form.comment.data or None)
        was = (attempt.score_override, attempt.override_comment)
        attempt.score_override, attempt.override_comment = given
        said = f"score set to {in_points(points)} of {in_points(most)}"
    return _changed(attempt, token, number, was != given, said, "Saved")


@bp.post("/attempts/<token>/override/undo")
def undo_override(token):
    """Take an override off: the answer's own mark, or the answers' score, counts again."""
    attempt, quiz = _finished(token)
    question_id = OverrideForm().question.data
    if question_id:
        _, answer, number = _answer_to(attempt, quiz, question_id)
        given = answer.override_mark is not None
        answer.override_mark = answer.override_comment = None
        said = f"question {number}'s own mark restored"
    else:
        number, given = None, attempt.score_override is not None
        attempt.score_override = attempt.override_comment = None
        said = "score from its answers restored"
    return _changed(attempt, token, number, given, said, "Undone")


def _changed(attempt: Attempt, token: str, number: int | None, changed: bool, said: str,
             done: str):  # fmt: skip
    """Commit an override or its undo, where it changed anything: the score counted afresh, the
    audit log, and the LMS told of a new grade; then back to the marks page."""
    if not changed:
        db.session.rollback()
        flash("Nothing changed: that is what it was already.")
        return redirect(_back(token, number), 303)
    attempt_id, name = attempt.id, attempt.student_name
    if rescore(attempt_id):
        grade_changed(attempt_id, "overridden")
    db.session.commit()
    audit(f"attempt {attempt_id} of {name!r}: {said}")
    told = " The student reads it in their review." if done == "Saved" else ""
    flash(f"{done}: {said}.{told}")
    return redirect(_back(token, number), 303)


def _back(token: str, number: int | None) -> str:
    """The marks page, at the question changed or at the score, still leading back to the
    class page's table it came from."""
    anchor = f"mark-{number}" if number else "score"
    return url_for(".marks", token=token, _anchor=anchor, **back_to_table(request.args))
