"""Regrading: once a question's key or marks are corrected in a newer version of its quiz, a
class's answers given under an older version are marked again by the corrected question, after
the instructor has seen whose score changes and how. Scores, the class page, the gradebook and
the LMS follow; each review says the question was regraded and when."""

import json
from dataclasses import dataclass

from flask import abort, flash, redirect, render_template, request, url_for

from ..attempts.service import grade_changed, hold, record_version, rescore
from ..audit import audit
from ..auth import class_or_404
from ..authoring import may_see_in
from ..bank import Quiz, quiz_from_snapshot
from ..extensions import db
from ..grading import earned, grade, in_points
from ..models import Answer, Attempt, QuizVersion, Role, now
from ..question_types import Question, type_of
from ..served import current_bank
from .blueprint import bp

WORDING = ("prompt", "explanation", "references", "evidence", "feedback", "if_true", "if_false",
           "otherwise", "text")  # fmt: skip
"""What a question says rather than how it marks: a change to these needs no regrade. (A short
answer's accepted text marks, and is compared as its answers' own field.)"""


def marking(question: Question) -> str:
    """What marks a question's answers, as one comparable text: its type, key and fractions,
    tolerances and units, whatever its wording."""

    def kept(value, within: str = ""):
        if isinstance(value, dict):
            return {key: kept(item, key) for key, item in value.items()
                    if key not in WORDING or (key == "text" and within == "answers")}  # fmt: skip
        return [kept(item, within) for item in value] if isinstance(value, list) else value

    return json.dumps(kept(type_of(question).data(question)), sort_keys=True)


@dataclass(frozen=True)
class Change:
    """One answer marked again, and its attempt's score before and after."""

    answer_id: int
    was: int | None
    """The version that marked it when the change was worked out (None: its attempt's own)."""
    response: str
    """The answer as it was when the change was worked out."""
    attempt_id: int
    student: str
    mark: float
    correct: bool
    before: float
    after: float
    out_of: float
    """The most its attempt could score."""

    @property
    def before_percent(self) -> int:
        return round(100 * self.before / self.out_of) if self.out_of else 0

    @property
    def after_percent(self) -> int:
        return round(100 * self.after / self.out_of) if self.out_of else 0


@dataclass(frozen=True)
class Corrected:
    """A question of the quiz whose marking changed since answers were given to it in a class,
    and what marking those answers again would change; or why they cannot be."""

    number: int
    question: Question
    answers: int
    marked: list[Change]
    """Every answer marked again, its score changed or not: its review shows the new key."""
    refused: str | None

    @property
    def changes(self) -> list[Change]:
        """The answers whose attempt's score a regrade changes."""
        return [change for change in self.marked if change.after != change.before]


def corrections(class_id: int, quiz: Quiz) -> list[Corrected]:
    """Each question of the current version whose marking differs from the version some of the
    class's answers to it were given under, with the scores a regrade would change."""
    # Voided attempts count for nothing: one restored later is listed then.
    rows = db.session.execute(
        db.select(Answer, Attempt.id, Attempt.student_name, Attempt.points, QuizVersion,
                  Attempt.score_override.is_not(None))  # fmt: skip
        .join(Attempt, Attempt.id == Answer.attempt_id)
        .join(QuizVersion, QuizVersion.id == Attempt.quiz_version_id)
        .where(Attempt.class_id == class_id, QuizVersion.slug == quiz.slug,
               Attempt.voided_at.is_(None))  # fmt: skip
        .order_by(Attempt.started_at, Attempt.id)
    ).all()
    olds: dict[int, Quiz] = {}
    by_question: dict[str, list] = {}
    for answer, attempt_id, name, points, version, score_set in rows:
        # Marked by the version that regraded it, if any: a key changed back is regraded back.
        if answer.regraded_version_id is not None:
            version = db.session.get(QuizVersion, answer.regraded_version_id)
        if version.digest == quiz.version:
            continue
        old = olds.setdefault(version.id, quiz_from_snapshot(version.snapshot))
        by_question.setdefault(answer.question_id, []).append(
            (answer, attempt_id, name, points, score_set, old)
        )
    found = []
    for number, question in enumerate(quiz.questions, 1):
        given = [row for row in by_question.get(question.id, [])
                 if marking(_question(row[-1], question.id)) != marking(question)]  # fmt: skip
        if given:
            found.append(_corrected(number, question, given))
    return found


def _question(quiz: Quiz, question_id: str) -> Question:
    return next(q for q in quiz.questions if q.id == question_id)


def _corrected(number: int, question: Question, given: list) -> Corrected:
    """What marking these answers by the corrected question would change."""
    refused = None
    for *_, old in given:
        before = _question(old, question.id)
        if before.type != question.type:
            refused = f"It is {question.type.replace('_', ' ')} now, not {before.type}."
        elif before.points != question.points:
            refused = (f"Its points changed from {in_points(before.points)} to "
                       f"{in_points(question.points)}: a regrade marks answers again, it does "
                       "not weigh the quiz again.")  # fmt: skip
        elif {c.id for c in before.choices} != {c.id for c in question.choices}:
            refused = "Its choices changed: an answer given to the old ones means nothing now."
    changes = []
    for answer, attempt_id, name, points, score_set, old_quiz in given:
        feedback = grade(question, answer.response)
        mark = feedback.mark if feedback else 0.0
        old = earned(question.points, answer.mark, answer.is_correct)
        new = earned(question.points, mark, mark >= 1)
        if score_set or answer.override_mark is not None:
            new = old  # an instructor's override stands: the score it gave does not move
        changes.append(Change(
            answer.id, answer.regraded_version_id, answer.response, attempt_id, name, mark,
            mark >= 1, points, points - old + new, old_quiz.out_of,
        ))  # fmt: skip
    return Corrected(number, question, len(given), changes, refused)


def regrade(class_id: int, quiz: Quiz, question_id: str) -> list[Change]:
    """Mark the class's answers to one question again by its corrected version, in one
    transaction: each answer once, however many regrades race, and only as it was read (a
    student still changing answers may have changed it since); its attempt's score counted
    afresh, and its grade sent to the LMS again where that changed it."""
    found = next((c for c in corrections(class_id, quiz) if c.question.id == question_id), None)
    if found is None or found.refused:
        return []
    version, moment, done = record_version(quiz), now(), []
    for change in found.marked:
        # Only as it was read, under its attempt's hold: another regrade since (this one again,
        # in another tab, or another version's) or the student's own change leaves it.
        hold(change.attempt_id)
        marked = db.session.execute(
            db.update(Answer)
            .where(Answer.id == change.answer_id,
                   Answer.regraded_version_id.is_not_distinct_from(change.was),
                   Answer.response == change.response)  # fmt: skip
            .values(mark=change.mark, is_correct=change.correct, regraded_at=moment,
                    regraded_version_id=version.id)  # fmt: skip
            .execution_options(synchronize_session=False)
        )
        if marked.rowcount != 1:  # marked or changed meanwhile
            continue
        done.append(change)
        # Counted afresh, not moved by the difference: a score set by hand stays as it is.
        if rescore(change.attempt_id):
            grade_changed(change.attempt_id, "regraded")
    db.session.commit()
    return done


@bp.route("/classes/<int:class_id>/quizzes/<slug>/regrade", methods=["GET", "POST"])
def regrade_page(class_id, slug):
    """The questions whose key was corrected since the class answered them, whose scores a
    regrade changes, before and after; and the button that does it, per question."""
    class_ = class_or_404(class_id, Role.MANAGE)
    quiz = current_bank().quizzes.get(slug)
    if quiz is None or not may_see_in(class_, slug):
        abort(404, description="There is no quiz at this address.")
    if request.method == "POST":
        question_id = request.form.get("question", "")
        done = regrade(class_.id, quiz, question_id)
        audit(f"regraded: class {class_.id}, quiz {slug}, question {question_id}, "
              f"{len(done)} answers")  # fmt: skip
        number = next((n for n, q in enumerate(quiz.questions, 1) if q.id == question_id), "?")
        moved = sum(change.after != change.before for change in done)
        flash(f"Question {number}: marked {len(done)} answer{'s' if len(done) != 1 else ''} "
              f"again; {moved} score{'s' if moved != 1 else ''} changed.")  # fmt: skip
        # Back here: another corrected question may still wait.
        return redirect(url_for(".regrade_page", class_id=class_.id, slug=slug), 303)
    return render_template(
        "teach/regrade.html", class_=class_, quiz=quiz, corrected=corrections(class_.id, quiz)
    )
