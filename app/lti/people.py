"""Who launched and in which course, as Quizwright records it: the platform's user, the linked
instructor account, the course's class and the learner's attempt. Each is made on first launch;
two first launches at once meet a unique constraint and the loser reads the winner's row."""

import hashlib
import secrets

from sqlalchemy.exc import IntegrityError

from ..attempts import new_attempt, record_version
from ..bank import Quiz
from ..extensions import db
from ..models import Attempt, Class, Instructor
from ..teach.views import CODE_ALPHABET
from .config import find_platform
from .models import LtiAttempt, LtiCourse, LtiPlatform, LtiUser

UNUSABLE_PASSWORD = "!lti"
"""No hash werkzeug can match: a linked account is entered only by a launch."""
CLASS_NAME_LENGTH = 100


def platform_of(claims: dict) -> LtiPlatform:
    """The registered platform a validated launch came from."""
    audience = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    return find_platform(claims["iss"], claims.get("azp") or audience[0])


def _first_or_existing(make, find):
    """Store what `make` builds; if a concurrent launch stored it first, return theirs."""
    db.session.add(make())
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
    return find()


def user_for(platform: LtiPlatform, sub: str, name: str) -> LtiUser:
    """The platform's user `sub`, made on first launch; their name follows the platform's."""
    find = db.select(LtiUser).filter_by(platform_id=platform.id, sub=sub)
    user = db.session.scalar(find)
    if user is None:
        user = _first_or_existing(
            lambda: LtiUser(platform_id=platform.id, sub=sub, name=name),
            lambda: db.session.scalars(find).one(),
        )
    if user.name != name:
        user.name = name
        db.session.commit()
    return user


def linked_username(issuer: str, sub: str) -> str:
    """A username no person would type, stable for one platform user: `lti-` and a hash."""
    return "lti-" + hashlib.sha256(f"{issuer}\n{sub}".encode()).hexdigest()[:40]


def instructor_for(user: LtiUser) -> Instructor:
    """The instructor account linked to a teaching platform user, made on first launch."""
    if user.instructor_id is not None:
        return db.session.get(Instructor, user.instructor_id)
    username = linked_username(user.platform.issuer, user.sub)
    find = db.select(Instructor).filter_by(username=username)
    account = db.session.scalar(find) or _first_or_existing(
        lambda: Instructor(username=username, password_hash=UNUSABLE_PASSWORD),
        lambda: db.session.scalars(find).one(),
    )
    # Set only where unset: an admin may have linked the user to another account meanwhile.
    db.session.execute(
        db.update(LtiUser)
        .where(LtiUser.id == user.id, LtiUser.instructor_id.is_(None))
        .values(instructor_id=account.id)
    )
    db.session.commit()
    db.session.refresh(user)
    return db.session.get(Instructor, user.instructor_id)


def link_instructor(platform: LtiPlatform, sub: str, account: Instructor) -> LtiUser | None:
    """Have the platform user's launches log in as an existing account; None if that user has
    never launched."""
    user = db.session.scalar(db.select(LtiUser).filter_by(platform_id=platform.id, sub=sub))
    if user is not None:
        user.instructor_id = account.id
        db.session.commit()
    return user


def course_class(platform: LtiPlatform, context_id: str) -> Class | None:
    """The class of a platform's course, if an instructor has launched in it."""
    return db.session.scalar(
        db.select(Class)
        .join(LtiCourse, LtiCourse.class_id == Class.id)
        .where(LtiCourse.platform_id == platform.id, LtiCourse.context_id == context_id)
    )


def open_course(platform: LtiPlatform, context: dict, owner: Instructor) -> Class:
    """The course's class, made on its first instructor launch, owned by that instructor and
    named by the course's title; the class and its link are stored together or not at all."""
    found = course_class(platform, context["id"])
    if found is not None:
        return found
    title = " ".join((context.get("title") or context.get("label") or "").split())
    title = title or f"Course {context['id']}"
    for _ in range(10):  # a join code clash is rare (31^6 codes); its constraint catches it
        made = Class(
            name=title[:CLASS_NAME_LENGTH],
            instructor_id=owner.id,
            join_code="".join(secrets.choice(CODE_ALPHABET) for _ in range(6)),
        )
        db.session.add(made)
        db.session.flush()
        db.session.add(
            LtiCourse(platform_id=platform.id, context_id=context["id"], class_id=made.id)
        )
        try:
            db.session.commit()
            return made
        except IntegrityError:
            db.session.rollback()
            if (found := course_class(platform, context["id"])) is not None:
                return found  # another instructor's first launch won
    raise RuntimeError("no free join code after 10 tries")


def unfinished_attempt(user: LtiUser, quiz: Quiz, class_id: int, link: str) -> Attempt | None:
    """The learner's attempt from this resource link at this version of the quiz, if its
    questions are not all answered."""
    attempt = db.session.scalar(
        db.select(Attempt)
        .join(LtiAttempt, LtiAttempt.attempt_id == Attempt.id)
        .where(
            LtiAttempt.user_id == user.id,
            LtiAttempt.resource_link_id == link,
            Attempt.class_id == class_id,
            Attempt.answered < len(quiz.questions),
        )
        .order_by(Attempt.started_at.desc())
        .limit(1)
    )
    if attempt is not None and attempt.quiz_version.digest == quiz.version:
        return attempt
    return None


def start_for(user: LtiUser, quiz: Quiz, class_id: int, link: str, browser: str) -> Attempt:
    """A new attempt by the learner under the platform's name, recorded with its launch."""
    attempt = new_attempt(quiz, record_version(quiz), user.name, browser, class_id)
    db.session.add(attempt)
    db.session.flush()
    db.session.add(LtiAttempt(attempt_id=attempt.id, user_id=user.id, resource_link_id=link))
    db.session.commit()
    return attempt
