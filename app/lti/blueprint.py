"""The LTI addresses' blueprint, which the launch, registration and roster pages add to."""

from flask import Blueprint

from ..auth import no_store

bp = Blueprint("lti", __name__, url_prefix="/lti")
bp.after_request(no_store)
