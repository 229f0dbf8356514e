"""Pure rules of a launch over plain values: who the launcher is in Quizwright, what they are
called, and which quiz a resource link opens."""

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
MEMBERSHIP_SUB = "http://purl.imsglobal.org/vocab/lis/v2/membership/"
TEACHING = ("Instructor", "Administrator")
"""Context roles that teach: they get the class page, logged in as an instructor."""
LEARNING = ("Learner",)
"""Context roles that take quizzes."""


def context_roles(roles: list[str]) -> set[str]:
    """The principal context roles named in an LTI roles claim: full URIs, sub-roles
    (".../membership/Instructor#TeachingAssistant" counts as Instructor) and the simple
    names LTI 1.3 still allows."""
    found = set()
    for role in roles:
        if role.startswith(MEMBERSHIP):
            found.add(role.removeprefix(MEMBERSHIP))
        elif role.startswith(MEMBERSHIP_SUB):
            found.add(role.removeprefix(MEMBERSHIP_SUB).split("#", 1)[0])
        elif ":" not in role and "/" not in role:
            found.add(role)
    return found


def quizwright_role(roles: list[str]) -> str | None:
    """'instructor', 'learner', or None for a role with no page here (Mentor, guest)."""
    held = context_roles(roles)
    if held & set(TEACHING):
        return "instructor"
    if held & set(LEARNING):
        return "learner"
    return None


def share_role(roles: list[str]) -> str:
    """What a course's class is shared with a teaching launcher for, who does not own it:
    'view' for a teaching assistant, 'manage' for an instructor or administrator."""
    assistant = any(
        role.startswith(MEMBERSHIP_SUB) and role.endswith("#TeachingAssistant") for role in roles
    )
    return "view" if assistant else "manage"


def display_name(claims: dict, limit: int = 80) -> str | None:
    """The name the platform sends: `name`, else given and family names; None if none."""
    name = (claims.get("name") or "").strip()
    if not name:
        parts = (claims.get("given_name"), claims.get("family_name"))
        name = " ".join(part.strip() for part in parts if part and part.strip())
    name = " ".join(name.split())
    return name[:limit] or None


def chosen_quiz(custom: dict | None, target_link_uri: str | None, offered: list[str]) -> str | None:
    """The slug a resource link opens: its custom parameter `quiz`, else `?quiz=` in its target
    link URI, else the only quiz on offer; None if it names none that is offered."""
    slug = (custom or {}).get("quiz")
    if not slug and target_link_uri:
        slug = parse_qs(urlsplit(target_link_uri).query).get("quiz", [None])[0]
    if not slug and len(offered) == 1:
        return offered[0]
    return slug if slug in offered else None


FIRST_RETRY = timedelta(seconds=30)
LONGEST_WAIT = timedelta(hours=6)


def retry_delay(tries: int) -> timedelta:
    """How long a score waits after its `tries`-th failed send: doubling from 30 seconds, so a
    platform down for a minute or a day is asked neither constantly nor rarely; at most 6 hours."""
    return min(FIRST_RETRY * 2 ** (tries - 1), LONGEST_WAIT)
