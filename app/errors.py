"""Every error as a friendly page in the app's layout, never a traceback."""

from flask import current_app, render_template, request, url_for
from flask_wtf.csrf import CSRFError
from sqlalchemy.exc import InterfaceError, OperationalError, ProgrammingError, SQLAlchemyError
from werkzeug.exceptions import (
    BadHost,
    HTTPException,
    InternalServerError,
    SecurityError,
    ServiceUnavailable,
)

from .extensions import db
from .health import schema_behind
from .teach.views import back_to_table

# What a student needs to hear, in place of werkzeug's wording for developers.
MESSAGES = {
    400: ("Something was wrong with that request", "Go back, reload the page and try again."),
    403: ("Not yours to change", "This page belongs to someone else."),
    404: ("Page not found", "There is nothing at this address. Check the link."),
    405: ("Not allowed", "This page cannot be used that way."),
    409: ("Not possible now", "The page has changed since you opened it. Reload it and try again."),
    410: ("This link has ended", "What it led to is no longer on offer. Ask whoever gave it."),
    413: ("Too much data", "That form sent far more than any answer needs."),
    429: ("Too many tries", "Wait a minute, then try again."),
    500: ("Something went wrong on our side", "Nothing you did caused this. Try again shortly."),
    503: (
        "Quizwright is unavailable for a moment",
        "Its database cannot be reached. Your saved answers are safe; try again in a minute.",
    ),
}


def render_error(error: HTTPException):
    """Render an HTTP error with the app's wording, or the view's own explanation if it gave one."""
    code = error.code or 500
    title, message = MESSAGES.get(code, (error.name, MESSAGES[400][1]))
    # A view's own explanation wins, as does a rate limit's own message; the limiter's default
    # wording ("10 per 1 minute") is for logs.
    limit = getattr(error, "limit", None)
    own_words = code != 429 or limit is None or getattr(limit, "error_message", None)
    if error.description != type(error).description and own_words:
        message = error.description
    page = render_template("errors.html", code=code, title=title, message=message, back=_back(code))
    # What the error itself says beside its page: Retry-After (a limit, an outage), Allow (405).
    said = [(name, value) for name, value in error.get_headers() if name != "Content-Type"]
    return page, code, said


def _back(code: int) -> tuple[str, str]:
    """Where the error page's link leads: an instructor refused a change to a class they can
    see (their role, or the class archived), or a page of it asked for wrongly, goes back to
    that class, and one refused a change to an attempt (its marks while it is answered, its
    restoring with no attempt left) back to that attempt; not to the students' quizzes."""
    asked = request.view_args or {}
    if code in (400, 403, 409) and request.blueprint == "teach":
        if isinstance(asked.get("class_id"), int):
            return url_for("teach.class_page", class_id=asked["class_id"]), "Back to the class"
        # Not from the review itself, which would lead back to its own refusal.
        if "token" in asked and request.endpoint != "teach.attempt_review":
            try:
                back = back_to_table(request.args)
            except UnicodeDecodeError:  # the query itself was refused (guards.py)
                back = {}
            review = url_for("teach.attempt_review", token=asked["token"], **back)
            return review, "Back to the attempt"
    return url_for("quiz.index"), "Back to the quizzes"


def render_csrf_error(error: CSRFError):
    """A form whose token is missing or stale: the session expired or the page is too old."""
    message = "This form has expired. Go back, reload the page and try again."
    page = render_template(
        "errors.html", code=400, title="Form expired", message=message, back=_form_back()
    )
    return page, 400


def _form_back() -> tuple[str, str]:
    """Where an expired form's page leads: for an instructor, back to the quiz, question or
    list the form was on (the editor is where a long pause ends a session), else as any 400."""
    asked = request.view_args or {}
    if request.blueprint == "authoring":
        if asked.get("question_id"):
            question = {name: asked[name] for name in ("slug", "question_id")}
            return url_for("authoring.question", **question), "Back to the question"
        if "slug" in asked:
            return url_for("authoring.edit", slug=asked["slug"]), "Back to the quiz"
        return url_for("authoring.quizzes"), "Back to your quizzes"
    if request.blueprint == "teach" and not asked:
        return url_for("teach.dashboard"), "Back to your classes"
    return _back(400)


def render_crash(error: InternalServerError):
    """Undo any half-made change, then apologise; Flask has already logged the traceback."""
    db.session.rollback()
    return render_error(error)


def render_outage(error: SQLAlchemyError):
    """The database went away, or its schema is behind the code (a restored old dump, an
    upgrade not yet migrated): say so with a 503 that proxies and monitors understand."""
    db.session.rollback()
    behind = schema_behind() if _names_what_the_schema_lacks(error) else None
    if behind:
        current_app.logger.error("schema behind the code: %s", behind)
        return render_error(ServiceUnavailable(description=UPGRADING, retry_after=120))
    if isinstance(error, ProgrammingError):  # a bug in a query, not an outage
        current_app.logger.error("database error", exc_info=error)
        return render_crash(InternalServerError())
    current_app.logger.error("database unavailable: %s", error.__class__.__name__)
    return render_error(ServiceUnavailable(retry_after=30))


UPGRADING = ("Quizwright is being upgraded: its database is being brought up to date. Your saved "
             "answers are safe; try again in a few minutes.")  # fmt: skip


MISSING = ("42703", "42P01")
"""PostgreSQL's SQLSTATEs for an undefined column and an undefined table."""


def _names_what_the_schema_lacks(error: SQLAlchemyError) -> bool:
    """The database answered that a column or table is missing: only then is the schema worth
    asking about (an outage is not, and a probe would keep a read-only connection pooled)."""
    cause = getattr(error, "orig", None)
    if getattr(cause, "sqlstate", None) in MISSING:
        return True
    return str(cause).startswith(("no such column", "no such table"))


def refuse_host(error: SecurityError | BadHost):
    """A Host header not in TRUSTED_HOSTS, or no valid host name at all (a label over 63
    characters): no link can be built for it, so no page in the layout either."""
    return "This server does not answer for that host name.\n", 400, {"Content-Type": "text/plain"}


def init_app(app):
    app.register_error_handler(CSRFError, render_csrf_error)
    app.register_error_handler(HTTPException, render_error)
    app.register_error_handler(SecurityError, refuse_host)
    app.register_error_handler(BadHost, refuse_host)
    app.register_error_handler(InternalServerError, render_crash)
    # Lost or refused connections; integrity errors are bugs, not outages, and stay 500s.
    app.register_error_handler(OperationalError, render_outage)
    app.register_error_handler(InterfaceError, render_outage)
    # A column or table the code expects and the database lacks: a schema behind the code.
    app.register_error_handler(ProgrammingError, render_outage)
