"""Who launched and in which course, as Quizwright records it: the platform's user, the linked
instructor account, the course's class and the learner's attempt. Each is made on first launch;
two first launches at once meet a unique constraint and the loser reads the winner's row."""

import hashlib

from ..bank import Quiz
from ..codes import JOIN_TRIES, SIGN_IN_TRIES, new_join_code, new_sign_in_code
from ..extensions import db
from ..models import Attempt, Class, Instructor, QuizVersion, RosterStudent
from ..names import student_key
from ..races import commit_first_free, insert_or_get
from .models import LtiAttempt, LtiCourse, LtiLearner, LtiPlatform, LtiUser
from .platforms import find_platform

UNUSABLE_PASSWORD = "!lti"
"""No hash werkzeug can match: a linked account is entered only by a launch."""
CLASS_NAME_LENGTH = 100


def platform_of(claims: dict) -> LtiPlatform:
    """The registered platform a validated launch came from."""
    audience = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    return find_platform(claims["iss"], claims.get("azp") or audience[0])


def user_for(platform: LtiPlatform, sub: str, name: str) -> LtiUser:
    """The platform's user `sub`, made on first launch; their name follows the platform's."""
    find = db.select(LtiUser).filter_by(platform_id=platform.id, sub=sub)
    user = db.session.scalar(find)
    if user is None:
        user = insert_or_get(
            LtiUser(platform_id=platform.id, sub=sub, name=name),
            lambda: db.session.scalars(find).one(),
        )
    if user.name != name:
        user.name = name
        db.session.commit()
    return user


def linked_username(issuer: str, client_id: str, sub: str) -> str:
    """A username no person would type, stable for one platform user: `lti-` and a hash."""
    # The client id too: each registration vouches only for its own users, and another
    # registration of the same issuer must not reach this one's accounts by sending their sub.
    return "lti-" + hashlib.sha256(f"{issuer}\n{client_id}\n{sub}".encode()).hexdigest()[:40]


def instructor_for(user: LtiUser) -> Instructor:
    """The instructor account linked to a teaching platform user, made on first launch."""
    if user.instructor_id is not None:
        return db.session.get(Instructor, user.instructor_id)
    username = linked_username(user.platform.issuer, user.platform.client_id, user.sub)
    find = db.select(Instructor).filter_by(username=username)
    account = db.session.scalar(find) or insert_or_get(
        Instructor(username=username, password_hash=UNUSABLE_PASSWORD, course_only=True),
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


def course_class(platform: LtiPlatform, deployment_id: str, context_id: str) -> Class | None:
    """The class of a course of one of the platform's deployments, if an instructor has
    launched in it."""
    in_course = (
        LtiCourse.platform_id == platform.id,
        LtiCourse.context_id == context_id,
    )
    find = (
        db.select(Class)
        .join(LtiCourse, LtiCourse.class_id == Class.id)
        .where(*in_course, LtiCourse.deployment_id == deployment_id)
    )
    found = db.session.scalar(find)
    if found is None:
        # A course stored before deployments were recorded belongs to the first that claims it.
        claimed = db.session.execute(
            db.update(LtiCourse)
            .where(*in_course, LtiCourse.deployment_id.is_(None))
            .values(deployment_id=deployment_id)
        )
        db.session.commit()
        if claimed.rowcount:
            found = db.session.scalar(find)
    return found


def open_course(platform: LtiPlatform, deployment_id: str, context: dict, owner: Instructor):
    """The course's class, made on its first instructor launch, owned by that instructor and
    named by the course's title; the class and its link are stored together or not at all."""
    found = course_class(platform, deployment_id, context["id"])
    if found is not None:
        return found
    title = " ".join((context.get("title") or context.get("label") or "").split())
    title = title or f"Course {context['id']}"

    def draw() -> Class:
        made = Class(
            name=title[:CLASS_NAME_LENGTH], instructor_id=owner.id, join_code=new_join_code()
        )
        db.session.add(made)
        db.session.flush()
        db.session.add(
            LtiCourse(
                platform_id=platform.id,
                deployment_id=deployment_id,
                context_id=context["id"],
                class_id=made.id,
            )
        )
        return made

    def winner() -> Class | None:  # another instructor's first launch stored theirs
        return course_class(platform, deployment_id, context["id"])

    return commit_first_free(draw, JOIN_TRIES, "join code", winner)


def _learner_in(user: LtiUser, class_id: int) -> RosterStudent | None:
    return db.session.scalar(
        db.select(RosterStudent)
        .join(LtiLearner, LtiLearner.roster_student_id == RosterStudent.id)
        .where(LtiLearner.user_id == user.id, LtiLearner.class_id == class_id)
    )


def roster_student_for(user: LtiUser, class_id: int) -> RosterStudent:
    """The platform user's place on the class's roster, made on their first launch (or the
    first roster load) under the platform's name, which it keeps following. Their student
    number is the platform's user id: two learners sharing a name stay two students."""
    student = _learner_in(user, class_id)
    if student is None:
        number = user.sub
        typed = db.select(RosterStudent.id).filter_by(class_id=class_id, student_number=number)
        if db.session.scalar(typed) is not None:
            # An instructor typed this number for someone: never hand their record to this user.
            number = f"lti:{user.sub}"

        def draw() -> RosterStudent:
            made = RosterStudent(
                class_id=class_id,
                name=user.name,
                student_number=number,
                sign_in_code=new_sign_in_code(),
            )
            db.session.add(made)
            db.session.flush()
            db.session.add(
                LtiLearner(roster_student_id=made.id, user_id=user.id, class_id=class_id)
            )
            return made

        # A concurrent launch may have put them on the roster first.
        student = commit_first_free(
            draw, SIGN_IN_TRIES, "sign-in code", lambda: _learner_in(user, class_id)
        )
    if student.name != user.name:
        student.name, student.name_key = user.name, student_key(user.name)
        db.session.commit()
    return student


def unfinished_attempt(user: LtiUser, quiz: Quiz, class_id: int, link: str) -> Attempt | None:
    """The learner's attempt from this resource link at this version of the quiz, if it is
    neither finished nor voided."""
    attempt = db.session.scalar(
        db.select(Attempt)
        .join(LtiAttempt, LtiAttempt.attempt_id == Attempt.id)
        .where(
            LtiAttempt.user_id == user.id,
            LtiAttempt.resource_link_id == link,
            Attempt.class_id == class_id,
            (Attempt.answered < quiz.asked) | Attempt.moves_freely,
            Attempt.finished_at.is_(None),
            Attempt.voided_at.is_(None),
        )
        .order_by(Attempt.started_at.desc())
        .limit(1)
    )
    if attempt is not None and attempt.quiz_version.digest == quiz.version:
        return attempt
    return None


def launched_from(user_id: int, link: str, line_item_url: str | None):
    """What start_attempt adds with a launched attempt: the launch it came from."""

    def record(attempt: Attempt) -> None:
        db.session.add(
            LtiAttempt(
                attempt=attempt,
                user_id=user_id,
                resource_link_id=link,
                line_item_url=line_item_url,
            )
        )

    return record


def carry_launch(_sender, *, attempt: Attempt) -> None:
    """Tie a launched student's new attempt that came by another way (a retake, their roster
    code) to their latest launch of the same quiz in its class, so that its grade reaches the
    LMS gradebook too."""
    if attempt.roster_student is None or attempt.class_id is None:
        return
    # Not flushed by this lookup: the attempt's seat meets its constraint at the commit.
    with db.session.no_autoflush:
        latest = _latest_launch(attempt)
    if latest is not None:
        launched_from(latest.user_id, latest.resource_link_id, latest.line_item_url)(attempt)


def _latest_launch(attempt: Attempt) -> LtiAttempt | None:
    return db.session.scalars(
        db.select(LtiAttempt)
        .join(Attempt, Attempt.id == LtiAttempt.attempt_id)
        .join(QuizVersion, QuizVersion.id == Attempt.quiz_version_id)
        .where(
            Attempt.roster_student_id == attempt.roster_student.id,
            Attempt.class_id == attempt.class_id,
            QuizVersion.slug == attempt.quiz_version.slug,
        )
        .order_by(Attempt.started_at.desc(), Attempt.id.desc())
        .limit(1)
    ).first()


def remember_members_url(class_: Class, url: str | None) -> None:
    """Keep where the course's members are listed, as the latest launch offering it says."""
    if not url:
        return
    db.session.execute(
        db.update(LtiCourse)
        .where(
            LtiCourse.class_id == class_.id,
            LtiCourse.memberships_url.is_distinct_from(url),
        )
        .values(memberships_url=url)
    )
    db.session.commit()
