"""The quiz editor's blueprint, which views.py and imports.py add their routes to, and what
every one of its pages shares: a logged-in author, larger forms, the quiz being edited."""

from flask import Blueprint, abort, current_app, request
from flask_login import current_user, login_required

from ..auth import no_store, require_author
from ..models import QuizRecord, QuizRole
from .access import allows, record_or_404, refused

bp = Blueprint("authoring", __name__, url_prefix="/teach/quizzes")
bp.after_request(no_store)


EDITOR_BYTES = 8 * 1000 * 1000
"""A question of 20 choices, each with 20,000 characters of text and of explanation."""


@bp.url_value_preprocessor
def allow_larger_forms(endpoint, _values):
    """Let a logged-in instructor send a whole question or quiz file, larger than other forms may
    be; this runs before anything reads the form (the NUL guard, the CSRF check)."""
    upload = current_app.config["IMPORT_BYTES"]
    limits = {
        "authoring.question": EDITOR_BYTES,
        "authoring.edit": EDITOR_BYTES,
        # Twice the limit read, so that a file somewhat over it (its pictures add up) is told so
        # beside its field, not on an error page that loses the form.
        "authoring.import_file": 2 * upload + 64 * 1024,
        "authoring.import_confirm": 2 * upload,  # the parsed quiz, signed, in a hidden field
    }
    if endpoint in limits and current_user.is_authenticated:
        request.max_content_length = request.max_form_memory_size = limits[endpoint]


@bp.before_request
@login_required
def require_login():
    """Every page here is for logged-in instructors whose account may author."""
    if not current_user.is_authenticated:  # an OPTIONS request, which Flask-Login lets by
        return
    require_author()


def editable(slug: str) -> QuizRecord:
    """A quiz the instructor may edit; a site quiz is edited in questions.json, or as a copy."""
    record, role = record_or_404(slug)
    if record.from_file:
        abort(
            409,
            description=f"{record.title} is written in questions.json on the server: "
            "edit it there, or Duplicate it to make a copy of your own.",
        )
    if record.archived_at is not None:
        abort(409, description=f"{record.title} is archived: it is kept for its attempts.")
    if not allows(role, QuizRole.EDIT):
        refused(record, role)
    return record
