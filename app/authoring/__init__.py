"""Quizzes that instructors own: written, published, shared and copied in the browser. Who may
see a quiz's key is decided in access.py; the rest of the app reaches it through this door."""

from flask import Flask

from .access import allows, quiz_role, record_or_404, usable_slugs
from .views import bp

__all__ = ["allows", "init_app", "quiz_role", "record_or_404", "usable_slugs"]


def init_app(app: Flask) -> None:
    """Add the quiz editor's pages."""
    app.register_blueprint(bp)
