"""Who may see and change a class, and who may author quizzes."""

from flask import abort
from flask_login import current_user
from sqlalchemy.orm import joinedload

from ..audit import audit
from ..extensions import db
from ..models import Class, ClassShare, Instructor, QuizRecord, QuizShare, Role
from ..served import current_bank

_RANK = {Role.VIEW: 1, Role.MANAGE: 2, Role.OWN: 3}


def may(role: Role | None, need: Role) -> bool:
    """Whether a role in a class is enough for what it is asked to do."""
    return role is not None and _RANK[role] >= _RANK[need]


def role_in(found: Class) -> Role | None:
    """What the logged-in instructor may do with a class: everything as its owner or an admin,
    what it was shared with them for, or nothing."""
    if current_user.is_admin or found.instructor_id == current_user.id:
        return Role.OWN
    share = db.session.get(ClassShare, (found.id, current_user.id))
    return Role(share.role) if share else None


def class_or_404(class_id: int, need: Role = Role.VIEW, *, archived_ok: bool = False) -> Class:
    """A class the logged-in instructor may see and, as `need` says, change; others get a 404,
    so that a class's existence is not given away. Those it is shared with for less get a 403,
    and an archived class refuses every change but those marked `archived_ok` with a 409."""
    # Its assignments come along: every class page and export reads them for its defaults.
    found = db.session.get(Class, class_id, options=[joinedload(Class.assignments)])
    role = role_in(found) if found is not None else None
    if role is None:
        audit("access denied")
        abort(404, description="There is no class of yours at this address.")
    if not may(role, need):
        audit("access denied")
        what = "view it" if role is Role.VIEW else "view and manage it"
        abort(403, description=f"{found.name} is shared with you to {what}, not to do this.")
    if need is not Role.VIEW and found.archived_at is not None and not archived_ok:
        abort(
            409,
            description=f"{found.name} is archived, so it is read-only. "
            "Its owner can restore it to change it again.",
        )
    return found


def share_class(class_id: int, instructor_id: int, role: Role) -> None:
    """Share a class with an instructor as `role`, or change what an earlier share allows."""
    db.session.merge(ClassShare(class_id=class_id, instructor_id=instructor_id, role=role.value))
    db.session.commit()


def require_admin():
    """Refuse anyone but an admin; for pages that span every instructor."""
    if not current_user.is_admin:
        audit("access denied")
        abort(404)


def require_author():
    """Refuse an account an LMS launch made, which reaches only its courses' classes: quizzes'
    keys and new classes belong to accounts an admin made or granted, never to a role claim."""
    if not current_user.may_author:
        audit("access denied")
        abort(
            403,
            description="Your account comes from your LMS course, so it reaches that course's "
            "class only. An admin can grant it the rest (flask grant-instructor).",
        )


def _records_ready() -> None:
    """On a database nothing was published to yet, the first look at the served bank publishes
    the file's quizzes, and so makes their records: every question of who may see what waits
    for it. Later, this reads nothing."""
    current_bank()


def visible_records(instructor: Instructor | None = None):
    """A query for the quiz records an instructor (the logged-in one unless named) may use,
    with their share's role."""
    _records_ready()
    instructor = instructor or current_user
    share = (QuizShare.quiz_id == QuizRecord.id) & (QuizShare.instructor_id == instructor.id)
    query = db.select(QuizRecord, QuizShare.role).outerjoin(QuizShare, share)
    if not instructor.is_admin:
        query = query.where(
            QuizRecord.owner_id.is_(None)
            | (QuizRecord.owner_id == instructor.id)
            | QuizShare.role.is_not(None)
        )
    return query


def usable_slugs(instructor: Instructor | None = None) -> set[str]:
    """The slugs of every quiz an instructor (the logged-in one unless named) may assign; one
    query. An account an LMS made may assign the site's quizzes and those shared with it, but
    sees no key."""
    slugs = visible_records(instructor).with_only_columns(QuizRecord.slug)
    return set(db.session.scalars(slugs))
