"""Teaching: an instructor's classes, the class results page, attempt reviews, CSV exports, and
quiz previews and downloads."""

from flask import Blueprint, Flask

from ..auth import no_store

bp = Blueprint("teach", __name__, url_prefix="/teach")
bp.after_request(no_store)


def init_app(app: Flask) -> None:
    """Add the instructor pages."""
    from . import assignments, manage, quizzes, roster, views  # noqa: F401 - their routes join bp

    app.register_blueprint(bp)
