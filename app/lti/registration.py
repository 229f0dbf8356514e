"""LTI Dynamic Registration: a platform's admin pastes the tool's registration link, the
platform opens it with its OpenID configuration and a registration token, and the tool
registers itself there and stores the platform and its deployment.

Only a link an admin made (`flask lti registration-link`) works, once, within a day: an open
registration address would let anyone register a platform of their own and launch as an
instructor."""

import hashlib
import ipaddress
import re
import secrets
import socket
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from flask import current_app, render_template, request, url_for

from ..audit import audit
from ..extensions import csrf
from ..headers import allow_framing
from . import storage
from .blueprint import bp
from .platforms import PlatformDetails, PlatformError, find_platform, save_platform

if TYPE_CHECKING:  # loaded by the first registration (app/lti/__init__.py)
    import requests

LINK_LIFETIME = timedelta(days=1)
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


AGS_SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
)
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint")
DEFAULT_PORTS = {"http": 80, "https": 443}


class RegistrationError(Exception):
    """The registration could not be made; the message says why, for the platform's admin."""


class Unreachable(RegistrationError):
    """A fetch or post that failed: the page says so plainly, the log has the detail."""

    def __init__(self, what: str, detail: str):
        super().__init__(f"{what} could not be reached. The server's log says why.")
        self.detail = detail


def normal_url(url: str) -> str | None:
    """An http(s) URL as it is fetched: scheme and host in lower case, no default port, dot
    segments resolved (%2e too); None for anything else, a URL with a user or password included."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    host = parts.hostname.lower()
    # Letters, digits, dots and dashes (punycode for other names), or an IPv6 literal: the
    # origin goes into a frame-ancestors policy, where a ";" would start a directive.
    if re.fullmatch(r"[a-z0-9.-]+", host) is None:
        if re.fullmatch(r"[0-9a-f:.]+", host) is None:
            return None
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[parts.scheme.lower()]:
        host += f":{port}"
    segments = []
    for segment in re.sub("%2e", ".", parts.path, flags=re.IGNORECASE).split("/")[1:]:
        if segment == "..":
            segments = segments[:-1]
        elif segment != ".":
            segments.append(segment)
    path = "/" + "/".join(segments)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{host}{path}{query}"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def check_public(url: str) -> None:
    """Refuse a URL whose host is this machine or a private, link-local or reserved address,
    unless LTI_PRIVATE_PLATFORMS allows them."""
    if current_app.config.get("LTI_PRIVATE_PLATFORMS"):
        return
    host = urlsplit(url).hostname or ""
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError as error:
        raise Unreachable("The platform", f"{host}: {error}") from error
    for address in found:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not ip.is_global or ip.is_multicast:
            raise RegistrationError(
                f"{host} is a loopback, private or link-local address, where Quizwright does "
                "not register platforms (the admin allows it with LTI_PRIVATE_PLATFORMS)."
            )


def _code_key(code: str) -> str:
    # Only a hash is stored: a copy of the database cannot register a platform.
    return "registration-" + hashlib.sha256(code.encode()).hexdigest()


def new_link_code() -> str:
    """A registration code, valid once within LINK_LIFETIME."""
    code = secrets.token_urlsafe(24)
    storage.keep(_code_key(code), True, int(LINK_LIFETIME.total_seconds()))
    return code


def _code_is_valid(code: str) -> bool:
    return bool(code) and storage.value(_code_key(code)) is True


def _take_code(code: str) -> bool:
    return bool(code) and storage.take(_code_key(code))


def tool_registration(name: str) -> dict:
    """The client registration the tool sends: its addresses, keys and messages."""
    launch = url_for("lti.launch", _external=True)
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": url_for("lti.login", _external=True),
        "redirect_uris": [launch],
        "client_name": name,
        "jwks_uri": url_for("lti.jwks", _external=True),
        "token_endpoint_auth_method": "private_key_jwt",
        # Grade passback (AGS), the course's roster (NRPS), as README and docs/lti.md promise.
        "scope": " ".join((*AGS_SCOPES, NRPS_SCOPE)),
        TOOL_CONFIGURATION: {
            "domain": urlsplit(launch).netloc,
            "target_link_uri": launch,
            "claims": ["iss", "sub", "name", "given_name", "family_name"],
            "messages": [
                {"type": "LtiResourceLinkRequest", "target_link_uri": launch},
                # The instructor chooses the quiz from the platform's "Select content".
                {"type": "LtiDeepLinkingRequest", "target_link_uri": launch, "label": name},
            ],
            "description": "Quizzes that explain every answer.",
        },
    }


def _answer(session: "requests.Session", what: str, method: str, url: str, **how) -> dict:
    """A JSON answer from the platform, from a public address, with no redirect followed."""
    import requests

    check_public(url)
    try:
        response = session.request(method, url, allow_redirects=False, **how)
    except requests.RequestException as error:
        raise Unreachable(what, f"{method} {url}: {error}") from error
    if response.is_redirect or not response.ok:
        # The status only: a redirect's target or an error page stays in the log.
        error = RegistrationError(f"{what} answered {response.status_code}, not its JSON.")
        error.detail = f"{method} {url}: {response.headers.get('Location') or response.text[:200]}"
        raise error
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise RegistrationError(f"{what} answered with something other than a JSON object.")
    return answer


def fetch_configuration(session: "requests.Session", url: str) -> dict:
    """The platform's OpenID configuration, checked to come from its own issuer, whose origin
    every one of its addresses keeps."""
    found_at = normal_url(url)
    if found_at is None:
        raise RegistrationError(
            "The platform's configuration address is not a plain http(s) URL (no user or "
            "password in it, a host of letters, digits, dots and dashes)."
        )
    configuration = _answer(session, "The platform's configuration", "GET", found_at)
    missing = [
        field for field in ("issuer", *ENDPOINTS) if not isinstance(configuration.get(field), str)
    ]
    if missing:
        raise RegistrationError(f"The platform's configuration lacks {', '.join(missing)}.")
    # The spec: the configuration's address must start with its issuer, or anyone's
    # configuration could claim to be a trusted platform. Compared as fetched (…/moodle/../x is
    # /x), at a "/" boundary: a bare prefix lets https://lms.example.edu.evil.net claim it.
    issuer = (normal_url(configuration["issuer"]) or "").rstrip("/")
    if not issuer or (found_at != issuer and not found_at.startswith(issuer + "/")):
        raise RegistrationError(
            f"The configuration at {found_at} names the issuer {configuration['issuer']}, "
            "which is not where it was found."
        )
    for field in ENDPOINTS:
        address = normal_url(configuration[field])
        if address is None or _origin(address) != _origin(issuer):
            raise RegistrationError(
                f"The platform's {field} is not at its issuer's address ({_origin(issuer)})."
            )
        configuration[field] = address
    return configuration


PRODUCTS = {
    "moodle": "Moodle",
    "canvas": "Canvas",
    "desire2learn": "Brightspace",
    "d2l": "Brightspace",
    "blackboard": "Blackboard Learn",
    "sakai": "Sakai",
    "schoology": "Schoology",
}
"""Platforms by the product_family_code they send, as their users call them."""


def platform_name(configuration: dict) -> str:
    """What the admin page and the registration's last page call a platform: its product as
    people name it, and its site ("Moodle at lms.example.edu"), not the raw product code."""
    code = str((configuration.get(PLATFORM_CONFIGURATION) or {}).get("product_family_code") or "")
    product = PRODUCTS.get(code.strip().lower(), code.strip()[:40] or "The platform")
    return f"{product} at {urlsplit(configuration['issuer']).netloc}"


def register_with(configuration_url: str, token: str | None) -> tuple[str, str]:
    """Register the tool with the platform and store it; returns the platform's name and client
    id. Raises RegistrationError."""
    from .launch import TimedSession

    session = TimedSession()
    configuration = fetch_configuration(session, configuration_url)
    if find_platform(configuration["issuer"], None, any_one=True) is not None:
        # The link adds a platform; it must neither change the addresses and keys of one whose
        # launches already log in its instructors, nor stand beside it under its issuer, where
        # logins that name no client id would find the wrong one.
        raise RegistrationError(
            f"Quizwright already has a platform with the issuer {configuration['issuer']}; its "
            "admin adds or changes its registrations with `flask lti add-platform`."
        )
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = _answer(
        session,
        "The platform's registration endpoint",
        "POST",
        configuration["registration_endpoint"],
        json=tool_registration("Quizwright"),
        headers=headers,
    )
    deployment = (answer.get(TOOL_CONFIGURATION) or {}).get("deployment_id")
    client_id = answer.get("client_id")
    if not client_id or not deployment:
        raise RegistrationError("The platform's answer has no client id or deployment id.")
    details = PlatformDetails(
        issuer=configuration["issuer"],
        client_id=str(client_id),
        auth_login_url=configuration["authorization_endpoint"],
        auth_token_url=configuration["token_endpoint"],
        key_set_url=configuration["jwks_uri"],
        deployment_ids=(str(deployment),),
        name=platform_name(configuration),
    )
    try:
        platform, _ = save_platform(details)
    except PlatformError as error:
        raise RegistrationError(" ".join(error.errors)) from error
    return platform.name, platform.client_id


def _let_frame(configuration_url: str) -> None:
    """Let the registering platform frame this page, as Moodle does: the origin its own
    configuration address names, for a page opened with a valid link (allow_framing)."""
    address = normal_url(configuration_url)
    if address is not None:
        allow_framing(_origin(address))


@bp.get("/register")
def register():
    """The page a platform opens from the registration link: what will be registered."""
    code = request.args.get("code", "")
    configuration = request.args.get("openid_configuration", "")
    if not _code_is_valid(code):
        audit("lti registration refused: link unknown, used or expired")
        return render_template("lti/register.html", problem="link"), 403
    if not configuration:
        return render_template("lti/register.html", problem="configuration"), 400
    _let_frame(configuration)
    return render_template(
        "lti/register.html",
        problem=None,
        code=code,
        configuration=configuration,
        token=request.args.get("registration_token", ""),
    )


@bp.post("/register")
@csrf.exempt  # shown in the platform's frame, where our session cookie may be blocked;
# the one-time code stands in for the CSRF token
def register_confirmed():
    """Register with the platform, using up the link's code."""
    code = request.form.get("code", "")
    _let_frame(request.form.get("openid_configuration", ""))
    if not _take_code(code):
        audit("lti registration refused: link unknown, used or expired")
        return render_template("lti/register.html", problem="link"), 403
    try:
        name, client_id = register_with(
            request.form.get("openid_configuration", ""),
            request.form.get("registration_token") or None,
        )
    except RegistrationError as error:
        audit(f"lti registration failed: {str(error)!r} {getattr(error, 'detail', '')!r}")
        return render_template("lti/register.html", problem="failed", error=str(error)), 400
    audit(f"lti platform registered: {name!r} client id {client_id!r}")
    return render_template("lti/registered.html", name=name, client_id=client_id)
