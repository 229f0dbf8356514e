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
ADDRESS = re.compile(r"/images/(?P<digest>[0-9a-f]{64})-(?P<width>[1-9][0-9]{0,3})x"
                     r"(?P<height>[1-9][0-9]{0,3})"
                     r"\.(?P<kind>png|jpeg|gif|webp)")  # fmt: skip
"""A picture's address as quiz text names it; nothing else may be an image's source."""
WIDEST = 1408
"""The widest a picture is kept: a page's column (44rem) on a screen of two pixels a point;
a wider one is scaled down when it is kept, so a phone never loads pixels it cannot show."""
ENCODING = {"png": {"optimize": True}, "jpeg": {"quality": 85}, "webp": {"quality": 85}}
"""How a scaled or cleaned picture is written again, in its own kind."""
CAMERA_NOTES = ("exif", "xmp", "XML:com.adobe.xmp", "comment")
"""What a picture file may carry besides its pixels that students must not be handed: a
phone photo's place and time, the author's software and name."""
YEAR = 365 * 24 * 3600


class NotAPicture(ValueError):
    """An upload that is not a picture the app shows; the message says why, for its field."""


def read(data: bytes) -> tuple[str, int, int]:
    """The kind and size of a picture's bytes; NotAPicture when they are not one we show."""
    from PIL import Image as Pillow  # on upload only: a worker serving students never needs it

    if len(data) > MOST_BYTES:
        raise NotAPicture(f"The picture is over {MOST_BYTES:,} bytes: make it smaller.")
    if b"<svg" in data[:1024]:
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


def needs_rewriting(data: bytes) -> bool:
    """Whether keeping a picture means decoding it: wider than a page shows it, or carrying
    what a phone's camera writes in (where it was taken, which way up it was held)."""
    from PIL import Image as Pillow

    with Pillow.open(io.BytesIO(data)) as picture:
        if picture.format == "GIF":  # scaling an animated GIF would stop it; GIF holds no EXIF
            return False
        return picture.width > WIDEST or any(key in picture.info for key in CAMERA_NOTES)


def prepared(data: bytes) -> tuple[str, bytes]:
    """A picture as it is kept, and the address it is shown from: turned the way its camera
    said, without what the camera wrote in, and no wider than a page shows it; NotAPicture
    when the bytes are not a picture we show."""
    kind, width, height = read(data)
    if needs_rewriting(data):
        from PIL import Image as Pillow
        from PIL import ImageOps

        try:
            with Pillow.open(io.BytesIO(data)) as picture:
                upright = ImageOps.exif_transpose(picture)
                if upright.width > WIDEST:
                    high = max(1, round(upright.height * WIDEST / upright.width))
                    upright = upright.resize((WIDEST, high), Pillow.Resampling.LANCZOS)
                written = io.BytesIO()
                colours = {"icc_profile": picture.info["icc_profile"]} if (
                    "icc_profile" in picture.info) else {}  # fmt: skip
                upright.save(written, picture.format, **ENCODING[kind], **colours)
        # verify() read only the header: the pixels themselves may be damaged.
        except Exception as error:
            raise NotAPicture("This picture is damaged: save it again and upload that.") from error
        if len(written.getvalue()) > MOST_BYTES:
            raise NotAPicture(f"The picture is over {MOST_BYTES:,} bytes once scaled to "
                              f"{WIDEST} pixels wide: make it smaller.")  # fmt: skip
        data, (width, height) = written.getvalue(), upright.size
    return f"/images/{hashlib.sha256(data).hexdigest()}-{width}x{height}.{kind}", data


def store(data: bytes) -> str:
    """Keep a picture (once, however often it is uploaded) and give its address; NotAPicture
    for any other file."""
    address, data = prepared(data)
    keep(address, data)
    return address


def keep(address: str, data: bytes) -> None:
    """Keep a prepared picture at its address, once however often it comes."""
    named = ADDRESS.fullmatch(address)
    insert_or_get(Image(digest=named["digest"], kind=named["kind"], width=int(named["width"]),
                        height=int(named["height"]), data=data))  # fmt: skip


def markdown(address: str, alt: str) -> str:
    """The Markdown that shows a picture with what it shows said in words."""
    words = re.sub(r"([\\`*_\[\]<&])", r"\\\1", alt)  # read as written, not as Markdown
    return f"![{words}]({address})"


def kept(address: str) -> bytes | None:
    """The bytes of the picture kept at this address, or None."""
    found = ADDRESS.fullmatch(address)
    image = found and db.session.get(Image, found["digest"], options=[undefer(Image.data)])
    # One address a picture: its own kind and size, as the text that shows it names them.
    if not image or (image.kind, image.width, image.height) != (
        found["kind"], int(found["width"]), int(found["height"])
    ):
        return None
    return image.data


@bp.get("/images/<name>")
def picture(name):
    """A picture quiz text shows, cached for a year: its address changes with its bytes."""
    data = kept(f"/images/{name}")
    if data is None:
        abort(404)
    response = Response(data, mimetype=f"image/{name.rsplit('.', 1)[1]}")
    response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
    return response


def init_app(app):
    app.register_blueprint(bp)
