"""Input no view should ever see, turned away before any query is built from it."""

import re

from flask import abort, request
from werkzeug.exceptions import BadHost
from werkzeug.routing import IntegerConverter

LARGEST_ID = 2**31 - 1
"""PostgreSQL's integer; SQLite's is larger, so ids never come near it there either."""

# A host name (labels of letters, digits and hyphens) or a bracketed IPv6 address, and a port:
# join links and QR codes are built from it, so "a b" or "evil.com/x?" must never reach them.
HOST = re.compile(r"([A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63})*\.?|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?")


class IdConverter(IntegerConverter):
    """<int:...> in addresses, up to LARGEST_ID: a longer number is a 404, not an overflow."""

    def __init__(self, map, *args, **kwargs):
        kwargs.setdefault("max", LARGEST_ID)
        super().__init__(map, *args, **kwargs)


def refuse_bad_text():
    """Refuse text no view can use: NUL, which PostgreSQL text cannot hold (the query fails) and
    no address, name or code has, in the path (404), the query string or a form (400); and a
    query string of raw bytes that are not UTF-8, on which werkzeug's request.args raises
    (gunicorn refuses those itself; other WSGI servers pass them on)."""
    if not HOST.fullmatch(request.host):
        raise BadHost()
    if "\x00" in request.path:
        abort(404)
    try:
        fields = [*request.args.items(multi=True), *request.form.items(multi=True)]
    except UnicodeDecodeError:
        abort(400, description="The address is not valid text. Check the link.")
    if any("\x00" in value for _, value in fields):
        abort(400, description="The form held a NUL character, which no answer can contain.")


def init_app(app):
    """Before the blueprints: their rules are built with the converters in place then."""
    app.url_map.converters["int"] = IdConverter
    app.before_request(refuse_bad_text)
