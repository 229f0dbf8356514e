"""LTI Dynamic Registration: a platform's admin pastes the tool's registration link, the
platform opens it with its OpenID configuration and a registration token, and the tool
registers itself there and stores the platform and its deployment.

Only a link an admin made (`flask lti registration-link`) works, once, within a day: an open
registration address would let anyone register a platform of their own and launch as an
instructor."""

import hashlib
import secrets
from datetime import timedelta
from urllib.parse import urlsplit

import requests
from flask import render_template, request, url_for

from ..audit import audit
from ..extensions import csrf
from . import bp
from .config import find_platform
from .launch import TimedSession
from .platforms import PlatformDetails, PlatformError, save_platform
from .storage import DatabaseStorage

LINK_LIFETIME = timedelta(days=1)
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


class RegistrationError(Exception):
    """The registration could not be made; the message says why, for the platform's admin."""


def _code_key(code: str) -> str:
    # Only a hash is stored: a copy of the database cannot register a platform.
    return "registration-" + hashlib.sha256(code.encode()).hexdigest()


def new_link_code() -> str:
    """A registration code, valid once within LINK_LIFETIME."""
    code = secrets.token_urlsafe(24)
    DatabaseStorage().set_value(_code_key(code), True, int(LINK_LIFETIME.total_seconds()))
    return code


def _code_is_valid(code: str) -> bool:
    return bool(code) and DatabaseStorage().get_value(_code_key(code)) is True


def _take_code(code: str) -> bool:
    return bool(code) and DatabaseStorage().check_value(_code_key(code))


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
        "scope": "",
        TOOL_CONFIGURATION: {
            "domain": urlsplit(launch).netloc,
            "target_link_uri": launch,
            "claims": ["iss", "sub", "name", "given_name", "family_name"],
            "messages": [{"type": "LtiResourceLinkRequest", "target_link_uri": launch}],
            "description": "Quizzes that explain every answer.",
        },
    }


def fetch_configuration(session: requests.Session, url: str) -> dict:
    """The platform's OpenID configuration, checked to come from its own issuer."""
    try:
        response = session.get(url)
        response.raise_for_status()
        configuration = response.json()
    except (requests.RequestException, ValueError) as error:
        raise RegistrationError(f"The platform's configuration at {url} could not be read: "
                                f"{error}") from error  # fmt: skip
    missing = [
        field
        for field in (
            "issuer",
            "authorization_endpoint",
            "token_endpoint",
            "jwks_uri",
            "registration_endpoint",
        )
        if not isinstance(configuration.get(field), str)
    ]
    if missing:
        raise RegistrationError(f"The platform's configuration lacks {', '.join(missing)}.")
    # The spec: the configuration's address must start with its issuer, or anyone's
    # configuration could claim to be a trusted platform. At a "/" boundary: a bare prefix lets
    # https://lms.example.edu.evil.net or https://lms.example.edu@evil.net claim lms.example.edu.
    issuer = configuration["issuer"].rstrip("/")
    if url != issuer and not url.startswith(issuer + "/"):
        raise RegistrationError(
            f"The configuration at {url} names the issuer {configuration['issuer']}, "
            "which is not where it was found."
        )
    return configuration


def register_with(configuration_url: str, token: str | None) -> tuple[str, str]:
    """Register the tool with the platform and store it; returns the platform's name and client
    id. Raises RegistrationError."""
    session = TimedSession()
    configuration = fetch_configuration(session, configuration_url)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = session.post(
            configuration["registration_endpoint"],
            json=tool_registration("Quizwright"),
            headers=headers,
        )
        response.raise_for_status()
        answer = response.json()
    except (requests.RequestException, ValueError) as error:
        raise RegistrationError(f"The platform refused the registration: {error}") from error
    deployment = (answer.get(TOOL_CONFIGURATION) or {}).get("deployment_id")
    client_id = answer.get("client_id")
    if not client_id or not deployment:
        raise RegistrationError("The platform's answer has no client id or deployment id.")
    if find_platform(configuration["issuer"], str(client_id)) is not None:
        # The link adds a platform; it must not change the addresses and keys of a registration
        # whose launches already log in its instructors.
        raise RegistrationError(
            f"Quizwright already has {configuration['issuer']} with client id {client_id}; "
            "its admin changes that registration with `flask lti add-platform`."
        )
    platform_name = (configuration.get(PLATFORM_CONFIGURATION) or {}).get("product_family_code")
    details = PlatformDetails(
        issuer=configuration["issuer"],
        client_id=str(client_id),
        auth_login_url=configuration["authorization_endpoint"],
        auth_token_url=configuration["token_endpoint"],
        key_set_url=configuration["jwks_uri"],
        deployment_ids=(str(deployment),),
        name=platform_name,
    )
    try:
        platform, _ = save_platform(details)
    except PlatformError as error:
        raise RegistrationError(" ".join(error.errors)) from error
    return platform.name, platform.client_id


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
    if not _take_code(code):
        audit("lti registration refused: link unknown, used or expired")
        return render_template("lti/register.html", problem="link"), 403
    try:
        name, client_id = register_with(
            request.form.get("openid_configuration", ""),
            request.form.get("registration_token") or None,
        )
    except RegistrationError as error:
        audit(f"lti registration failed: {str(error)!r}")
        return render_template("lti/register.html", problem="failed", error=str(error)), 400
    audit(f"lti platform registered: {name!r} client id {client_id!r}")
    return render_template("lti/registered.html", name=name, client_id=client_id)
