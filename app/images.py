"""Pictures in quiz text: checked by Pillow when uploaded, kept in the database by their
content's digest, and served from the app's own address with long caching, never from another
site. Quiz text names one as Markdown, `![what it shows](/images/DIGEST-WxH.png)`: the size in
the address lets a page reserve the picture's room before it loads."""

import hashlib
import io
import re
import warnings

from flask import Blueprint, Response, abort
from sqlalchemy.orm import undefer

from .extensions import db
from .models import Image
from .races import insert_or_get

bp = Blueprint("images", __name__)

MOST_BYTES = 2_000_000
"""The largest picture a question may show: a phone on a school's network loads it in time."""
MOST_PIXELS = 4096
"""The longest side a picture may have: wider than any page shows it."""
KINDS = {"PNG": "png", "JPEG": "jpeg", "GIF": "gif", "WEBP": "webp"}
"""What Pillow finds in the file, and the kind it is kept and served as."""
ADDRESS = re.compile(r"/images/(?P<digest>[0-9a-f]{64})-(?P<width>\d{1,4})x(?P<height>\d{1,4})"
                     r"\.(?P<kind>png|jpeg|gif|webp)")  # fmt: skip
"""A picture's address as quiz text names it; nothing else may be an image's source."""
YEAR = 365 * 24 * 3600


class NotAPicture(ValueError):
    """An upload that is not a picture the app shows; the message says why, for its field."""


def read(data: bytes) -> tuple[str, int, int]:
    """The kind and size of a picture's bytes; NotAPicture when they are not one we show."""
    from PIL import Image as Pillow  # on upload only: a worker serving students never needs it

    if len(data) > MOST_BYTES:
        raise NotAPicture(f"The picture is over {MOST_BYTES:,} bytes: make it smaller.")
    if data.lstrip()[:5] in (b"<?xml", b"<svg ") or b"<svg" in data[:1024]:
        raise NotAPicture("SVG pictures are not taken (they can hold scripts): use PNG instead.")
    try:
        with warnings.catch_warnings():
            # A header claiming millions of pixels is refused, not decoded.
            warnings.simplefilter("error", Pillow.DecompressionBombWarning)
            with Pillow.open(io.BytesIO(data)) as picture:
                kind, (width, height) = KINDS.get(picture.format or ""), picture.size
                if max(width, height) > MOST_PIXELS:
                    raise NotAPicture(f"The picture is {width}×{height} pixels; make its longest "
                                      f"side at most {MOST_PIXELS}.")  # fmt: skip
                picture.verify()  # what the format lets Pillow check without decoding it all
    except NotAPicture:
        raise
    except (Pillow.DecompressionBombWarning, Pillow.DecompressionBombError) as error:
        too_large = f"The picture is too large: at most {MOST_PIXELS} pixels a side."
        raise NotAPicture(too_large) from error
    # A damaged file fails in Pillow's parsers in many ways (struct, index, zlib): all say so.
    except Exception as error:
        raise NotAPicture("This file is not a picture: upload a PNG, JPEG, GIF or WebP.") from error
    if kind is None:
        raise NotAPicture("Upload a PNG, JPEG, GIF or WebP picture.")
    return kind, width, height


def store(data: bytes) -> Image:
    """Keep a picture (once, however often it is uploaded); NotAPicture for any other file."""
    kind, width, height = read(data)
    digest = hashlib.sha256(data).hexdigest()
    found = insert_or_get(
        Image(digest=digest, kind=kind, width=width, height=height, data=data),
        lambda: db.session.get(Image, digest),
    )
    return found


def markdown(image: Image, alt: str) -> str:
    """The Markdown that shows a picture with what it shows said in words."""
    words = alt.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"![{words}](/images/{image.digest}-{image.width}x{image.height}.{image.kind})"


@bp.get("/images/<name>")
def picture(name):
    """A picture quiz text shows, cached for a year: its address changes with its bytes."""
    found = ADDRESS.fullmatch(f"/images/{name}")
    if found is None:
        abort(404)
    image = db.session.get(Image, found["digest"], options=[undefer(Image.data)])
    # One address a picture: its own kind and size, as the text that shows it names them.
    if image is None or (image.kind, image.width, image.height) != (
        found["kind"], int(found["width"]), int(found["height"])
    ):
        abort(404)
    response = Response(image.data, mimetype=f"image/{image.kind}")
    response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
    return response


def init_app(app):
    app.register_blueprint(bp)
