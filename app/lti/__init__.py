"""LTI 1.3: Quizwright as a tool that learning platforms (Moodle, Canvas, Blackboard,
Brightspace) launch. The rest of the app knows nothing of LTI: this package plugs into it through
app/signals.py, and the LTI library (pylti1p3) is imported only inside this package, so it can be
replaced in one place.

The LTI library and what it brings (requests, PyJWT, jwcrypto with cryptography: 14.5 MB in
each worker) load with a worker's first launch, registration, roster load or key set served, and
in the grade sender: launch.py, config.py and sending.py import them, and the modules loaded at
start import those three, or the libraries, only inside the functions that need them. A worker
that serves students and instructors, none from an LMS, never loads them (tests/test_cli.py)."""

from flask import Flask

from .. import signals

# models: its tables join the metadata; registration, roster and views: their routes join bp.
from . import models, registration, roster, views  # noqa: F401
from .blueprint import bp
from .commands import lti_cli
from .grades import record_grade
from .people import carry_launch


def init_app(app: Flask) -> None:
    """Add the LTI addresses, the admin's LTI page, the `flask lti` commands and the framing
    policy that lets registered platforms show LTI pages."""
    app.register_blueprint(bp)
    app.cli.add_command(lti_cli)
    signals.grade_changed.connect(record_grade)
    signals.attempt_starting.connect(carry_launch)
    signals.class_page.connect(roster.class_panel)
    signals.response_headers.connect(views.allow_platform_frames)
