"""Finding and registering platforms, from `flask lti add-platform` or dynamic registration
alike: every problem with the details found at once, and nothing stored unless all are right."""

from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError

from ..extensions import db
from .models import URL_LENGTH, LtiDeployment, LtiPlatform


def find_platform(issuer: str, client_id: str | None, any_one=False) -> LtiPlatform | None:
    """The platform with this issuer and client id; without a client id (the login request's is
    optional), the issuer's only registration, or with `any_one` the first of several."""
    query = db.select(LtiPlatform).filter_by(issuer=issuer).order_by(LtiPlatform.id)
    if client_id:
        return db.session.scalar(query.filter_by(client_id=client_id))
    found = db.session.scalars(query.limit(2)).all()
    return found[0] if len(found) == 1 or (found and any_one) else None


ID_LENGTH = 255
NAME_LENGTH = 100


@dataclass(frozen=True)
class PlatformDetails:
    """What the tool must know of a platform, as its admin or its registration service says."""

    issuer: str
    client_id: str
    auth_login_url: str
    auth_token_url: str
    key_set_url: str
    deployment_ids: tuple[str, ...]
    name: str | None = None


def is_web_address(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


def problems(details: PlatformDetails) -> list[str]:
    """Everything wrong with these details, each naming its option; empty if they can be stored."""
    found = []
    addresses = {
        "--issuer": details.issuer,
        "--auth-login-url": details.auth_login_url,
        "--auth-token-url": details.auth_token_url,
        "--key-set-url": details.key_set_url,
    }
    for option, url in addresses.items():
        limit = ID_LENGTH if option == "--issuer" else URL_LENGTH
        if not is_web_address(url):
            found.append(f"{option}: {url!r} is not an http:// or https:// address.")
        elif len(url) > limit:
            found.append(f"{option}: an address of at most {limit} characters is needed.")
    if not details.client_id.strip() or len(details.client_id) > ID_LENGTH:
        found.append(f"--client-id: give the client id the platform shows (1 to {ID_LENGTH}).")
    if not details.deployment_ids:
        found.append("--deployment-id: give at least one deployment id the platform shows.")
    for deployment in details.deployment_ids:
        if not deployment.strip() or len(deployment) > ID_LENGTH:
            found.append(f"--deployment-id: {deployment!r} is not 1 to {ID_LENGTH} characters.")
    if details.name is not None and not 1 <= len(details.name.strip()) <= NAME_LENGTH:
        found.append(f"--name: use 1 to {NAME_LENGTH} characters.")
    return found


class PlatformError(Exception):
    """Details that cannot be stored; `errors` lists every problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def save_platform(details: PlatformDetails) -> tuple[LtiPlatform, list[str]]:
    """Register a platform, or update the one with this issuer and client id, adding its new
    deployments; returns it and the deployment ids that were new. Raises PlatformError."""
    if found := problems(details):
        raise PlatformError(found)
    platform = db.session.scalar(
        db.select(LtiPlatform).filter_by(issuer=details.issuer, client_id=details.client_id)
    )
    name = (details.name or "").strip() or urlsplit(details.issuer).hostname
    if platform is None:
        platform = LtiPlatform(issuer=details.issuer, client_id=details.client_id, name=name)
        db.session.add(platform)
    elif details.name:
        platform.name = name
    platform.auth_login_url = details.auth_login_url
    platform.auth_token_url = details.auth_token_url
    platform.key_set_url = details.key_set_url
    known = {deployment.deployment_id for deployment in platform.deployments}
    added = [d for d in dict.fromkeys(details.deployment_ids) if d not in known]
    platform.deployments.extend(LtiDeployment(deployment_id=d) for d in added)
    try:
        db.session.commit()
    except IntegrityError:  # the same registration arrived twice at once
        db.session.rollback()
        clash = "This platform was registered at the same moment; run the command again."
        raise PlatformError([clash]) from None
    return platform, added


def remove_platform(issuer: str, client_id: str | None) -> LtiPlatform | None:
    """Forget a platform, its deployments, users and course links (the classes stay)."""
    platform = find_platform(issuer, client_id)
    if platform is not None:
        db.session.delete(platform)
        db.session.commit()
    return platform
