"""An attempt for a page, found by its token: the student's pages and the instructor's review
both answer a 404 when there is none."""

from flask import abort

from ..models import Attempt
from .service import find_attempt


def attempt_or_404(token: str, class_rules: bool = False) -> Attempt:
    """The attempt with this token (see find_attempt), or the 404 page."""
    attempt = find_attempt(token, class_rules)
    if attempt is None:
        abort(404, description="There is no attempt at this address. Check the link.")
    return attempt
