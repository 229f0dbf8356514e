"""The instructor pages' blueprint, which each page module adds its routes to."""

from flask import Blueprint

from ..auth import no_store

bp = Blueprint("teach", __name__, url_prefix="/teach")
bp.after_request(no_store)
