"""Settings from the environment, with defaults; README lists every variable."""

import os
import secrets
from pathlib import Path

# gunicorn's master reads this module on its own as it starts (gunicorn.conf.py): the standard
# library only up here, and nothing of the app package.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
INSTANCE_PATH = PROJECT_ROOT / "instance"

# Per gunicorn worker: 2 kept open, 2 more at a pinch; its other requests wait their turn for one.
# Without Redis the rate-limit counts take as many again (app/ratelimits.py): the default worker
# per core on 8 cores then opens at most 8 x 8 = 64, under PostgreSQL's default max_connections
# of 100 (docs/deploy.md says when to raise it).
POOL_SIZE, POOL_OVERFLOW = 2, 2


class ConfigError(Exception):
    """A setting that cannot be used; the message says which and why."""


def from_environment(instance_path: str) -> dict:
    """Return the app's settings, each overridable by an environment variable."""
    database_url = database_url_from(
        os.environ.get("DATABASE_URL") or f"sqlite:///{Path(instance_path) / 'quiz.db'}"
    )
    return {
        "SECRET_KEY": os.environ.get("SECRET_KEY"),
        "SQLALCHEMY_DATABASE_URI": database_url,
        "QUESTIONS_PATH": questions_path(),
        # How stale a worker's bank may be after `flask quiz reload`: one tiny query this often.
        "BANK_CHECK_SECONDS": 2,
        # The app's own database (app/ratelimits.py): one count for every worker, kept across
        # restarts, with no server to run; Redis is lighter for a department's several servers.
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI", "database://"),
        "RATELIMIT_HEADERS_ENABLED": True,
        # One counter per key and minute: atomic in every storage, and a right password's try can
        # be given back. The price: up to twice a limit across a minute's edge.
        "RATELIMIT_STRATEGY": "fixed-window",
        # If the storage goes away, count in memory for a while rather than refuse every login.
        "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED": True,
        "TRUSTED_PROXIES": _count("TRUSTED_PROXIES"),
        "TRUSTED_HOSTS": _list("TRUSTED_HOSTS"),
        "SESSION_COOKIE_SECURE": _flag("SESSION_COOKIE_SECURE"),
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "LOG_LEVEL": _choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR")),
        # Answer forms are a few hundred bytes; anything near this limit is not a student.
        "MAX_CONTENT_LENGTH": 64 * 1024,
        # A quiz file imported in the browser is read within its request, which a worker serves
        # alone for as long as it takes; larger files go through `flask quiz import`.
        "IMPORT_BYTES": 2 * 1000 * 1000,
        # The CSRF token is bound to the session already; a time limit would only expire
        # the form of a student who thinks about a question for an hour.
        "WTF_CSRF_TIME_LIMIT": None,
        # An instructor's login ends after this many minutes without a request.
        "INSTRUCTOR_IDLE_MINUTES": _minutes("INSTRUCTOR_IDLE_MINUTES", 120),
        # werkzeug's scrypt costs about 90 ms a hash: slow for whoever guesses, and for tests,
        # which set a cheap method here so that their servers' subprocesses hash cheaply too.
        "PASSWORD_HASH_METHOD": _hash_method("PASSWORD_HASH_METHOD"),
        # Dynamic registration fetches from and posts to what the platform's link names: never
        # this machine or the private network, but for a test platform on them.
        "LTI_PRIVATE_PLATFORMS": _flag("LTI_PRIVATE_PLATFORMS"),
    }


def database_url_from(url: str) -> str:
    """Accept the postgres:// URLs hosting panels print, and use psycopg 3 for them."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def engine_options(url: str) -> dict:
    """Connection pool defaults for a database URL: checked before use, sized for workers."""
    if url.startswith("sqlite"):
        from .sqlite import CONNECT_ARGS

        return {"connect_args": CONNECT_ARGS}
    return {"pool_pre_ping": True, "pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW}


def questions_path() -> str:
    """The question bank to serve: QUESTIONS_PATH, or questions.json beside the app."""
    return os.environ.get("QUESTIONS_PATH") or str(PROJECT_ROOT / "questions.json")


def _count(name: str) -> int:
    value = os.environ.get(name, "0").strip() or "0"
    if not value.isdigit():
        raise ConfigError(f"{name} must be a whole number of proxies, not {value!r}")
    return int(value)


def _minutes(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip() or str(default)
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{name} must be a whole number of minutes, at least 1, not {value!r}")
    return int(value)


def _choice(name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().upper() or default
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed).lower()}, not {value!r}")
    return value


def _hash_method(name: str) -> str:
    method = os.environ.get(name, "").strip()
    if not method:
        return "scrypt"
    from werkzeug.security import generate_password_hash

    try:
        generate_password_hash("", method=method)
    except ValueError:
        raise ConfigError(f"{name} must be a method werkzeug hashes with, not {method!r}") from None
    return method


def _list(name: str) -> list[str] | None:
    values = [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]
    return values or None


def _flag(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value not in ("", "0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ConfigError(f"{name} must be true or false, not {value!r}")
    return value in ("1", "true", "yes", "on")


def instance_secret(instance_path: str | Path = INSTANCE_PATH) -> str:
    """Return the secret key kept in the instance folder, creating it on first use."""
    path = Path(instance_path) / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
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


if __name__ == "__main__":
    # `make run` asks for the laptop's key this way, so a first run needs no setup.
    print(instance_secret())
