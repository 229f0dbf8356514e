"""LTI 1.3: Quizwright as a tool that learning platforms (Moodle, Canvas, Blackboard,
Brightspace) launch. The rest of the app reaches LTI only through this front door, and the LTI
library (pylti1p3) is imported only inside this package, so it can be replaced in one place."""

from flask import Blueprint, Flask

from ..auth import no_store

bp = Blueprint("lti", __name__, url_prefix="/lti")
bp.after_request(no_store)


def init_app(app: Flask) -> None:
    """Add the LTI addresses, the admin's LTI page, the `flask lti` commands and the framing
    policy that lets registered platforms show LTI pages."""
    # models: its tables join the metadata; registration and views: their routes join bp.
    from ..attempts import ATTEMPT_STARTING, GRADE_CHANGED
    from . import models, registration, views  # noqa: F401
    from .commands import lti_cli
    from .grades import record_grade
    from .people import carry_launch

    app.register_blueprint(bp)
    app.cli.add_command(lti_cli)
    if record_grade not in GRADE_CHANGED:  # tests make many apps in one process
        GRADE_CHANGED.append(record_grade)
    if carry_launch not in ATTEMPT_STARTING:
        ATTEMPT_STARTING.append(carry_launch)
    # First in the list, so it runs last: after Talisman has written the page's policy.
    app.after_request_funcs.setdefault(None, []).insert(0, views.allow_platform_frames)


def lms_class(class_id: int, slug: str):
    """What the class page shows of a class made by an LMS course: whether its roster can be
    loaded, and each student's grade passback at this quiz; None for other classes (one query
    for them, two for a course's class)."""
    from .roster import lms_class

    return lms_class(class_id, slug)
