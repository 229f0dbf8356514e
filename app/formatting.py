"""Template filters that say times the way a person does, and reviews rendered once."""

from datetime import datetime, timedelta
from functools import lru_cache

from flask import get_template_attribute
from markupsafe import Markup

from .bank import Question
from .rules import utc, utc_to_local


def duration(delta: timedelta) -> str:
    """A time span: "1 h 4 min", "3 min 12 s", "45 s"."""
    minutes, seconds = divmod(round(delta.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def when(moment: datetime) -> Markup:
    """A moment in UTC, to the minute, that static/local-time.js restates in the reader's zone:
    <time datetime="2026-11-29T17:40Z">29 Nov 2026, 17:40 UTC</time>."""
    moment = utc(moment)
    return Markup(f'<time datetime="{moment:%Y-%m-%dT%H:%MZ}">{moment:%-d %b %Y, %H:%M} UTC</time>')


def clock(moment: datetime) -> Markup:
    """The hour and minute of a moment today, in UTC, that static/local-time.js restates in the
    reader's zone: <time class="clock" datetime="2026-11-29T17:40:05Z">17:40 UTC</time>."""
    moment = utc(moment)
    return Markup(
        f'<time class="clock" datetime="{moment:%Y-%m-%dT%H:%M:%SZ}">{moment:%H:%M} UTC</time>'
    )


def on_clock(moment: datetime, zone: str) -> Markup:
    """A moment on the clocks of a named zone, the zone said, and left so by static/local-time.js:
    <time datetime="2026-12-07T08:00Z" data-zone="Europe/Berlin">Mon 7 Dec 09:00</time>
    (Europe/Berlin); the year appears when it is not this one."""
    local = utc_to_local(moment, zone)
    shown = f"{local:%a %-d %b %H:%M}"
    if local.year != datetime.now(local.tzinfo).year:
        shown = f"{local:%a %-d %b %Y %H:%M}"
    stamp = f"{utc(moment):%Y-%m-%dT%H:%MZ}"
    return Markup('<time datetime="{}" data-zone="{}">{}</time> ({})').format(
        stamp, zone, shown, zone
    )


@lru_cache(maxsize=1024)
def _review(question: Question, order: tuple[str, ...], chosen_id: str | None, tag: str) -> Markup:
    macro = get_template_attribute("_macros.html", "choice_reviews")
    return Markup(macro(question, [question.choice(c) for c in order], chosen_id, tag))


def reviewed(question: Question, choices, chosen_id: str | None, tag: str) -> Markup:
    """A question's choices reviewed with one chosen: the page's heaviest part, and the same for
    every attempt that chose alike, so rendered once per question, order, choice and tag."""
    return _review(question, tuple(choice.id for choice in choices), chosen_id, tag)


def init_app(app):
    app.add_template_global(reviewed)
    app.add_template_filter(duration)
    app.add_template_filter(when)
    app.add_template_filter(clock)
    app.add_template_filter(on_clock)
