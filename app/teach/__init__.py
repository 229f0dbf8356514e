"""Teaching: an instructor's classes, the class results page, attempt reviews, CSV exports, and
quiz previews and downloads."""

from flask import Flask

# Each page module adds its routes to the blueprint as it is imported.
from . import (  # noqa: F401
    assignments,
    exceptions,
    manage,
    overrides,
    quizzes,
    regrades,
    roster,
    views,
)
from .blueprint import bp


def init_app(app: Flask) -> None:
    """Add the instructor pages; the class page says each exception in words."""
    app.register_blueprint(bp)
    app.add_template_global(exceptions.in_words, "exception_words")
