"""Fixtures in the flaskr style: a fresh app and database per test, and a student's browser."""

import functools

import pytest
from werkzeug.security import generate_password_hash

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


@pytest.fixture
def quick_passwords(monkeypatch):
    """Cheap password hashes: scrypt's slowness protects real accounts and only slows tests."""
    cheap = functools.partial(generate_password_hash, method="pbkdf2:sha256:1")
    monkeypatch.setattr("app.auth.generate_password_hash", cheap)
