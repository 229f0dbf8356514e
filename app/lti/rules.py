"""Pure rules of a launch over plain values: the claims it carries, who the launcher is in
Quizwright, what they are called, which quiz a resource link opens, and what each refusal
says. Nothing here loads the LTI library."""

from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
STORAGE_CHECKED = "lti_storage_checked"
"""The field the tool's check page adds when it re-posts a launch whose state it read back."""

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


REASONS = {
    "no_launch": (400, "No launch here", "This address receives launches from a learning "
                  "platform (an LMS). Open the activity from your course instead."),
    "state": (401, "Launch not started in this browser", "The launch did not carry the state "
              "this browser was given when it started (the state is missing, foreign or "
              "expired, or the browser blocked Quizwright's cookie). Launch the activity again "
              "from your course; if it happens again, open it in a new window."),
    "malformed": (400, "Unreadable launch", "The platform sent an id_token that is not a JWT."),
    "platform": (400, "Platform not registered", "No platform with this issuer and client id "
                 "is registered with Quizwright. An admin registers it with "
                 "`flask lti add-platform` or dynamic registration."),
    "key_set": (401, "Platform keys unavailable", "Quizwright could not fetch the platform's "
                "public keys to check the launch's signature."),
    "unknown_key": (401, "Unknown signing key", "The launch is signed with a key (kid) that "
                    "the platform's key set does not publish."),
    "bad_key": (401, "Unusable signing key", "The platform's key set gives the launch's key "
                "(kid) in a form that cannot check an RSA signature."),
    "signature": (401, "Bad signature", "The launch's signature does not match the platform's "
                  "public key: it was not signed by the registered platform."),
    "expired": (401, "Launch expired", "The launch has expired (exp) or was issued in the "
                "future (iat). Launch the activity again; if it keeps happening, check the "
                "clocks of both servers."),
    "audience": (401, "Launch meant for another tool", "The launch's audience (aud, azp) is "
                 "not this tool's client id."),
    "issuer": (401, "Wrong issuer", "The launch's issuer (iss) is not the registered one."),
    "claims": (401, "Incomplete launch", "The launch lacks a claim the Security Framework "
               "requires."),
    "nonce": (401, "Launch already used", "This launch's nonce was used before or was never "
              "issued: a launch works once. Launch the activity again from your course."),
    "deployment": (400, "Deployment not registered", "The launch names a deployment id that "
                   "is not registered for this platform. An admin adds it with "
                   "`flask lti add-platform ... --deployment-id`."),
    "message_type": (400, "Unsupported message type", "Quizwright answers resource link "
                     "launches (LtiResourceLinkRequest) and deep linking requests "
                     "(LtiDeepLinkingRequest) only."),
    "message": (400, "Invalid LTI message", "The launch is not a valid LTI 1.3 message."),
}  # fmt: skip


@dataclass
class Refusal(Exception):
    """A launch or login turned away: why (a key of REASONS) and the detail for the log."""

    reason: str
    detail: str = ""

    @property
    def status(self) -> int:
        return REASONS[self.reason][0]
