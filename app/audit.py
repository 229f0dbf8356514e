"""The audit log: security events with who and from where, so an admin can trace them."""

import re

from flask import current_app, request
from flask_login import current_user


def _clean(part) -> str:
    # A username or path with a newline must not be able to write a fake log line.
    return re.sub(r"[\x00-\x1f\x7f]", "?", str(part))


def _path() -> str:
    """The request's path, a code in it (a personal sign-in link, a hand-over link) replaced:
    whoever reads the log must not be able to sign in with it."""
    code = (request.view_args or {}).get("code")
    return request.path.replace(code, "[code]") if isinstance(code, str) and code else request.path


def audit(event: str, username: str | None = None) -> None:
    """Log a security event in a request with who and from where."""
    who = username if username is not None else getattr(current_user, "username", "anonymous")
    current_app.logger.warning(
        "%s: user=%r ip=%s path=%s", event, _clean(who), request.remote_addr, _clean(_path())
    )


def audit_command(event: str, username: str) -> None:
    """Log an account change made from the command line, as audit() logs those made in the app."""
    current_app.logger.warning("%s: user=%r by=command line", event, username)
