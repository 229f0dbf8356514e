"""Teaching: an instructor's classes, the class results page, attempt reviews, CSV exports, and
quiz previews and downloads."""

from flask import Flask

# Each page module adds its routes to the blueprint as it is imported.
from . import assignments, manage, quizzes, roster, views  # noqa: F401
from .blueprint import bp


def init_app(app: Flask) -> None:
    """Add the instructor pages."""
    app.register_blueprint(bp)
