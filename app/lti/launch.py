"""Launch validation as the 1EdTech Security Framework asks, through pylti1p3: each failed
check becomes a Refusal that names what was wrong, before anything is stored."""

import hashlib
from dataclasses import asdict, dataclass
from urllib.parse import parse_qsl, urlsplit

import jwt
import requests
from flask import g, request
from pylti1p3.contrib.flask import (
    FlaskCookieService,
    FlaskMessageLaunch,
    FlaskOIDCLogin,
    FlaskRequest,
    FlaskSessionService,
)
from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.launch_data_storage.base import LaunchDataStorage

from ..cookies import attributes, in_frame
from . import storage
from .config import DatabaseToolConf
from .platforms import find_platform
from .rules import CLAIM, STORAGE_CHECKED, Refusal

FETCH_TIMEOUT = 5
"""Seconds a platform's key set may take: a launch waits for it, so never long."""
LOGIN_LIFETIME = 600
"""Seconds a login's nonce waits for its launch; pylti1p3's state cookie lasts 5 minutes."""
KEY_SET_LIFETIME = 3600
"""Seconds a fetched platform key set is trusted before it is fetched again."""
REFETCH_SECONDS = 10
"""Seconds after a fetch for an unknown kid before another unknown kid may fetch again."""
SUPPORTED_MESSAGES = ("LtiResourceLinkRequest", "LtiDeepLinkingRequest")
"""Message types this tool answers: resource link launches, and deep linking's choice."""
ALGORITHMS = ("RS256", "RS384", "RS512")
"""What the Security Framework allows a platform to sign with: RSA, never 'none' or a secret."""
STORAGE_PARAMS = "platform_storage"
"""Under which a login's state parameters record that the platform's frame keeps its state."""
FRAMED_PARAMS = "framed_new_window"
"""Under which a framed login that set partitioned cookies keeps the same login in a window of
its own, for a browser that kept not even those."""
CLOCK_SKEW = 60
"""Seconds of disagreement between the platform's clock and ours that `exp` and `iat` forgive."""


class DatabaseStorage(LaunchDataStorage):
    """pylti1p3's launch data storage on the database's kept values (storage.py); a nonce is
    taken, not read, so it works once."""

    def __init__(self, browser_bound: bool = True):
        """Keys are kept under pylti1p3's session-id cookie, which ties a login's nonce to its
        browser; not `browser_bound` for a login whose state the platform's frame keeps, as it
        sets no cookie."""
        super().__init__()
        if not browser_bound:
            self._session_cookie_name = None

    def can_set_keys_expiration(self) -> bool:
        return True

    def get_value(self, key: str):
        return storage.value(self._prepare_key(key))

    def set_value(self, key: str, value, exp: int | None = None) -> None:
        storage.keep(self._prepare_key(key), value, exp)

    def check_value(self, key: str) -> bool:
        """Take the value (pylti1p3 asks this only of nonces): of two launches carrying the
        same nonce, only one gets it."""
        return storage.take(self._prepare_key(key))


class TimedSession(requests.Session):
    """An HTTP session whose every request gives up after `timeout` seconds: requests waits for
    ever by default, and a platform that hangs must not hold a page or the sender."""

    def __init__(self, timeout: float = FETCH_TIMEOUT):
        super().__init__()
        self.timeout = timeout

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", self.timeout)
        return super().request(*args, **kwargs)


def _storage(browser_bound: bool = True) -> DatabaseStorage:
    return DatabaseStorage(browser_bound)


def _login_session(browser_bound: bool = True) -> FlaskSessionService:
    """pylti1p3's per-login store (nonces, state parameters), kept in the database."""
    session = FlaskSessionService(FlaskRequest())
    session.set_data_storage(_storage(browser_bound))
    # The platform answers a login within seconds: its nonce need not outlive the state cookie
    # by much, and a flood of logins then leaves rows for minutes, not a day.
    session.set_launch_data_lifetime(LOGIN_LIFETIME)
    return session


class FrameCookies(FlaskCookieService):
    """pylti1p3's state and session-id cookies, inside a platform's frame sent partitioned as
    the quiz's own cookies are; first-party as pylti1p3 sends them (the platform's cross-site
    form post must carry them back)."""

    def update_response(self, response):
        if not in_frame():
            return super().update_response(response)
        for key, cookie in self._cookie_data_to_set.items():
            response.set_cookie(
                key, cookie["value"], max_age=cookie["exp"], path="/", httponly=True,
                **attributes(),
            )  # fmt: skip
        return None


def _oidc_login(session: FlaskSessionService, browser_bound: bool = True) -> FlaskOIDCLogin:
    return FlaskOIDCLogin(
        FlaskRequest(),
        DatabaseToolConf(),
        session_service=session,
        cookie_service=FrameCookies(FlaskRequest()),
        launch_data_storage=_storage(browser_bound),
    )


def login_redirect(launch_url: str, new_window: str | None = None):
    """Answer an OIDC login initiation: remember a state (cookie) and a nonce, then send the
    browser to the platform's authorization endpoint. A login inside a platform's frame names
    `new_window`, the same login in a window of its own, for a launch whose cookie is lost."""
    try:
        answer = _oidc_login(_login_session()).redirect(launch_url)
    except OIDCException as error:
        raise Refusal("platform", str(error)) from error
    if new_window:
        state = dict(parse_qsl(urlsplit(answer.headers["Location"]).query))["state"]
        # Kept outside pylti1p3's browser-bound keys: the launch that needs it has no cookie.
        _login_session(browser_bound=False).save_state_params(state, {FRAMED_PARAMS: new_window})
    return answer


def _unbound_params(state: str | None) -> dict:
    """The state parameters a login kept for its launch outside any browser's cookie."""
    params = _login_session(browser_bound=False).get_state_params(state) if state else None
    return params if isinstance(params, dict) else {}


def framed_new_window() -> str | None:
    """For a launch whose login set partitioned cookies inside the platform's frame, the same
    login in a window of its own; None for any other login."""
    return _unbound_params(request.form.get("state")).get(FRAMED_PARAMS)


@dataclass
class HeldState:
    """A login whose state the platform's frame keeps (LTI client-side storage), not a cookie."""

    state: str
    nonce: str
    target: str
    """The platform's frame that stores it: lti_storage_target, a frame's name or _parent."""
    origin: str
    """The platform's origin (its authorization endpoint's), the only one that frame answers
    from and the only one the state is posted to."""
    issuer: str
    client_id: str
    """The registration the login went through: its launch must come from the same one."""
    new_window: str
    """The same login in a window of its own, where the read-back fails or cannot serve."""
    authorize: str = ""
    """Where the browser goes once the state is stored."""


def origin(url: str) -> str:
    """A URL's origin as a browser writes it (event.origin): lower case, no user, no default
    port."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    return f"{parts.scheme.lower()}://{host}{port}"


def storage_login(launch_url: str, target: str, new_window: str) -> HeldState:
    """Answer an OIDC login initiation whose platform offers client-side storage: a nonce as
    usual, but the state to be put into the platform's frame instead of a cookie (which a
    framed page may not keep). The launch finds it again by its state."""
    session = _login_session(browser_bound=False)
    try:
        # The redirect object is never sent, and with it the state cookie it carries.
        login = _oidc_login(session, browser_bound=False)
        authorize = login.get_redirect_object(launch_url).get_redirect_url()
    except OIDCException as error:
        raise Refusal("platform", str(error)) from error
    sent = dict(parse_qsl(urlsplit(authorize).query))
    issuer = request.values["iss"]  # the registration pylti1p3 just found by it
    held = HeldState(
        sent["state"], sent["nonce"], target, origin(authorize), issuer, sent["client_id"],
        new_window,
    )  # fmt: skip
    session.save_state_params(held.state, {STORAGE_PARAMS: asdict(held)})
    held.authorize = authorize
    return held


def held_state() -> HeldState | None:
    """The launch's state as its login left it in the platform's frame; None when the login
    set the state cookie instead (or never issued this state)."""
    if "lti_held_state" not in g:
        held = _unbound_params(request.form.get("state")).get(STORAGE_PARAMS)
        g.lti_held_state = HeldState(**held) if held else None
    return g.lti_held_state


def read_back(held: HeldState | None) -> bool:
    """This POST comes from the tool's own page that read the state back from the platform's
    frame: only a page of this origin can make a browser mark a form Sec-Fetch-Site:
    same-origin, so another site cannot skip that read by posting here itself."""
    return (
        held is not None
        and request.form.get(STORAGE_CHECKED) == "1"
        and request.headers.get("Sec-Fetch-Site") == "same-origin"
    )


class Launch(FlaskMessageLaunch):
    """A message launch validated in the Security Framework's order, refusing on each check."""

    def __init__(self):
        request = FlaskRequest()
        session = TimedSession()
        session.headers["User-Agent"] = "Quizwright LTI tool"
        try:
            super().__init__(
                request,
                DatabaseToolConf(),
                launch_data_storage=_storage(browser_bound=not read_back(held_state())),
                requests_session=session,
            )
        except LtiException as error:  # no session cookie from the login: another browser
            raise Refusal("state", str(error)) from error
        self.set_public_key_caching(_storage(), KEY_SET_LIFETIME)

    def validate_state(self):
        """The state cookie the login set; or, for a login whose state the platform's frame
        keeps, the tool's own page having read it back from there."""
        if read_back(held_state()):
            return self
        return super().validate_state()

    def validate_held_state(self):
        """A read-back state vouches for its own login only: the id_token must carry that
        login's nonce and come through that login's registration; the state is then used up."""
        held = held_state()
        if not read_back(held):
            return self
        body = self._get_jwt_body()
        registration = (self._registration.get_issuer(), self._registration.get_client_id())
        if body.get("nonce") != held.nonce or registration != (held.issuer, held.client_id):
            raise Refusal("state", "the id_token is not of the login that stored this state")
        taken = storage.take(f"lti1p3-{held.state}")
        if not taken:
            raise Refusal("state", "this state was launched already")
        return self

    def validate(self):
        """Check the state before anything else, and take the nonce only from a launch whose
        signature holds, so a forged launch cannot use up a real one's."""
        if not self._get_request_param("id_token"):
            raise Refusal("no_launch", "no id_token")
        steps = (
            (self.validate_state, "state"),
            (self.validate_jwt_format, "malformed"),
            (self.validate_registration, None),
            (self.validate_jwt_signature, "signature"),
            (self.validate_nonce, "nonce"),
            (self.validate_held_state, "state"),
            (self.validate_deployment, "deployment"),
            (self.validate_message, "message"),
        )
        self._validated = True
        try:
            for step, reason in steps:
                try:
                    step()
                except LtiException as error:
                    raise Refusal(reason or self._unregistered(), str(error)) from error
            return self.save_launch_data()
        except Exception:
            self._validated = False
            raise

    def _unregistered(self) -> str:
        """Why no registration matched: an issuer we know sent it to another client id (its
        audience is wrong), or the issuer itself is unknown."""
        issuer = self._get_jwt_body().get("iss")
        return "audience" if issuer and find_platform(issuer, None, any_one=True) else "platform"

    def get_public_key(self):
        """The platform key the launch names; an unknown kid fetches the key set once more,
        since the platform may have rotated its keys since we cached them."""
        cached = self._cached_key_set() is not None
        try:
            return self._key_from_set()
        except LtiException as error:
            if str(error).startswith(("Error during fetch", "Invalid response")):
                raise Refusal("key_set", str(error)) from error
            if "public key" not in str(error) and "KID" not in str(error):
                raise
            if not cached:  # fetched just now: asking again would only repeat the answer
                raise Refusal("unknown_key", str(error)) from error
            if not self._may_refetch():
                raise Refusal("unknown_key", f"{error}; fetched again lately") from error
        self._forget_key_set()
        try:
            return self._key_from_set()
        except LtiException as error:
            if str(error).startswith(("Error during fetch", "Invalid response")):
                raise Refusal("key_set", str(error)) from error
            raise Refusal("unknown_key", str(error)) from error

    def _key_from_set(self):
        """pylti1p3's key lookup; a key it cannot read (a symmetric key, a part missing) is a
        refusal, whatever the library raised."""
        try:
            return super().get_public_key()
        except (LtiException, Refusal):
            raise
        except Exception as error:  # noqa: BLE001 - jwcrypto, PyJWT and json each raise their own
            raise Refusal("bad_key", f"{type(error).__name__}: {error}") from error

    def _may_refetch(self) -> bool:
        """At most one fetch for an unknown kid per REFETCH_SECONDS: launches with made-up kids
        must not make the tool hammer the platform's key set, each fetch holding a request."""
        marker = "refetched-" + self._key_set_key()
        if storage.value(marker):
            return False
        storage.keep(marker, True, REFETCH_SECONDS)
        return True

    def _key_set_key(self) -> str:
        # The cache key pylti1p3's fetch_public_key reads, outside any browser's session.
        return _key_set_cache_key(self._registration.get_key_set_url())

    def _cached_key_set(self):
        return storage.value(self._key_set_key())

    def _forget_key_set(self):
        storage.forget(self._key_set_key())
        self._registration.set_key_set(None)

    def validate_jwt_signature(self):
        """Signature, issuer, audience and times, checked together by PyJWT; then azp."""
        public_key, algorithm = self.get_public_key()
        if algorithm not in ALGORITHMS:
            raise Refusal("signature", f"algorithm {algorithm} is not allowed")
        client_id = self._registration.get_client_id()
        try:
            body = jwt.decode(
                self._get_id_token(),
                public_key,
                algorithms=[algorithm],
                audience=client_id,
                issuer=self._registration.get_issuer(),
                leeway=CLOCK_SKEW,
                options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
            )
        except (jwt.ExpiredSignatureError, jwt.ImmatureSignatureError) as error:
            raise Refusal("expired", str(error)) from error
        except jwt.InvalidAudienceError as error:
            raise Refusal("audience", str(error)) from error
        except jwt.InvalidIssuerError as error:
            raise Refusal("issuer", str(error)) from error
        except jwt.MissingRequiredClaimError as error:
            raise Refusal("claims", str(error)) from error
        except jwt.InvalidTokenError as error:
            raise Refusal("signature", str(error)) from error
        audiences = body["aud"] if isinstance(body["aud"], list) else [body["aud"]]
        # Several audiences need an azp naming us; an azp, when sent, must name us.
        if ("azp" in body or len(audiences) > 1) and body.get("azp") != client_id:
            raise Refusal("audience", f"azp {body.get('azp')!r} is not {client_id!r}")
        return self

    def validate_message(self):
        """A message type this tool answers, then pylti1p3's checks of that type's claims."""
        message_type = self._get_jwt_body().get(CLAIM + "message_type")
        if message_type not in SUPPORTED_MESSAGES:
            raise Refusal("message_type", f"message type {message_type!r}")
        return super().validate_message()

    def claims(self) -> dict:
        """The validated launch's claims."""
        return self.get_launch_data()


def _key_set_cache_key(url: str) -> str:
    return "key-set-url-" + hashlib.md5(url.encode("utf-8")).hexdigest()


def validated_launch() -> Launch:
    """This request's launch, every check passed and its data saved; or a Refusal."""
    launch = Launch()
    launch.validate()
    return launch
