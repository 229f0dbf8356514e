"""An instructor's view of the quizzes themselves: a preview with every answer and explanation,
and downloads in the formats other systems import (app/formats)."""

from flask import Response, abort, render_template

from .. import formats, images
from ..audit import audit
from ..authoring import record_or_404
from ..bank import Quiz
from ..served import current_bank
from .blueprint import bp

MEDIA_TYPES = {
    "moodle-xml": "application/xml",
    "qti": "application/zip",
    "qti3": "application/zip",
    "gift": "text/plain",  # Flask adds "; charset=utf-8" to text types
}
"""The formats the pages offer (teach/_quizzes.html), both QTI versions since LMSs import one or
the other; Aiken, which loses every explanation, stays on the command line, where it says so."""
LABELS = {"moodle-xml": "Moodle XML", "qti": "QTI 1.2", "qti3": "QTI 3.0", "gift": "GIFT"}
"""Each offered format as the pages name it (export_labels in templates)."""
bp.add_app_template_global(LABELS, "export_labels")


def _quiz_or_404(slug: str) -> Quiz:
    """An offered quiz, or one no longer offered, that the instructor may use (app/authoring);
    to anyone else there is no quiz at this address."""
    record_or_404(slug)
    bank = current_bank()
    quiz = bank.quizzes.get(slug) or bank.retired.get(slug)
    if quiz is None:  # written, never published
        abort(404, description="This quiz is not published yet: its editor previews the draft.")
    return quiz


@bp.get("/quizzes/<slug>/preview")
def preview(slug):
    """Every question with its choices, the key and every explanation, as students see the
    feedback; no attempt is made and nothing is counted."""
    quiz = _quiz_or_404(slug)
    return render_template(
        "teach/preview.html",
        quiz=quiz,
        offered=quiz.slug in current_bank().quizzes,
    )


@bp.get("/quizzes/<slug>/download/<any('moodle-xml', qti, qti3, gift):format_name>")
def download(slug, format_name):
    """The quiz as a file another LMS imports, with every choice's feedback."""
    quiz = _quiz_or_404(slug)
    audit(f"quiz {quiz.slug} exported as {format_name}")
    name = f"{quiz.slug}.{formats.EXTENSIONS[format_name]}"
    try:
        exported = formats.export_quiz(quiz, format_name, images.kept)
    except formats.FormatError as error:
        abort(409, description=" ".join(error.errors))
    return Response(
        exported,
        mimetype=MEDIA_TYPES[format_name],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
