"""Template filters that say times the way a person does."""

from datetime import UTC, datetime, timedelta


def duration(delta: timedelta) -> str:
    """A time span: "1 h 4 min", "3 min 12 s", "45 s"."""
    minutes, seconds = divmod(round(delta.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def when(moment: datetime) -> str:
    """A moment in UTC, to the minute: "29 Nov 2026, 17:40 UTC"."""
    if moment.tzinfo is None:  # SQLite hands back the stored UTC time without its zone
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%-d %b %Y, %H:%M UTC")


def init_app(app):
    app.add_template_filter(duration)
    app.add_template_filter(when)
