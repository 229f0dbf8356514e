"""Overriding: an instructor gives one answer of a finished attempt another mark, or the whole
attempt another score, with a comment its student reads in their review, and may undo it. Each
change is audit-logged, and the grade goes to the LMS again through the outbox, as a regrade's."""

from flask import abort, flash, redirect, render_template, url_for
from flask_wtf import FlaskForm
from wtforms import HiddenField, StringField, TextAreaField
from wtforms.validators import Length, ValidationError

from ..attempts.service import finish_attempt, grade_changed, progress, quiz_of, standing
from ..audit import audit
from ..authoring.forms import number_typed, stripped
from ..bank import Quiz
from ..extensions import db
from ..grading import earned, in_points
from ..models import Answer, Attempt
from ..question_types import Question, type_of
from .blueprint import bp
from .manage import managed_attempt


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


def rescore(attempt: Attempt, quiz: Quiz) -> None:
    """Set the attempt's points from its overrides and its answers' marks, uncommitted, with
    its row held against another change until the commit."""
    db.session.execute(
        db.update(Attempt).where(Attempt.id == attempt.id).values(answered=Attempt.answered)
    )
    db.session.refresh(attempt)
    worth = {question.id: question.points for question in quiz.questions}
    points = attempt.score_override
    if points is None:
        points = sum(earned(worth[a.question_id], a.mark_given, a.is_correct)
                     for a in attempt.answers if a.question_id in worth)  # fmt: skip
    attempt.points = points
    grade_changed(attempt.id, "overridden")


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
    if answer is not None:
        answer.override_mark, answer.override_comment = points / most, form.comment.data or None
        said = f"question {number} marked {in_points(points)} of {in_points(most)}"
    else:
        attempt.score_override = points
        attempt.override_comment = form.comment.data or None
        said = f"score set to {in_points(points)} of {in_points(most)}"
    rescore(attempt, quiz)
    db.session.commit()
    audit(f"attempt {attempt.id} of {attempt.student_name!r}: {said}")
    flash(f"Saved: {said}. The student reads it in their review.")
    return redirect(_back(token, number), 303)


@bp.post("/attempts/<token>/override/undo")
def undo_override(token):
    """Take an override off: the answer's own mark, or the answers' score, counts again."""
    attempt, quiz = _finished(token)
    question_id = OverrideForm().question.data
    if question_id:
        _, answer, number = _answer_to(attempt, quiz, question_id)
        answer.override_mark = answer.override_comment = None
        said = f"question {number}'s own mark restored"
    else:
        number = None
        attempt.score_override = attempt.override_comment = None
        said = "score from its answers restored"
    rescore(attempt, quiz)
    db.session.commit()
    audit(f"attempt {attempt.id} of {attempt.student_name!r}: {said}")
    flash(f"Undone: {said}.")
    return redirect(_back(token, number), 303)


def _back(token: str, number: int | None) -> str:
    """The marks page, at the question changed or at the score."""
    return url_for(".marks", token=token, _anchor=f"mark-{number}" if number else "score")
