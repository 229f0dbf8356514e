"""What LTI stores: registered platforms and deployments, the tool's keys, who launched, which
course is which class, and the short-lived launch data every app server must see."""

from datetime import datetime

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..extensions import db
from ..models import Attempt, Instructor, now

URL_LENGTH = 1000
"""Platforms' addresses can carry long query strings (Brightspace, Blackboard)."""


class LtiPlatform(db.Model):
    """An LMS registered with the tool: its issuer and client id, and where to reach it."""

    __tablename__ = "lti_platforms"
    # One issuer (a Canvas cloud, a Moodle site) may register the tool several times.
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255))
    client_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(100))
    auth_login_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    auth_token_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    key_set_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    deployments: Mapped[list["LtiDeployment"]] = relationship(
        back_populates="platform",
        cascade="all, delete-orphan",
        order_by="LtiDeployment.deployment_id",
    )


class LtiDeployment(db.Model):
    """One deployment of the tool in a platform; launches name it and must match one."""

    __tablename__ = "lti_deployments"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(String(255))

    platform: Mapped[LtiPlatform] = relationship(back_populates="deployments")


class LtiToolKey(db.Model):
    """A key pair the tool signs with; published at /lti/jwks.json until its retirement."""

    __tablename__ = "lti_tool_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    # The RFC 7638 thumbprint of the public key: platforms pick the key by it.
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    private_key: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Set by a rotation to the end of the grace period: no longer signs at once, still published
    # until then, so platforms holding a cached key set keep checking what it signed.
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class LtiLaunchData(db.Model):
    """A value of the launch's own bookkeeping (nonce, state, launch, platform key set) that
    any app server may be asked for next, until it expires."""

    __tablename__ = "lti_launch_data"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[object] = mapped_column(JSON)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class LtiUser(db.Model):
    """A person as a platform knows them: its issuer's `sub`, never a typed name."""

    __tablename__ = "lti_users"
    __table_args__ = (UniqueConstraint("platform_id", "sub"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    sub: Mapped[str] = mapped_column(String(255))
    # The name the platform sent at the latest launch: what pages and reports show.
    name: Mapped[str] = mapped_column(String(80))
    # Set for someone who launched as an instructor: the account they are logged in as. Not
    # unique: an admin may link one person's users on two platforms to one account.
    instructor_id: Mapped[int | None] = mapped_column(
        ForeignKey("instructors.id", ondelete="SET NULL"), index=True
    )

    platform: Mapped[LtiPlatform] = relationship()
    instructor: Mapped[Instructor | None] = relationship()


class LtiCourse(db.Model):
    """A platform's course (its LTI context), taught in Quizwright as one class."""

    __tablename__ = "lti_courses"
    # LTI makes a context id unique only within its deployment: two deployments of one
    # platform may both send "course-42" for different courses.
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id", "context_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    # None only for a course stored before deployments were recorded, on a platform with
    # several: its next launch names the deployment it belongs to.
    deployment_id: Mapped[str | None] = mapped_column(String(255))
    context_id: Mapped[str] = mapped_column(String(255))
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), unique=True)
    # Names and Role Provisioning Services: where the course's members are listed, as the
    # latest launch that offered it said; None until a launch does.
    memberships_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))


class LtiLearner(db.Model):
    """A platform's learner on a course's class roster: the roster student is who takes the
    quizzes, the platform user (its `sub`) is who the LMS knows, never a typed name."""

    __tablename__ = "lti_learners"
    # One place on each class's roster per platform user.
    __table_args__ = (UniqueConstraint("user_id", "class_id"),)

    roster_student_id: Mapped[int] = mapped_column(
        ForeignKey("roster_students.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("lti_users.id", ondelete="CASCADE"))
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), index=True)

    user: Mapped[LtiUser] = relationship()


class LtiAttempt(db.Model):
    """Which launch an attempt came from: who (for the grade passback), which resource link,
    and the line item its grade goes to."""

    __tablename__ = "lti_attempts"

    attempt_id: Mapped[int] = mapped_column(
        ForeignKey("attempts.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("lti_users.id", ondelete="CASCADE"), index=True)
    resource_link_id: Mapped[str] = mapped_column(String(255))
    # The launch's Assignment and Grade Services line item; None when the platform offers none.
    line_item_url: Mapped[str | None] = mapped_column(String(URL_LENGTH))

    attempt: Mapped[Attempt] = relationship()


class LtiScore(db.Model):
    """A grade waiting to go to a platform's line item, written in the transaction that
    finished the attempt and sent later by `flask lti send-scores`: the outbox of grade
    passback, so that no request waits on a platform and a platform down loses nothing."""

    __tablename__ = "lti_scores"
    # An attempt finishes once: its grade is written once, whatever races to finish it.
    __table_args__ = (
        UniqueConstraint("attempt_id", "occasion"),
        CheckConstraint("state IN ('waiting', 'sent', 'failed')", name="known_score_state"),
        Index("ix_lti_scores_due", "state", "next_try_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"))
    # What made the grade: "finished" (the last answer, "Finish attempt" or the time running out).
    occasion: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[int] = mapped_column(ForeignKey("lti_users.id", ondelete="CASCADE"), index=True)
    line_item_url: Mapped[str] = mapped_column(String(URL_LENGTH))
    # The AGS score as posted: scoreGiven, scoreMaximum, progress, timestamp, userId.
    payload: Mapped[dict] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(8), default="waiting")
    tries: Mapped[int] = mapped_column(default=0)
    next_try_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    attempt: Mapped[Attempt] = relationship()
    user: Mapped[LtiUser] = relationship()
