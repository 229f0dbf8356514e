"""The bank the running app serves: the newest release in the database (app/releases.py)."""

from flask import current_app

from .bank import Bank


def current_bank() -> Bank:
    """The bank this app serves now, from inside a request or an app context."""
    return current_app.extensions["quizwright.served"].bank()


def recheck_bank() -> None:
    """Serve a release made in this request from the next one on, here at once; every other
    worker takes it within BANK_CHECK_SECONDS."""
    current_app.extensions["quizwright.served"].recheck()
