"""Names and Role Provisioning Services: "Load roster from the LMS" puts a course's learners on
its class's roster, keyed by the platform's sub, so the gradebook lists those who never
launched as "Not started"; and what the class page shows of a course's class."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import flash, redirect, url_for
from flask_login import login_required

from ..audit import audit
from ..auth import class_or_404
from ..extensions import db
from ..models import Role
from .blueprint import bp
from .grades import passback
from .models import LtiCourse, LtiLearner, LtiPlatform
from .people import roster_student_for, user_for
from .rules import display_name, quizwright_role

if TYPE_CHECKING:  # loaded by the first roster load (app/lti/__init__.py)
    from pylti1p3.names_roles import NamesRolesProvisioningService


@dataclass(frozen=True)
class LmsClass:
    """A course's class as its page shows it: can its roster be loaded, and each student's
    grade passback by student key."""

    memberships_url: str | None
    passback: dict[str, str]


def class_panel(_sender, *, class_id: int, slug: str) -> LmsClass | None:
    """What the class page shows of a class made by an LMS course: whether its roster can be
    loaded, and each student's grade passback at this quiz; None for other classes (one query
    for them, two for a course's class). The class_page signal's receiver."""
    course = db.session.execute(
        db.select(LtiCourse.memberships_url).where(LtiCourse.class_id == class_id)
    ).first()
    if course is None:
        return None
    return LmsClass(course.memberships_url, passback(class_id, slug))


def learners(members: list[dict]) -> list[tuple[str, str]]:
    """The (sub, name) of each active learner among a membership list's members."""
    found = []
    for member in members:
        if member.get("status", "Active") != "Active" or not member.get("user_id"):
            continue
        if quizwright_role(member.get("roles", [])) != "learner":
            continue
        found.append((member["user_id"], display_name(member) or "Student"))
    return found


MOST_PAGES = 50
"""Pages of members one load reads: a platform that never stops paging cannot hold a worker."""


def _members(service: "NamesRolesProvisioningService", url: str) -> list[dict]:
    """The course's members, page by page, up to MOST_PAGES pages."""
    members: list[dict] = []
    for _ in range(MOST_PAGES):
        page, url = service.get_members_page(url)
        members += page
        if not url:
            break
    return members


@bp.post("/classes/<int:class_id>/load-roster")
@login_required
def load_roster(class_id):
    """Add the course's learners to the class's roster, as their first launch would."""
    class_ = class_or_404(class_id, Role.MANAGE)
    course = db.session.scalars(db.select(LtiCourse).filter_by(class_id=class_.id)).first()
    back = redirect(url_for("teach.class_page", class_id=class_.id), 303)
    if course is None or not course.memberships_url:
        flash("The LMS has not offered this course's member list: launch the activity from the "
              "course once, then try again.")  # fmt: skip
        return back
    import requests
    from pylti1p3.exception import LtiServiceException
    from pylti1p3.names_roles import NamesRolesProvisioningService

    from .sending import connector

    platform = db.session.get(LtiPlatform, course.platform_id)
    service = NamesRolesProvisioningService(
        connector(platform), {"context_memberships_url": course.memberships_url}
    )
    try:
        members = _members(service, course.memberships_url)
    except (requests.RequestException, LtiServiceException) as error:
        audit(f"lti roster load failed: class {class_.id}: {error!r}"[:500])
        flash(f"{platform.name} did not hand over the member list, so nothing changed. Try "
              "again later; if it keeps failing, check that the tool may read course "
              "memberships (Names and Role Provisioning) in the LMS.")  # fmt: skip
        return back
    before = db.session.scalar(
        db.select(db.func.count()).select_from(LtiLearner).filter_by(class_id=class_.id)
    )
    found = learners(members)
    for sub, name in found:
        roster_student_for(user_for(platform, sub, name), class_.id)
    after = db.session.scalar(
        db.select(db.func.count()).select_from(LtiLearner).filter_by(class_id=class_.id)
    )
    audit(f"lti roster loaded: class {class_.id}, {after - before} added")
    flash(f"Loaded {len(found)} learners from {platform.name}: {after - before} new on the roster.")
    return back
