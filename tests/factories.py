"""Test data made by the code users hit: accounts by create_instructor, attempts and answers by
the recording functions in app/attempts.py, so a report test reads what production writes.

Call them inside an app context.
"""

from collections.abc import Sequence

from app.attempts.service import (
    new_attempt,
    record_answer,
    record_version,
    start_attempt,
    store_answers,
)
from app.auth import create_instructor, share_class
from app.authoring import access, drafts
from app.bank import Quiz
from app.codes import new_join_code
from app.extensions import db
from app.grading import grade
from app.models import (
    Assignment,
    Attempt,
    Class,
    Instructor,
    QuizRecord,
    QuizRole,
    Role,
    RosterStudent,
    now,
)
from app.question_types import right_choice
from app.roster import add_students, read_text
from app.served import current_bank, recheck_bank
from app.teach.assignments import Settings, save_assignment

Choices = Sequence[str | None]
"""A choice id for each of a quiz's questions, in order; None leaves the question unanswered."""


def instructor(username: str = "teacher", password: str = "correct horse", *, admin=False):
    """An instructor account, made as `flask create-instructor` makes one."""
    return create_instructor(username, password, is_admin=admin)


def class_(teacher: Instructor, name: str = "Physics 101", join_code: str | None = None) -> Class:
    """A class of the instructor's, with a join code of the app's alphabet unless one is given."""
    made = Class(
        name=name,
        instructor_id=teacher.id,
        join_code=join_code or new_join_code(),
    )
    db.session.add(made)
    db.session.commit()
    return made


def assignment(class_: Class, quiz: Quiz, *, released=False, **settings) -> Assignment:
    """A quiz assigned to a class, saved as the "Assign a quiz" form saves it; settings are
    Settings' fields (dates in UTC); released as if "Release feedback" was pressed."""
    made = save_assignment(class_, quiz.slug, Settings(**settings))
    if released:
        made.feedback_released_at = now()
        db.session.commit()
    return made


def share(made: Class, teacher: Instructor, role: Role = Role.VIEW) -> None:
    """Share a class with another instructor, as "Share class" does."""
    share_class(made.id, teacher.id, role)


def written_question(number: int, prompt: str | None = None) -> dict:
    """A question as the editor writes one, every explanation and a source given."""
    return {
        "id": f"q{number}",
        "prompt": prompt or f"Question {number}: which is right?",
        "choices": [
            {"id": "a", "text": "This one", "correct": True, "explanation": "It is right."},
            {"id": "b", "text": "That one", "correct": False, "explanation": "It is wrong."},
        ],
        "explanation": f"Why question {number} goes as it does.",
        "references": [{"title": "A source", "url": "https://example.org/source"}],
    }


def owned_quiz(
    owner: Instructor, slug: str = "owners-quiz", *, questions: int = 2, published: bool = True
) -> QuizRecord:
    """An instructor's own quiz, written and published through the editor's service."""
    current_bank()  # the file's quizzes are published first, as on any running server
    draft = {"slug": slug, "title": f"Quiz {slug}", "description": "Written in the browser.",
             "questions": [written_question(n) for n in range(1, questions + 1)]}  # fmt: skip
    record = drafts.new_quiz(owner.id, draft)
    if published:
        drafts.publish(record, owner.id)
        recheck_bank()
    return record


def correct_first_key(record: QuizRecord, owner: Instructor) -> None:
    """Publish a correction of an instructor's quiz that swaps its first question's key, as
    the editor would: its right choice wrong and its wrong one right (the regrade tests)."""

    def swap(draft):
        for choice in draft["questions"][0]["choices"]:
            choice["correct"] = not choice["correct"]

    drafts.save(record, swap, owner.id)
    drafts.publish(record, owner.id)
    recheck_bank()


def share_quiz(record: QuizRecord, teacher: Instructor, role: QuizRole = QuizRole.USE) -> None:
    """Share a quiz with another instructor, as the quiz's Share page does."""
    access.share_quiz(record.id, teacher.id, role)


def attempt(
    quiz: Quiz,
    name: str = "Ada",
    *,
    answers: Choices = (),
    class_id=None,
    browser="factory",
    assignment: Assignment | None = None,
) -> Attempt:
    """An attempt started and answered one answer at a time, as the student pages do; under an
    assignment it takes a seat as they do, or raises NoAttemptsLeft."""
    started = start_attempt(quiz, name, browser, class_id, assignment=assignment)
    for question, choice in zip(quiz.questions, answers, strict=False):
        if choice is not None:
            record_answer(started, grade(question, choice))
    return started


def roster(class_id: int, pasted: str) -> list[RosterStudent]:
    """Students added to a class's roster, as "Add students" adds a pasted list."""
    return add_students(class_id, read_text(pasted))


def attempts(
    quiz: Quiz,
    answers: Sequence[Choices],
    *,
    names: Sequence[str],
    class_id=None,
    browser="seed",
    roster_students: Sequence[RosterStudent] | None = None,
) -> list[int]:
    """Many answered attempts in one transaction, through the same statements as attempt();
    returns their ids in order. Roster students, if given, take one attempt each, by name."""
    version = record_version(quiz)
    signed_in = roster_students or [None] * len(names)
    made = [
        new_attempt(quiz, version, name, browser, class_id, roster_student=student)
        for name, student in zip(names, signed_in, strict=True)
    ]
    db.session.add_all(made)
    db.session.flush()
    moment = now()
    answered = [
        (started.id, grade(question, choice), moment)
        for started, choices in zip(made, answers, strict=True)
        for question, choice in zip(quiz.questions, choices, strict=False)
        if choice is not None
    ]
    if answered:  # SQLAlchemy deprecates executing a statement with an empty list of rows
        store_answers(db.session.connection(), answered, len(quiz.questions))
    ids = [started.id for started in made]
    db.session.commit()
    return ids


def right_or_wrong(quiz: Quiz, marks: Sequence[bool | int | None]) -> list[str | None]:
    """Choices that get the questions marked true right and the others wrong (its first wrong
    choice); None stays unanswered."""
    return [
        None
        if mark is None
        else (
            right_choice(question) if mark else next(c for c in question.choices if not c.correct)
        ).id
        for question, mark in zip(quiz.questions, marks, strict=True)
    ]
