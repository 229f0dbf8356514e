"""Settings from the environment, with defaults."""

import os
import secrets
from datetime import timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def from_environment(instance_path: str) -> dict:
    """Return the app's settings, each overridable by an environment variable."""
    return {
        "SECRET_KEY": os.environ.get("SECRET_KEY"),
        "SQLALCHEMY_DATABASE_URI": os.environ.get("DATABASE_URL")
        or f"sqlite:///{Path(instance_path) / 'quiz.db'}",
        "QUESTIONS_PATH": questions_path(),
        # Answer forms are a few hundred bytes; anything near this limit is not a student.
        "MAX_CONTENT_LENGTH": 64 * 1024,
        # The CSRF token is bound to the session already; a time limit would only expire
        # the form of a student who thinks about a question for an hour.
        "WTF_CSRF_TIME_LIMIT": None,
        # Students come back to an unfinished attempt after closing the browser.
        "PERMANENT_SESSION_LIFETIME": timedelta(days=30),
        "SESSION_COOKIE_SAMESITE": "Lax",
    }


def questions_path() -> str:
    """The question bank to serve: QUESTIONS_PATH, or questions.json beside the app."""
    return os.environ.get("QUESTIONS_PATH") or str(PROJECT_ROOT / "questions.json")


def instance_secret(instance_path: str) -> str:
    """Return the secret key kept in the instance folder, creating it on first use."""
    path = Path(instance_path) / "secret_key"
    if not path.exists():
        draft = path.with_name(f".secret_key.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(secrets.token_hex(32))
        try:
            # A hard link never replaces: when workers start together, the first key wins.
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()
