"""Fixtures in the flaskr style: a fresh app and database per test, and a student's browser."""

import pytest

from app.bank import current_bank
from app.extensions import db
from helpers import SLUG, Student, make_app


@pytest.fixture
def app(tmp_path):
    app = make_app(tmp_path)
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def quiz(app):
    """The Gradient Checkpointing Quiz as the app serves it."""
    with app.app_context():
        return current_bank().quizzes[SLUG]


@pytest.fixture
def student(client):
    return Student(client)
