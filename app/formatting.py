"""Template filters that say times the way a person does, and reviews rendered once."""

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from urllib.parse import unquote

from flask import g, get_template_attribute, request
from flask_login import current_user
from markupsafe import Markup, escape

from .bank import plural
from .grading import in_points
from .models import Attempt, Class
from .question_types import Question, type_of
from .question_types.short_answer import readable
from .text import explained, phrase, plain, prompt_parts, rich
from .zones import known_zones, utc, utc_to_local


def duration(delta: timedelta) -> str:
    """A time span: "1 h 4 min", "3 min 12 s", "45 s"."""
    minutes, seconds = divmod(round(delta.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


ZONE_COOKIE = "zone"
"""The browser's own zone, as static/local-time.js finds it, for the next page to say times in."""


def page_zone() -> str:
    """The one zone a page says every time in: the instructor's chosen zone, else the browser's
    (told by static/local-time.js), else that of the class a student's page is for, else UTC;
    asked once a request, as a class page says hundreds of times."""
    if "page_zone" not in g:
        chosen = current_user.time_zone if zone_chosen() else None
        # The script writes the name URL-encoded ("Asia%2FTokyo"), as cookie values must be.
        told = unquote(request.cookies.get(ZONE_COOKIE, ""))
        browser = told if told in known_zones() else None
        g.page_zone = chosen or browser or _class_zone() or "UTC"
    return g.page_zone


def say_times_for(subject: Class | Attempt | None) -> None:
    """A student's page is for this class, or an attempt in one: without a zone of their own,
    its times are said in the zone of the class's instructor (looked up only if needed)."""
    g.times_for = subject


def _class_zone() -> str | None:
    subject = g.get("times_for")
    if subject is not None and not isinstance(subject, Class):
        subject = subject.class_
    return subject.instructor.time_zone if subject is not None else None


def _time(moment: datetime, shape: str, clock: bool = False) -> Markup:
    """A moment in the page's zone, labelled, inside <time>: static/local-time.js restates it in
    the browser's zone when that differs and the instructor chose none."""
    zone = page_zone()
    local = utc_to_local(moment, zone)
    # A clock's seconds let the countdown agree with it; a date is said to the minute.
    stamp = utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ" if clock else "%Y-%m-%dT%H:%MZ")
    shown = escape(f"{local.strftime(shape)} {local.tzname()}")
    kind = ' class="clock"' if clock else ""
    # An f-string, not Markup.format, whose Formatter was half of a 500-row class table's times.
    return Markup(f'<time datetime="{stamp}" data-zone="{escape(zone)}"{kind}>{shown}</time>')


def when(moment: datetime) -> Markup:
    """A date and time: <time ... data-zone="Europe/Berlin">Mon 7 Dec, 09:00 CET</time>, with the
    year when it is not this one."""
    year = " %Y" if utc(moment).year != datetime.now(UTC).year else ""
    return _time(moment, f"%a %-d %b{year}, %H:%M")


def clock(moment: datetime) -> Markup:
    """The hour and minute of a moment today: <time class="clock" ...>17:40 CET</time>."""
    return _time(moment, "%H:%M", clock=True)


def zone_chosen() -> bool:
    """Whether the page's times are in a zone the instructor chose, for the script to keep."""
    return bool(current_user.is_authenticated and current_user.time_zone_chosen)


# After each run of slashes, so "https://" stays whole and the host starts the next line.
_AFTER_SLASHES = re.compile(r"(?<=/)(?=[^/])")


def breakable_address(address: str) -> Markup:
    """An address a phone wraps only after its slashes, never mid-word; copied, it is exact."""
    # <wbr> marks where a line may break and adds no character to what is selected or copied.
    return Markup("<wbr>").join(escape(part) for part in _AFTER_SLASHES.split(str(address)))


@lru_cache(maxsize=1024)
def _review(question: Question, order: tuple[str, ...], chosen_id: str | None, tag: str) -> Markup:
    macro = get_template_attribute(question_template(question), "review")
    return Markup(macro(question, [question.choice(c) for c in order], chosen_id, tag))


def reviewed(question: Question, choices, chosen_id: str | None, tag: str) -> Markup:
    """A question's choices reviewed with one chosen: the page's heaviest part, and the same for
    every attempt that chose alike, so rendered once per question, order, choice and tag."""
    return _review(question, tuple(choice.id for choice in choices), chosen_id, tag)


def graded(question: Question, response: str):
    """The verdict on one answer, for a review that marks what it matched."""
    return type_of(question).grade(question, response)


def question_template(question: Question) -> str:
    """The template whose macros draw this question's type (templates/questions/)."""
    return f"questions/{type_of(question).name}.html"


def init_app(app):
    app.add_template_global(plural)
    app.add_template_global(reviewed)
    app.add_template_global(question_template)
    app.add_template_global(graded)
    app.add_template_filter(duration)
    app.add_template_filter(when)
    app.add_template_filter(clock)
    app.add_template_filter(breakable_address)
    app.add_template_filter(in_points, "points")
    app.add_template_filter(readable)
    # Quiz text (app/text.py): a choice as a phrase, a prompt in parts, an explanation rich.
    for quiz_text in (phrase, rich, plain, prompt_parts, explained):
        app.add_template_filter(quiz_text)
    app.add_template_global(page_zone)
    app.add_template_global(zone_chosen)
