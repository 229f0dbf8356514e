"""Quizzes that instructors own: written, published, shared and copied in the browser. Who may
see a quiz's key is decided in access.py; the rest of the app reaches it through this door."""

from flask import Flask

from . import imports, views  # noqa: F401  (each adds its routes to the blueprint)
from .access import may_see_in, record_or_404, usable_slugs
from .blueprint import bp

__all__ = ["init_app", "may_see_in", "record_or_404", "usable_slugs"]


def init_app(app: Flask) -> None:
    """Add the quiz editor's pages."""
    app.register_blueprint(bp)
