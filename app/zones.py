"""Time zones: the zones an instructor may choose, and moments between a zone's clocks and UTC."""

from datetime import UTC, datetime
from functools import cache
from zoneinfo import ZoneInfo, available_timezones


class NoSuchLocalTime(ValueError):
    """A wall-clock time the zone skips, when clocks go forward."""


def local_to_utc(wall: datetime, zone: str) -> datetime:
    """A time as typed on a clock in the zone (naive), in UTC; the earlier of a repeated hour,
    and NoSuchLocalTime for an hour the clocks skip."""
    place = ZoneInfo(zone)
    moment = wall.replace(tzinfo=place)
    # A skipped time does not survive the trip to UTC and back unchanged.
    if moment.astimezone(UTC).astimezone(place).replace(tzinfo=None) != wall:
        raise NoSuchLocalTime(f"{wall:%d %b %Y %H:%M} does not exist in {zone}")
    return moment.astimezone(UTC)


def utc_to_local(moment: datetime, zone: str) -> datetime:
    """A stored moment on the zone's clocks."""
    return utc(moment).astimezone(ZoneInfo(zone))


# The IANA database's areas: their zones are the current names, where "US/Eastern" and
# "Etc/GMT+5" are old or confusing aliases that only lengthen the list.
AREAS = ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe",
         "Indian", "Pacific")  # fmt: skip


@cache
def time_zones() -> tuple[str, ...]:
    """The IANA zones of the world's areas this system knows, sorted, UTC first."""
    return ("UTC", *sorted(zone for zone in available_timezones() if zone.startswith(AREAS)))


@cache
def known_zones() -> frozenset[str]:
    """The zones of time_zones(), to look one up."""
    return frozenset(time_zones())


def zone_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """The zones by area, each with the place it is named for as people write it:
    ("America", [..., ("America/Argentina/Buenos_Aires", "Argentina, Buenos Aires"), ...])."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for zone in time_zones()[1:]:
        area, _, place = zone.partition("/")
        groups.setdefault(area, []).append((zone, place.replace("_", " ").replace("/", ", ")))
    return list(groups.items())


def utc(moment: datetime | None) -> datetime | None:
    """A stored moment as an aware UTC datetime: SQLite hands back stored UTC without its zone."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
