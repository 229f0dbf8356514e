"""Writing a quiz: its draft, changed a save at a time, published as a new served version.

A draft is the quiz in the bank's JSON (questions.schema.json). Saves never overwrite one
another: each names the revision it read, and one that lost a race is applied again to the
newer draft, where a question changed by someone else since it was opened is a Conflict."""

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from ..attempts.service import record_version
from ..bank import MOST_QUESTIONS, BankError, build_quiz, problems
from ..extensions import db
from ..formats import slugify
from ..models import Assignment, Attempt, QuizRecord, QuizVersion, now
from ..releases import publish_version, release

SAVE_TRIES = 50
"""How often a save is applied again after losing a race: each loss means another save landed,
so this many editors saving at one moment all land."""


class TooMany(Exception):
    """A change would take the quiz past what the bank holds."""


class SlugTaken(Exception):
    """Another quiz has this address."""


@dataclass
class Conflict(Exception):
    """Someone else changed what this save changes since the editor opened it."""

    by: str
    theirs: dict | None
    """Their version of the part, or None when they deleted it."""


def digest(part) -> str:
    """A short fingerprint of a draft's part, carried by the form that edits it."""
    canonical = json.dumps(part, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def draft_of(record: QuizRecord) -> dict:
    """The quiz as its editors see it: the draft, or the published version when none."""
    if record.draft is not None:
        return json.loads(record.draft)
    return json.loads(record.published_version.snapshot)


def settings_of(draft: dict) -> dict:
    """The part of a draft the quiz's settings form edits."""
    return {key: value for key, value in draft.items() if key != "questions"}


def slug_free(slug: str, record: QuizRecord | None = None) -> bool:
    """Whether no other quiz has this address."""
    other = db.select(QuizRecord.id).where(QuizRecord.slug == slug)
    if record is not None:
        other = other.where(QuizRecord.id != record.id)
    return db.session.scalar(other.limit(1)) is None


def new_quiz(owner_id: int, draft: dict) -> QuizRecord:
    """A quiz of the instructor's own, unpublished, unlisted, with this draft; commits."""
    if not slug_free(draft["slug"]):
        raise SlugTaken(draft["slug"])
    record = QuizRecord(
        slug=draft["slug"],
        title=draft["title"][:200],
        owner_id=owner_id,
        draft=_dumped(draft),
        draft_saved_at=now(),
        draft_saved_by_id=owner_id,
    )
    db.session.add(record)
    try:
        db.session.commit()
    except IntegrityError:  # the same address, taken a moment before
        db.session.rollback()
        raise SlugTaken(draft["slug"]) from None
    return record


def save(record: QuizRecord, change: Callable[[dict], None], by_id: int) -> None:
    """Apply `change` to the newest draft and store it, atomically against other saves; a
    change raises Conflict or ValueError to refuse. Commits."""
    for _ in range(SAVE_TRIES):
        db.session.refresh(record)
        revision, draft = record.draft_revision, draft_of(record)
        change(draft)
        if draft.get("slug") != record.slug and not _may_move(record, draft["slug"]):
            raise SlugTaken(draft["slug"])
        stored = db.session.execute(
            update(QuizRecord)
            .where(QuizRecord.id == record.id, QuizRecord.draft_revision == revision)
            .values(
                draft=_dumped(draft),
                draft_revision=revision + 1,
                draft_saved_at=now(),
                draft_saved_by_id=by_id,
                title=draft["title"][:200],
                slug=draft["slug"],
            )
        ).rowcount
        try:
            db.session.commit()
        except IntegrityError:
            db.session.rollback()
            raise SlugTaken(draft["slug"]) from None
        if stored:
            return
    raise RuntimeError(f"quiz {record.slug}: {SAVE_TRIES} saves in a row lost their race")


def relist(record: QuizRecord) -> None:
    """Put the quiz on the home page or take it off, on every worker; commits."""
    db.session.flush()
    release()


def unplaced(problem: str, slug: str) -> str:
    """A bank problem said within the quiz's own editor: without the quiz's name."""
    for prefix in (f'quiz "{slug}", ', f'quiz "{slug}": '):
        if problem.startswith(prefix):
            return problem.removeprefix(prefix)
    return problem


def new_question_id(draft: dict, prompt: str) -> str:
    """An id for a new question, from its prompt, that no question of the draft has."""
    used = {question.get("id") for question in draft["questions"]}
    base = slugify(prompt, 40) or "q"
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def rearrange(draft: dict, question_id: str, action: str) -> None:
    """Move a question up or down, copy it just below, or delete it; KeyError if it is gone."""
    questions = draft["questions"]
    place = next((n for n, q in enumerate(questions) if q.get("id") == question_id), None)
    if place is None:
        raise KeyError(question_id)
    if action == "up" and place > 0:
        questions[place - 1], questions[place] = questions[place], questions[place - 1]
    elif action == "down" and place < len(questions) - 1:
        questions[place + 1], questions[place] = questions[place], questions[place + 1]
    elif action == "duplicate":
        if len(questions) >= MOST_QUESTIONS:
            raise TooMany(f"A quiz holds at most {MOST_QUESTIONS} questions.")
        twin = copy.deepcopy(questions[place])
        twin["id"] = new_question_id(draft, question_id + " copy")
        questions.insert(place + 1, twin)
    elif action == "delete":
        del questions[place]


def add_questions(draft: dict, questions: list[dict]) -> None:
    """Append questions, each under an id no question of the draft has yet."""
    if len(draft["questions"]) + len(questions) > MOST_QUESTIONS:
        raise TooMany(
            f"A quiz holds at most {MOST_QUESTIONS} questions; the draft has "
            f"{len(draft['questions'])}, and {len(questions)} more would pass that."
        )
    for question in copy.deepcopy(questions):
        if any(q.get("id") == question["id"] for q in draft["questions"]):
            question["id"] = new_question_id(draft, question["id"])
        draft["questions"].append(question)


def changes(versions: list[dict]) -> list[list[str]]:
    """What each version changed from the one before it (versions newest first), in words."""
    said = []
    for newer, older in zip(versions, [*versions[1:], None][: len(versions)], strict=True):
        if older is None:
            said.append(["First published."])
            continue
        before = {q["id"]: q for q in older["questions"]}
        after = {q["id"]: q for q in newer["questions"]}
        new, old = settings_of(newer), settings_of(older)
        moved = sorted(key for key in new.keys() | old.keys() if new.get(key) != old.get(key))
        words = [f"Settings changed: {', '.join(moved)}."] if moved else []
        words += [f"Added: {q['prompt'][:80]}" for i, q in after.items() if i not in before]
        words += [f"Removed: {q['prompt'][:80]}" for i, q in before.items() if i not in after]
        words += [
            f"Changed: {q['prompt'][:80]}"
            for i, q in after.items()
            if i in before and digest(before[i]) != digest(q)
        ]
        if not words and list(before) != list(after):
            words.append("Questions reordered.")
        said.append(words or ["The same as the version before."])
    return said


def _may_move(record: QuizRecord, slug: str) -> bool:
    """A quiz moves to another address only before it is first published: links and
    assignments name the published one."""
    return record.published_version_id is None and slug_free(slug, record)


def publish(record: QuizRecord, by_id: int) -> int:
    """Make the draft the version every worker serves, and commit; the new release's number.
    BankError lists every problem that keeps it from being served."""
    db.session.refresh(record)
    if record.draft is None:
        raise BankError(["Nothing to publish: the draft is the published version."])
    revision, draft = record.draft_revision, json.loads(record.draft)
    found = [
        problem.removeprefix('quiz "' + record.slug + '", ')
        for problem in problems({"quizzes": [draft]}, gaps_allowed=True)
    ]
    if found:
        raise BankError(found)
    version = record_version(build_quiz(draft))
    # Only the draft that was checked: a save in between makes this publish try again.
    taken = db.session.execute(
        update(QuizRecord)
        .where(QuizRecord.id == record.id, QuizRecord.draft_revision == revision)
        .values(draft=None, draft_revision=revision + 1)
    ).rowcount
    if not taken:
        db.session.rollback()
        raise BankError(["The draft changed while it was being published: publish it again."])
    publish_version(record, version, by_id)
    generation, _ = release()
    return generation


def discard(record: QuizRecord) -> None:
    """Go back to the published version; commits."""
    record.draft = None
    record.draft_revision += 1
    db.session.commit()


def restore(record: QuizRecord, version: QuizVersion, by_id: int) -> None:
    """Make an old published version the draft, to be published again; commits."""

    def back(draft: dict) -> None:
        draft.clear()
        draft.update(json.loads(version.snapshot))

    save(record, back, by_id)


def duplicate(record: QuizRecord, owner_id: int, with_draft: bool) -> QuizRecord:
    """A copy of the quiz, the new owner's own, under a free address: as its editors see it
    `with_draft`, else as it is published (ValueError if never)."""
    if with_draft:
        draft = copy.deepcopy(draft_of(record))
    elif record.published_version is not None:
        draft = json.loads(record.published_version.snapshot)
    else:
        raise ValueError(f"quiz {record.slug} was never published")
    base = f"{record.slug[:58]}-copy"
    slug, n = base, 2
    while not slug_free(slug):
        slug, n = f"{base}-{n}", n + 1
    draft["slug"], draft["title"] = slug, f"Copy of {draft['title']}"[:200]
    return new_quiz(owner_id, draft)


def has_history(record: QuizRecord) -> bool:
    """Whether any attempt or assignment names the quiz: then it is archived, not deleted."""
    attempted = (
        db.select(Attempt.id)
        .join(QuizVersion, QuizVersion.id == Attempt.quiz_version_id)
        .where(QuizVersion.slug == record.slug)
        .limit(1)
    )
    assigned = db.select(Assignment.id).where(Assignment.quiz_slug == record.slug).limit(1)
    return db.session.scalar(attempted) is not None or db.session.scalar(assigned) is not None


def delete(record: QuizRecord) -> bool:
    """Delete a quiz nobody took or was set, or else archive it, and commit; whether it was
    deleted. Either way it is served no more."""
    if has_history(record):
        record.archived_at = now()
        db.session.flush()
        release()
        return False
    # Its stored versions stay: old releases name them. Without a record, nothing lists them.
    db.session.delete(record)
    db.session.flush()
    release()
    return True


def _dumped(draft: dict) -> str:
    return json.dumps(draft, ensure_ascii=False, separators=(",", ":"))
