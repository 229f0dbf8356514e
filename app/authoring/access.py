"""Who may use, edit or own a quiz: decided here, but for the query of the quizzes one may use,
which starts in a class ask too and so lives below both (auth.permissions.visible_records)."""

from flask import abort
from flask_login import current_user

from ..audit import audit
from ..auth import require_author, usable_slugs
from ..extensions import db
from ..models import Class, QuizRecord, QuizRole, QuizShare
from ..served import current_bank

_RANK = {QuizRole.USE: 1, QuizRole.EDIT: 2, QuizRole.OWN: 3}

SHARE_ROLES = {QuizRole.USE.value: "Can use", QuizRole.EDIT.value: "Can edit"}
"""What an owner may share a quiz as, in the words the pages use."""


def allows(role: QuizRole | None, need: QuizRole) -> bool:
    """Whether a role on a quiz is enough for what it is asked to do."""
    return role is not None and _RANK[role] >= _RANK[need]


def quiz_role(record: QuizRecord) -> QuizRole | None:
    """What the logged-in instructor may do with a quiz: everything as its owner or an admin,
    use a site quiz, what it was shared with them for, or nothing."""
    if not current_user.may_author:
        return None
    if current_user.is_admin:
        return QuizRole.OWN
    if record.owner_id is None:
        return QuizRole.USE
    if record.owner_id == current_user.id:
        return QuizRole.OWN
    share = db.session.get(QuizShare, (record.id, current_user.id))
    return QuizRole(share.role) if share else None


def record_or_404(slug: str, need: QuizRole = QuizRole.USE) -> tuple[QuizRecord, QuizRole]:
    """A quiz the logged-in instructor may use and, as `need` says, change, with their role;
    others get a 404, so that its existence is not given away, and a smaller share a 403."""
    require_author()
    current_bank()  # the file's quizzes have their records (auth.permissions.visible_records)
    record = db.session.scalar(db.select(QuizRecord).where(QuizRecord.slug == slug))
    role = quiz_role(record) if record is not None else None
    if role is None:
        audit("access denied")
        abort(404, description="There is no quiz of yours at this address.")
    if not allows(role, need):
        refused(record, role)
    return record, role


def refused(record: QuizRecord, role: QuizRole) -> None:
    """The 403 for a share too small for what was asked."""
    audit("access denied")
    abort(403, description=f"{record.title} is shared with you to {role.value} it, not to do this.")


def may_see_in(class_: Class | None, slug: str) -> bool:
    """Whether the logged-in instructor may see this quiz's key on a class's pages: a quiz the
    class assigns or once assigned, or one they may use. Without a class: admins, who see any.
    An attempt at another instructor's quiz in one's own class is not a way to its key."""
    if class_ is None or slug in {assignment.quiz_slug for assignment in class_.assignments}:
        return True
    return slug in usable_slugs()


def share_quiz(quiz_id: int, instructor_id: int, role: QuizRole) -> None:
    """Share a quiz with an instructor as `role`, or change what an earlier share allows."""
    db.session.merge(QuizShare(quiz_id=quiz_id, instructor_id=instructor_id, role=role.value))
    db.session.commit()
