"""Teaching: an instructor's classes, the class results page, attempt reviews and CSV exports."""

from flask import Blueprint, Flask

from ..auth import no_store

bp = Blueprint("teach", __name__, url_prefix="/teach")
bp.after_request(no_store)


def init_app(app: Flask) -> None:
    """Add the instructor pages."""
    from . import roster, views  # noqa: F401 - their routes join bp

    app.register_blueprint(bp)
