"""LTI 1.3 launches against the real app under gunicorn, from a test platform built on
lti1p3platform (a platform-side library we did not write) with RSA keys made here."""

import html
import html.parser
import json
import re
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import factories
import jwt
import pytest
import requests
from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request

from app.auth import create_instructor
from app.bank import load_bank
from app.extensions import db
from app.formatting import breakable_address
from app.lti.keys import signing_key
from app.lti.launch import DatabaseStorage
from app.lti.models import (
    LtiAttempt,
    LtiCourse,
    LtiDeployment,
    LtiLaunchData,
    LtiLearner,
    LtiPlatform,
    LtiUser,
)
from app.lti.people import instructor_for, user_for
from app.lti.platforms import PlatformDetails, save_platform
from app.lti.registration import platform_name
from app.lti.storage import aware, purge_expired
from app.models import (
    Answer,
    Attempt,
    Class,
    ClassShare,
    FeedbackWhen,
    Instructor,
    RosterStudent,
    now,
)
from app.releases import publish
from app.served import current_bank

from helpers import (
    SLUG,
    csrf_token,
    empty_rows,
    gunicorn,
    login,
    make_app,
    queries,
    server_database,
    shared_schema,
)

pytestmark = pytest.mark.postgres

CLIENT_ID = "quizwright-at-test-platform"
DEPLOYMENT = "deployment-1"
INSTRUCTOR = ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"]
LEARNER = ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]
COURSE = {"id": "course-42", "title": "Deep Learning Systems"}
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


def private_pem() -> str:
    """A fresh 2048-bit RSA key in PEM, as a platform keeps its own."""
    key = JWK.generate(kty="RSA", size=2048)
    return key.export_to_pem(private_key=True, password=None).decode()


def public_jwk(pem: str) -> dict:
    return Registration.get_jwk(pem)


class PlatformSite:
    """What the platform serves over HTTP: to the tool its key set, services, and for dynamic
    registration its OpenID configuration and registration endpoint; to a browser a course page
    framing the activity, and the authorization endpoint's auto-posted answer. On `host`, as
    browsers reach it (the socket listens on 127.0.0.1 whatever the name)."""

    def __init__(self, host: str = "127.0.0.1"):
        self.keys: list[dict] = []
        self.people: dict[str, Person] = {}
        """Who the browser pages launch, by sub: the platform's signed-in user."""
        self.key_set_fetches = 0
        self.registrations: list[tuple[dict, str | None]] = []
        self.platform: Platform | None = None
        self.token_requests: list[dict] = []
        self.scores: list[tuple[str, dict]] = []
        self.score_status = 200
        self.members: list[dict] = []
        self.members_status = 200
        self.endless_members = False
        self.member_pages = 0
        self.deep_links: list[list[dict]] = []
        """The items of each deep linking answer the return address accepted."""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, body, status=200, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _html(self, page: str, status=200):
                data = page.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path, _, query = self.path.partition("?")
                params = dict(urllib.parse.parse_qsl(query))
                if path in ("/course", "/select"):
                    who = site.people[params["member"]]
                    self._html(site.course_page(who, "storage" in params, path == "/select"))
                elif path == "/auth":
                    self._html(*site.authorization_page(params))
                elif self.path == "/jwks.json":
                    site.key_set_fetches += 1
                    self._json({"keys": site.keys})
                elif self.path.split("?")[0] == "/memberships":
                    self._members()
                elif self.path == "/.well-known/openid-configuration":
                    self._json(site.openid_configuration())
                elif self.path == "/moved":  # a configuration that redirects elsewhere
                    self._json(
                        {}, 302, [("Location", f"{site.url}/.well-known/openid-configuration")]
                    )
                else:
                    self._json({"error": "not found"}, 404)

            def do_POST(self):
                data = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/token":
                    form = dict(urllib.parse.parse_qsl(data.decode()))
                    site.token_requests.append(form)
                    self._json(site.platform.config().get_access_token(form))
                    return
                if self.path.endswith("/scores"):
                    self._score(json.loads(data))
                    return
                if self.path == "/deep-link-return":
                    form = dict(urllib.parse.parse_qsl(data.decode()))
                    self._html(site.deep_link_return(form))
                    return
                body = json.loads(data)
                site.registrations.append((body, self.headers.get("Authorization")))
                if self.headers.get("Authorization") != "Bearer reg-token-1":
                    self._json({"error": "unauthorized"}, 401)
                    return
                tool = body["https://purl.imsglobal.org/spec/lti-tool-configuration"]
                self._json(
                    {
                        **body,
                        "client_id": "dynamic-client",
                        "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                            **tool,
                            "deployment_id": "dynamic-deployment",
                        },
                    }
                )

            def _members(self):
                """The course's membership container (NRPS), to the platform's token only."""
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                site.platform.config().validate_token(token)
                accept = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
                assert self.headers["Accept"] == accept
                site.member_pages += 1
                # A misbehaving platform's container names a next page for ever.
                more = f'<{site.url}/memberships?page={site.member_pages + 1}>; rel="next"'
                self._json({"id": f"{site.url}/memberships", "context": COURSE,
                            "members": site.members}, site.members_status,
                           [("Link", more)] if site.endless_members else [])  # fmt: skip

            def _score(self, body):
                """An AGS score post: refused while the platform is "down", else kept with the
                line item it was posted to, if the bearer token is the platform's own."""
                if site.score_status != 200:
                    self._json({"error": "unavailable"}, site.score_status)
                    return
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                site.platform.config().validate_token(token)
                assert self.headers["Content-Type"] == "application/vnd.ims.lis.v1.score+json"
                site.scores.append((self.path, body))
                self._json({})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def course_page(self, who: "Person", storage: bool = False, select: bool = False) -> str:
        """The course as `who` sees it: the activity in an iframe whose address is the tool's
        login initiation, as platforms embed a tool; with `storage`, the page offers the tool
        LTI client-side storage (itself as lti_storage_target) and answers its messages. With
        `select`, it is the activity form's "Select content" dialog instead, as Moodle's: a deep
        linking launch in the frame, whose return page hands the chosen item to this page."""
        hint = f"deep-link-for-{who.sub}" if select else None
        start = self.platform.login_url(who.sub, f"{self.platform.tool}/lti/launch", hint)
        if storage:
            start += "&" + urllib.parse.urlencode({"lti_storage_target": "_parent"})
        scripts = STORAGE_FRAME % json.dumps(self.platform.tool) if storage else ""
        if select:
            scripts += SELECTED
        return (
            f"<!doctype html><title>{COURSE['title']}</title><h1>{COURSE['title']}</h1>"
            + ('<p>Chosen: <output id="chosen"></output></p>' if select else "")
            + f'<iframe id="activity" title="Quiz activity" src="{html.escape(start)}" '
            'width="900" height="500"></iframe>'
            + (f"<script>{scripts}</script>" if scripts else "")
        )

    def deep_link_return(self, form: dict) -> str:
        """The deep linking return address: the tool's signed answer checked, and its items
        handed to the parent frame only, as Moodle's return page does (a window of its own has
        none, so nothing arrives there)."""
        items = self.platform.config().validate_deeplinking_resp(form)
        self.deep_links.append(items)
        return (
            "<!doctype html><title>Content chosen</title><script>"
            f"if (window !== top) parent.processContentItemReturnData({json.dumps(items)});"
            "</script>"
        )

    def authorization_page(self, query: dict) -> tuple[str, int]:
        """The authorization endpoint's answer to the tool's login redirect: a form of the
        id_token and state that posts itself to the tool's launch URL, as platforms answer."""
        launch_url = f"{self.platform.tool}/lti/launch"
        if query.get("redirect_uri") != launch_url:
            # A platform sends the id_token only to the launch URL registered for the tool.
            return f"redirect_uri {query.get('redirect_uri')!r} is not registered", 400
        deep_link = query.get("lti_message_hint", "").startswith("deep-link-for-")
        who = self.people[query["login_hint"]]
        form = self.platform.authorize(query, launch_url, who, deep_link=deep_link)
        fields = "".join(
            f'<input type="hidden" name="{name}" value="{html.escape(form[name])}">'
            for name in ("id_token", "state")
        )
        page = (
            f'<!doctype html><title>Launching</title><form id="launch" method="post" '
            f'action="{html.escape(form["launch_url"])}">{fields}</form>'
            '<script>document.getElementById("launch").submit()</script>'
        )
        return page, 200

    def openid_configuration(self) -> dict:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/auth",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks.json",
            "registration_endpoint": f"{self.url}/register",
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "testplatform",
            },
        }

    def close(self):
        self.server.shutdown()
        self.server.server_close()


STORAGE_FRAME = """
window.ltiMessages = [];
const kept = {};
window.addEventListener("message", (event) => {
  const asked = event.data;
  if (event.origin !== %s || !asked || typeof asked.subject !== "string") return;
  window.ltiMessages.push(asked.subject);
  const answer = {message_id: asked.message_id, key: asked.key};
  if (asked.subject === "lti.put_data") {
    kept[asked.key] = asked.value;
    answer.value = asked.value;
  } else if (asked.subject === "lti.get_data") {
    answer.value = kept[asked.key];
  } else {
    answer.error = {code: "unsupported_subject", message: asked.subject};
  }
  answer.subject = asked.subject + ".response";
  event.source.postMessage(answer, event.origin);
});
"""
"""The platform's side of LTI client-side storage, written from 1EdTech's specification: values
kept per key for the tool's origin only, each answer sent to the asking window and origin."""
SELECTED = """
window.processContentItemReturnData = (items) => {
  document.getElementById("chosen").textContent = items.map((item) => item.title).join(", ");
};
"""
"""The activity form's side of "Select content": the return page in its dialog frame calls
this with the chosen items, as Moodle's mod_lti/contentitem_return module calls its parent."""


class CoursePlatformConfig(LTI1P3PlatformConfAbstract):
    """lti1p3platform's platform configuration: one registration of the tool."""

    def init_platform_config(self, **kwargs):
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs):
        return self._registration


class PlatformLogin(OIDCLoginAbstract):
    """The platform starting a login: the URL it sends the browser to."""

    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


class PlatformRequest(Request):
    """The browser's request to the platform's authorization endpoint."""

    def build_metadata(self, request):
        return {"method": "GET", "get_data": request, "form_data": {}}


class PlatformLaunch(LTIAdvantageMessageLaunchAbstract):
    """The platform's answer to the tool's authentication request: the form it auto-posts,
    with the claims changed by `tamper` first when a test forges a launch."""

    tamper = None

    def get_launch_data(self):
        message, state = super().get_launch_data()
        if self.tamper:
            self.tamper(message)
        return message, state

    def render_launch_form(self, launch_data, **kwargs):
        return launch_data


@dataclass
class Platform:
    """The test platform: its site, keys and registration of the tool at `tool`."""

    site: PlatformSite
    tool: str
    key: str = field(default_factory=private_pem)
    deployment: str = DEPLOYMENT
    client_id: str = CLIENT_ID

    def __post_init__(self):
        self.site.keys = [public_jwk(self.key)]
        self.site.platform = self

    def config(self) -> "CoursePlatformConfig":
        """lti1p3platform's view of the platform: it issues and checks service tokens."""
        return CoursePlatformConfig(registration=self.registration(f"{self.tool}/lti/launch"))

    @property
    def issuer(self) -> str:
        return self.site.url

    def registration(self, target: str) -> Registration:
        return (
            Registration()
            .set_iss(self.issuer)
            .set_client_id(self.client_id)
            .set_deployment_id(self.deployment)
            .set_oidc_login_url(f"{self.tool}/lti/login")
            .set_launch_url(target)
            .set_platform_private_key(self.key)
            .set_platform_public_key(JWK.from_pem(self.key.encode()).export_to_pem().decode())
            .set_tool_key_set_url(f"{self.tool}/lti/jwks.json")
            .set_deeplink_launch_url(target)
        )

    def login_url(self, sub: str, target: str, hint: str | None = None) -> str:
        """Where the platform sends a browser to start a launch (third-party login); its
        lti_message_hint, which the platform's authorization endpoint reads back, is `hint`."""
        config = CoursePlatformConfig(registration=self.registration(target))
        login = PlatformLogin(None, config)
        login.set_lti_message_hint(hint=hint or f"link-for-{sub}")
        return login.initiate_login(sub)

    def authorize(self, query: dict, target: str, who: "Person", tamper=None, deep_link=False):
        """The platform's authorization endpoint: the id_token and state to post to the tool;
        with `deep_link`, a deep linking request answered at the platform's return address."""
        config = CoursePlatformConfig(registration=self.registration(target))
        launch = PlatformLaunch(PlatformRequest(query), config)
        launch.tamper = tamper
        if deep_link:
            launch.set_dl(f"{self.issuer}/deep-link-return", title="Add a quiz", extra_data="d-1")
        launch.set_user_data(who.sub, who.roles, full_name=who.name)
        launch.set_resource_link_claim(who.link, title="Gradient checkpointing quiz")
        launch.set_launch_context_claim(COURSE["id"], context_title=COURSE["title"])
        if who.custom:
            launch.set_custom_parameters_claim(who.custom)
        launch.set_ags(f"{self.issuer}/lineitems", f"{self.issuer}/lineitems/{who.link}")
        launch.set_nrps(f"{self.issuer}/memberships")
        return launch.lti_launch()


@dataclass
class Person:
    """Someone in the platform's course."""

    sub: str
    name: str
    roles: list[str]
    link: str = "resource-link-1"
    custom: dict | None = None


TEACHER = Person("teacher-sub-1", "Grace Hopper", INSTRUCTOR)
STUDENT = Person("student-sub-7", "Ada Lovelace", LEARNER)


@dataclass
class Sent:
    """What the browser got back from the tool at the end of a launch."""

    response: requests.Response
    form: dict


def launch(platform, browser, who, *, target=None, tamper=None, post=None, deep_link=False):
    """Run a whole launch in `browser`: the platform's login initiation, the tool's redirect to
    the platform, the platform's signed answer, and its form post to the tool's launch URL."""
    target = target or f"{platform.tool}/lti/launch"
    start = browser.get(platform.login_url(who.sub, target), allow_redirects=False)
    assert start.status_code == 302, start.text
    to_platform = urllib.parse.urlsplit(start.headers["Location"])
    assert f"{to_platform.scheme}://{to_platform.netloc}{to_platform.path}" == (
        f"{platform.issuer}/auth"
    )
    query = dict(urllib.parse.parse_qsl(to_platform.query))
    form = platform.authorize(query, target, who, tamper, deep_link)
    fields = {"id_token": form["id_token"], "state": form["state"]}
    if post:
        fields = post(fields)
    response = browser.post(form["launch_url"], data=fields, allow_redirects=False)
    return Sent(response, fields)


@pytest.fixture
def site():
    served = PlatformSite()
    yield served
    served.close()


@dataclass
class World:
    app: object
    tool: str
    platform: Platform
    log: "LogSince"


@dataclass(frozen=True)
class Tool:
    """The tool under gunicorn, shared by a module's tests, and an app on its database."""

    app: object
    url: str
    log: Path


@dataclass(frozen=True)
class LogSince:
    """A server's log from where it stood when the test began."""

    path: Path
    start: int

    def read_text(self) -> str:
        with open(self.path, "rb") as log:
            log.seek(self.start)
            return log.read().decode()


# Kept between a module's tests: the bank the server published at its start, which its workers
# hold in memory, and the tool's signing key, which costs an RSA key to make again.
KEPT = ("quiz_versions", "releases", "offered_quizzes", "lti_tool_keys")


@pytest.fixture(scope="module")
def tool(request, tmp_path_factory):
    """The tool under gunicorn (2 workers: a launch's steps may reach either) for a module's
    tests; each test starts from its rows emptied (`bare_tool`)."""
    folder = tmp_path_factory.mktemp("tool")
    with shared_schema(request.module.__name__) as schema:
        app = make_app(folder, schema)
        # The production keep-alive, waited out once per module: with a shorter one the
        # platform's kept connections would be closed under concurrent launches.
        database = server_database(folder, schema)
        # The test platform is on this machine: dynamic registration may reach it.
        with gunicorn(
            folder, workers=2, keep_alive=5, DATABASE_URL=database, LTI_PRIVATE_PLATFORMS="1"
        ) as server:
            port = server.url.rsplit(":", 1)[1]
            yield Tool(app, server.url, folder / f"gunicorn-{port}.log")
        with app.app_context():
            db.engine.dispose()


@pytest.fixture
def bare_tool(tool):
    """The module's tool with no platform, no people and no attempts: as a new install."""
    with tool.app.app_context():
        empty_rows(db.engine, keep=KEPT)
        # The site quizzes' records, as the kept release serves them: no new release is made.
        publish(load_bank(tool.app.config["QUESTIONS_PATH"]))
    return tool


@pytest.fixture
def world(bare_tool, site):
    """The shared tool with the test platform registered, as `flask lti add-platform` does."""
    return register_site(bare_tool, site)


def register_site(tool: Tool, site) -> World:
    """Register `site`'s platform with the tool; the world a launch test works in."""
    platform = Platform(site, tool.url)
    with tool.app.app_context():
        save_platform(
            PlatformDetails(
                platform.issuer,
                CLIENT_ID,
                f"{site.url}/auth",
                f"{site.url}/token",
                f"{site.url}/jwks.json",
                (DEPLOYMENT,),
                "Test platform",
            )
        )
    return World(tool.app, tool.url, platform, LogSince(tool.log, tool.log.stat().st_size))


@contextmanager
def tool_for(tmp_path, site):
    """A tool of its own under gunicorn with `site`'s platform registered, until the block ends."""
    app = make_app(tmp_path)
    with gunicorn(tmp_path, workers=2) as server:
        port = server.url.rsplit(":", 1)[1]
        yield register_site(Tool(app, server.url, tmp_path / f"gunicorn-{port}.log"), site)


def counts(app) -> dict[str, int]:
    """Rows a launch could add: anything stored by a refused one shows here."""
    tables = (Instructor, Class, Attempt, LtiUser, LtiCourse, LtiAttempt)
    with app.app_context():
        return {
            model.__tablename__: db.session.scalar(db.select(db.func.count()).select_from(model))
            for model in tables
        }


def page_text(response) -> str:
    """The page's words as a reader sees them: white space folded, entities decoded."""
    return html.unescape(" ".join(response.text.split()))


def test_the_tool_publishes_its_key_for_the_platform(world):
    """The platform library reads the tool's key set from /lti/jwks.json: one RSA signing key."""
    platform = CoursePlatformConfig(registration=world.platform.registration("x"))
    platform.get_registration()
    keys = platform.get_tool_key_set()["keys"]
    assert len(keys) == 1
    assert keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256" and keys[0]["use"] == "sig"
    assert "d" not in keys[0]  # the private half never leaves
    assert JWK(**keys[0]).thumbprint() == keys[0]["kid"]


def test_instructor_launch_opens_the_course_class_logged_in(world):
    """An instructor's first launch makes a linked account and the course's class, and lands on
    its class page, logged in; a second launch opens the same class."""
    browser = requests.Session()
    sent = launch(world.platform, browser, TEACHER)
    assert sent.response.status_code == 303
    class_page = sent.response.headers["Location"]
    assert re.fullmatch(r"/teach/classes/\d+", class_page)
    page = browser.get(world.tool + class_page)
    assert page.status_code == 200
    assert COURSE["title"] in page_text(page)

    with world.app.app_context():
        account = db.session.scalars(db.select(Instructor)).one()
        assert account.username.startswith("lti-")
        assert not account.is_admin
        class_ = db.session.scalars(db.select(Class)).one()
        assert class_.name == COURSE["title"] and class_.instructor_id == account.id
        user = db.session.scalars(db.select(LtiUser)).one()
        assert (user.sub, user.name, user.instructor_id) == (TEACHER.sub, TEACHER.name, account.id)

    again = launch(world.platform, requests.Session(), TEACHER)
    assert again.response.headers["Location"] == class_page
    assert counts(world.app)["classes"] == 1
    assert counts(world.app)["instructors"] == 1


def test_a_linked_account_cannot_log_in_with_a_password(world):
    """The account a launch made has no password anyone could type."""
    launch(world.platform, requests.Session(), TEACHER)
    with world.app.app_context():
        username = db.session.scalars(db.select(Instructor.username)).one()
    browser = requests.Session()
    token = csrf_token(browser.get(f"{world.tool}/login").text)
    for password in ("", "!lti", "lti"):
        tried = browser.post(
            f"{world.tool}/login",
            data={"csrf_token": token, "username": username, "password": password},
            allow_redirects=False,
        )
        assert tried.status_code == 400


def test_learner_launch_takes_the_quiz_without_typing_a_name(world):
    """After the instructor's first launch, a learner's launch starts an attempt in the course's
    class under the platform's name, and the student answers in it at once."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    sent = launch(world.platform, browser, STUDENT)
    assert sent.response.status_code == 303
    location = sent.response.headers["Location"]
    assert re.fullmatch(r"/attempts/[\w-]+/questions/1", location)

    question = browser.get(world.tool + location)
    assert question.status_code == 200
    choice = re.findall(r'type="radio"[^>]*value="([^"]+)"', question.text)[0]
    answered = browser.post(
        world.tool + location,
        data={"csrf_token": csrf_token(question.text), "choice": choice},
        allow_redirects=False,
    )
    assert answered.status_code == 303

    with world.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        course = db.session.scalars(db.select(LtiCourse)).one()
        assert attempt.student_name == STUDENT.name
        assert attempt.class_id == course.class_id
        link = db.session.get(LtiAttempt, attempt.id)
        assert link.resource_link_id == STUDENT.link
        assert db.session.get(LtiUser, link.user_id).sub == STUDENT.sub
        # They are a roster student of the class, known by the platform's sub, not a name.
        student = attempt.roster_student
        assert (student.name, student.class_id) == (STUDENT.name, course.class_id)
        learner = db.session.get(LtiLearner, student.id)
        assert learner.user.sub == STUDENT.sub
        assert attempt.student_key == student.student_key
        assert db.session.scalar(db.select(db.func.count()).select_from(Answer)) == 1


def test_a_learner_launching_again_continues_their_attempt(world):
    """A second launch, even from another browser, continues the unfinished attempt there."""
    launch(world.platform, requests.Session(), TEACHER)
    first = launch(world.platform, requests.Session(), STUDENT).response.headers["Location"]
    token = first.split("/")[2]
    elsewhere = requests.Session()
    again = launch(world.platform, elsewhere, STUDENT).response
    assert again.headers["Location"] == f"/attempts/{token}/continue"
    assert elsewhere.get(f"{world.tool}/attempts/{token}/questions/1").status_code == 200
    assert counts(world.app)["attempts"] == 1


def test_learners_sharing_a_name_are_two_roster_students(world):
    """Two learners the platform names alike are told apart by their sub; a new name at the
    next launch renames the roster student rather than making another."""
    launch(world.platform, requests.Session(), TEACHER)
    launch(world.platform, requests.Session(), Person("sub-a", "Sam Lee", LEARNER))
    launch(world.platform, requests.Session(), Person("sub-b", "Sam Lee", LEARNER))
    launch(world.platform, requests.Session(), Person("sub-b", "Sam Leigh", LEARNER))
    with world.app.app_context():
        names = db.session.execute(
            db.select(LtiUser.sub, RosterStudent.name)
            .join(LtiLearner, LtiLearner.user_id == LtiUser.id)
            .join(RosterStudent, RosterStudent.id == LtiLearner.roster_student_id)
            .order_by(LtiUser.sub)
        ).all()
        assert [tuple(row) for row in names] == [("sub-a", "Sam Lee"), ("sub-b", "Sam Leigh")]
        keys = db.session.scalars(db.select(Attempt.student_key)).all()
        assert len(set(keys)) == 2


def test_a_typed_student_number_equal_to_a_sub_stays_its_students(world):
    """An instructor typed 42 for a student who never launched; the platform's learner whose
    sub is 42 launches into a roster place of their own, and the typed student keeps theirs."""
    launch(world.platform, requests.Session(), TEACHER)
    with world.app.app_context():
        class_id = db.session.scalars(db.select(Class.id)).one()
        factories.roster(class_id, "Grace Hopper, 42")
    launched = launch(world.platform, requests.Session(), Person("42", "Alan Turing", LEARNER))
    assert launched.response.status_code == 303
    with world.app.app_context():
        numbers = db.session.execute(
            db.select(RosterStudent.name, RosterStudent.student_number).order_by(RosterStudent.id)
        ).all()
        expected = [("Grace Hopper", "42"), ("Alan Turing", "lti:42")]
        assert [tuple(row) for row in numbers] == expected


def assign(world, **settings):
    """The course's class assigns the quiz with these settings, as "Assign a quiz" saves them."""
    with world.app.app_context():
        class_ = db.session.scalars(db.select(Class)).one()
        factories.assignment(class_, current_bank().quizzes[SLUG], **settings)


def answer_all(world, browser, location) -> None:
    """Answer every question of the attempt a launch led to, as the student pages take them,
    and finish it where answers could change until then."""
    token = location.split("/")[2]
    with world.app.app_context():
        questions = len(current_bank().quizzes[SLUG].questions)
    for number in range(1, questions + 1):
        here = f"{world.tool}/attempts/{token}/questions/{number}"
        page = browser.get(here)
        choice = re.findall(r'type="radio"[^>]*value="([^"]+)"', page.text)[0]
        sent = browser.post(here, data={"csrf_token": csrf_token(page.text), "choice": choice},
                            allow_redirects=False)  # fmt: skip
        assert sent.status_code == 303
    summary = browser.get(f"{world.tool}/attempts/{token}/results")
    if "Summary of your attempt" in summary.text:
        sent = {"csrf_token": csrf_token(summary.text)}
        finish = browser.post(f"{world.tool}/attempts/{token}/finish", data=sent,
                              allow_redirects=False)  # fmt: skip
        assert finish.status_code == 303


def test_a_launch_follows_the_assignments_attempt_limit(world):
    """With one attempt allowed, a learner who finished it is told so at the next launch, and
    no second attempt starts."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, attempts_allowed=1)
    browser = requests.Session()
    first = launch(world.platform, browser, STUDENT).response
    assert first.status_code == 303, page_text(first)
    answer_all(world, browser, first.headers["Location"])
    again = launch(world.platform, requests.Session(), STUDENT).response
    assert again.status_code == 403
    assert "No attempts left" in page_text(again)
    assert counts(world.app)["attempts"] == 1


def test_a_launch_outside_the_assignments_window_starts_nothing(world):
    """Before the assignment opens a launch says it is not open yet, and stores no attempt."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, opens_at=now() + timedelta(days=1), closes_at=now() + timedelta(days=2))
    refused = launch(world.platform, requests.Session(), STUDENT).response
    assert refused.status_code == 403
    assert counts(world.app)["attempts"] == 0


def test_a_launched_attempt_has_the_time_limit_and_held_feedback(world):
    """The assignment's time limit fixes the launched attempt's end, and with feedback held
    until the quiz closes the answer page shows no verdict."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, time_limit_minutes=20, feedback=FeedbackWhen.AFTER_CLOSE,
           closes_at=now() + timedelta(days=1))  # fmt: skip
    browser = requests.Session()
    location = launch(world.platform, browser, STUDENT).response.headers["Location"]
    page = browser.get(world.tool + location)
    choice = re.findall(r'type="radio"[^>]*value="([^"]+)"', page.text)[0]
    answered = browser.post(world.tool + location, data={"csrf_token": csrf_token(page.text),
                            "choice": choice})  # fmt: skip
    assert "Your answer to question 1 is saved" in page_text(answered)
    assert "Correct" not in page_text(answered) and "Incorrect" not in page_text(answered)
    with world.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert aware(attempt.ends_at) - aware(attempt.started_at) == timedelta(minutes=20)
        assert attempt.assignment_id is not None


def test_a_learner_removed_from_the_roster_cannot_start(world):
    """Removing a launched learner from the roster stops their launches from starting attempts."""
    launch(world.platform, requests.Session(), TEACHER)
    launch(world.platform, requests.Session(), Person(STUDENT.sub, STUDENT.name, LEARNER, "l-2"))
    with world.app.app_context():
        student = db.session.scalars(db.select(RosterStudent)).one()
        student.removed_at = now()
        db.session.commit()
    refused = launch(world.platform, requests.Session(), STUDENT).response
    assert refused.status_code == 403
    assert "removed from" in page_text(refused)
    assert counts(world.app)["attempts"] == 1


def test_the_target_link_uri_or_custom_parameter_names_the_quiz(world):
    """`?quiz=` in the target link URI and the custom parameter `quiz` choose the quiz; one
    that is not offered gets a 404 page that says so, and no attempt."""
    launch(world.platform, requests.Session(), TEACHER)
    by_target = launch(
        world.platform, requests.Session(), STUDENT, target=f"{world.tool}/lti/launch?quiz={SLUG}"
    )
    assert by_target.response.status_code == 303
    unknown = Person("student-2", "Alan Turing", LEARNER, custom={"quiz": "no-such-quiz"})
    refused = launch(world.platform, requests.Session(), unknown).response
    assert refused.status_code == 404
    assert "names no quiz Quizwright offers" in page_text(refused)
    assert counts(world.app)["attempts"] == 1


def test_a_learner_before_any_instructor_is_told_to_wait(world):
    """Before the course has a class, a learner's launch explains why nothing can start yet."""
    refused = launch(world.platform, requests.Session(), STUDENT).response
    assert refused.status_code == 409
    assert "your instructor opens the activity once first" in page_text(refused)
    assert counts(world.app)["attempts"] == 0


def test_a_role_without_a_page_is_refused(world):
    """A mentor (neither teaching nor learning) gets a 403 page and no account."""
    mentor = Person("mentor-1", "Mia", ["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"])
    refused = launch(world.platform, requests.Session(), mentor).response
    assert refused.status_code == 403
    assert "no page in Quizwright" in page_text(refused)
    assert counts(world.app)["instructors"] == 0


def test_first_launches_at_once_make_one_class(world):
    """Two instructors of one course launching at the same moment share one class: the first
    to commit owns it, and it is shared with the others to manage."""
    teachers = [Person(f"teacher-{n}", f"Teacher {n}", INSTRUCTOR) for n in range(4)]
    browsers = [requests.Session() for _ in teachers]
    with ThreadPoolExecutor(max_workers=4) as pool:
        sent = list(
            pool.map(
                lambda pair: launch(world.platform, *pair), zip(browsers, teachers, strict=True)
            )
        )
    assert [s.response.status_code for s in sent] == [303] * 4
    assert counts(world.app)["classes"] == 1
    assert counts(world.app)["lti_courses"] == 1
    with world.app.app_context():
        class_ = db.session.scalars(db.select(Class)).one()
        shares = db.session.scalars(db.select(ClassShare)).all()
        assert sorted(share.role for share in shares) == ["manage"] * 3
        assert class_.instructor_id not in {share.instructor_id for share in shares}
    for browser, s in zip(browsers, sent, strict=True):
        assert s.response.headers["Location"] == f"/teach/classes/{class_.id}"
        assert COURSE["title"] in page_text(
            browser.get(world.tool + s.response.headers["Location"])
        )


TEACHING_ASSISTANT = [
    "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
]


def test_a_second_instructor_manages_and_an_assistant_views_the_class(world):
    """Another instructor of the course gets the class shared to manage it, a teaching
    assistant to view it: the assistant sees the results but cannot change the class."""
    launch(world.platform, requests.Session(), TEACHER)
    colleague, assistant = requests.Session(), requests.Session()
    in_colleague = launch(world.platform, colleague, Person("t-2", "Edsger Dijkstra", INSTRUCTOR))
    in_assistant = launch(world.platform, assistant, Person("ta-3", "Barbara", TEACHING_ASSISTANT))
    page = in_assistant.response.headers["Location"]
    assert in_colleague.response.headers["Location"] == page
    assert COURSE["title"] in page_text(assistant.get(world.tool + page))
    class_id = int(page.rsplit("/", 1)[1])

    def close(browser):
        form = browser.get(world.tool + page).text
        token = {"csrf_token": csrf_token(form)}
        return browser.post(f"{world.tool}/teach/classes/{class_id}/close", data=token,
                            allow_redirects=False)  # fmt: skip

    assert close(assistant).status_code == 403
    assert close(colleague).status_code == 303
    with world.app.app_context():
        roles = {
            share.instructor_id: share.role for share in db.session.scalars(db.select(ClassShare))
        }
        assert sorted(roles.values()) == ["manage", "view"]
        assert db.session.get(Class, class_id).is_open is False


def test_an_assistant_cannot_make_the_course_class(world):
    """A teaching assistant launching before any instructor is told to wait: making the class
    would make them its owner, with more than the LMS gives them. After the instructor's
    launch they view it."""
    assistant = Person("ta-3", "Barbara", TEACHING_ASSISTANT)
    refused = launch(world.platform, requests.Session(), assistant)
    assert refused.response.status_code == 409
    assert "an instructor of the course opens" in page_text(refused.response)
    # Choosing the activity's quiz would change the class, which an assistant only views.
    choosing = launch(world.platform, requests.Session(), assistant, deep_link=True)
    assert choosing.response.status_code == 403
    assert counts(world.app)["classes"] == 0
    launch(world.platform, requests.Session(), TEACHER)
    assert launch(world.platform, requests.Session(), assistant).response.status_code == 303
    with world.app.app_context():
        class_ = db.session.scalars(db.select(Class)).one()
        owner = db.session.get(Instructor, class_.instructor_id)
        assert db.session.scalars(
            db.select(LtiUser.sub).filter_by(instructor_id=owner.id)
        ).one() == (TEACHER.sub)
        assert db.session.scalars(db.select(ClassShare.role)).one() == "view"


def test_an_assistant_promoted_in_the_lms_manages_the_class(world):
    """The LMS is the authority on teaching roles: a TA made an instructor gets manage at the
    next launch; a share the owner made for more is never lowered by a launch."""
    launch(world.platform, requests.Session(), TEACHER)
    launch(world.platform, requests.Session(), Person("ta-3", "Barbara", TEACHING_ASSISTANT))
    launch(world.platform, requests.Session(), Person("ta-3", "Barbara", INSTRUCTOR))
    launch(world.platform, requests.Session(), Person("ta-3", "Barbara", TEACHING_ASSISTANT))
    with world.app.app_context():
        assert db.session.scalars(db.select(ClassShare.role)).one() == "manage"


SANDBOX = {"id": "sandbox-9", "title": "Ada's sandbox"}


@pytest.mark.parametrize("where", ["assists in the course", "teaches a sandbox course"])
def test_a_teaching_role_counts_only_in_its_own_course(world, where):
    """A learner who assists in a course or teaches a sandbox one gets that course's class as
    the role allows, and nothing else: no preview or download with the key, no quiz list, no
    class of their own, until an admin grants the account."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    if where == "assists in the course":
        ada = Person(STUDENT.sub, STUDENT.name, TEACHING_ASSISTANT)
        sent = launch(world.platform, browser, ada)
    else:
        ada = Person(STUDENT.sub, STUDENT.name, INSTRUCTOR)
        sent = launch(world.platform, browser, ada, tamper=setter(CLAIM + "context", SANDBOX))
    class_page = browser.get(world.tool + sent.response.headers["Location"])
    assert class_page.status_code == 200 and "/preview" not in class_page.text
    keys = (f"/teach/quizzes/{SLUG}/preview", f"/teach/quizzes/{SLUG}/download/gift")
    for address in keys:
        refused = browser.get(world.tool + address)
        assert refused.status_code == 403 and "reaches that course" in page_text(refused)
    dashboard = browser.get(f"{world.tool}/teach")
    assert "/preview" not in dashboard.text and "Create a class" not in dashboard.text
    start = browser.get(f"{world.tool}/quizzes/{SLUG}")
    assert start.status_code == 200 and "/preview" not in start.text
    classes = counts(world.app)["classes"]
    made = browser.post(f"{world.tool}/teach", data={"csrf_token": csrf_token(dashboard.text),
                        "name": "Mine"}, allow_redirects=False)  # fmt: skip
    assert made.status_code == 403 and counts(world.app)["classes"] == classes
    with world.app.app_context():
        account = db.session.scalars(db.select(LtiUser).filter_by(sub=STUDENT.sub)).one()
        username = account.instructor.username
    granted = world.app.test_cli_runner().invoke(args=["grant-instructor", username])
    assert granted.exit_code == 0, granted.output
    again = requests.Session()  # the grant ended their session: they launch again
    launch(world.platform, again, Person(STUDENT.sub, STUDENT.name, INSTRUCTOR),
           tamper=setter(CLAIM + "context", SANDBOX))  # fmt: skip
    for address in keys:
        assert again.get(world.tool + address).status_code == 200


def test_two_deployments_never_share_a_course_class(world):
    """LTI makes a context id unique only within a deployment: a second deployment's instructor
    sending the same context id gets a class of their own, and its learners land on its
    roster, not the first's."""
    with world.app.app_context():
        platform = db.session.scalars(db.select(LtiPlatform)).one()
        db.session.add(LtiDeployment(platform_id=platform.id, deployment_id="deployment-2"))
        db.session.commit()
    first = launch(world.platform, requests.Session(), TEACHER).response.headers["Location"]
    world.platform.deployment = "deployment-2"
    stranger = Person("teacher-sub-9", "Mallory", INSTRUCTOR)
    theirs = launch(world.platform, requests.Session(), stranger).response.headers["Location"]
    assert theirs != first
    launch(world.platform, requests.Session(), Person("learner-2", "Eve", LEARNER))
    world.platform.deployment = DEPLOYMENT
    launch(world.platform, requests.Session(), STUDENT)
    with world.app.app_context():
        courses = db.session.scalars(db.select(LtiCourse).order_by(LtiCourse.id)).all()
        assert [course.deployment_id for course in courses] == [DEPLOYMENT, "deployment-2"]
        assert db.session.scalars(db.select(ClassShare)).all() == []
        rosters = {
            course.deployment_id: db.session.scalars(
                db.select(RosterStudent.name).filter_by(class_id=course.class_id)
            ).all()
            for course in courses
        }
    assert rosters == {DEPLOYMENT: [STUDENT.name], "deployment-2": ["Eve"]}


def test_a_course_stored_before_deployments_were_recorded_is_claimed_by_its_next_launch(world):
    """Revision 0018 leaves a course of a several-deployment platform unclaimed: the next
    launch in it names its deployment, and another deployment then gets a class of its own."""
    first = launch(world.platform, requests.Session(), TEACHER).response.headers["Location"]
    with world.app.app_context():
        platform = db.session.scalars(db.select(LtiPlatform)).one()
        db.session.add(LtiDeployment(platform_id=platform.id, deployment_id="deployment-2"))
        db.session.execute(db.update(LtiCourse).values(deployment_id=None))
        db.session.commit()
    assert launch(world.platform, requests.Session(), STUDENT).response.status_code == 303
    world.platform.deployment = "deployment-2"
    stranger = Person("teacher-sub-9", "Mallory", INSTRUCTOR)
    assert (
        launch(world.platform, requests.Session(), stranger).response.headers["Location"] != first
    )
    with world.app.app_context():
        claimed = db.session.scalars(db.select(LtiCourse.deployment_id).order_by(LtiCourse.id))
        assert claimed.all() == [DEPLOYMENT, "deployment-2"]


def test_an_archived_course_class_takes_no_launch_that_would_change_it(world):
    """Attacker repro: once the course's class is archived, a learner's launch starts nothing
    (no attempt, no roster place) and a new instructor's launch gets no share; its owner still
    opens it, read-only."""
    owner = requests.Session()
    page = launch(world.platform, owner, TEACHER).response.headers["Location"]
    with world.app.app_context():
        db.session.execute(db.update(Class).values(archived_at=now()))
        db.session.commit()
    before = counts(world.app)
    learner = launch(world.platform, requests.Session(), STUDENT).response
    assert learner.status_code == 403 and "Your class has ended" in page_text(learner)
    newcomer = Person("t-2", "Edsger Dijkstra", INSTRUCTOR)
    refused = launch(world.platform, requests.Session(), newcomer).response
    assert refused.status_code == 403 and "archived in Quizwright" in page_text(refused)
    after = counts(world.app)
    # Who launched is known now (a platform user each); the refusal made no account.
    grown = {name: after[name] - before[name] for name in after}
    assert grown == {**dict.fromkeys(after, 0), "lti_users": 2}
    with world.app.app_context():
        assert db.session.scalars(db.select(ClassShare)).all() == []
        assert db.session.scalars(db.select(RosterStudent)).all() == []
    again = launch(world.platform, owner, TEACHER).response
    assert again.headers["Location"] == page


def test_another_registration_of_the_issuer_has_its_own_accounts(world):
    """Two client ids of one issuer are two platforms, each vouching for its own users: a launch
    through the second with a sub the first knows gets an account of its own, never the
    first's account and class."""
    first = launch(world.platform, requests.Session(), TEACHER).response.headers["Location"]
    site = world.platform.site
    with world.app.app_context():
        save_platform(
            PlatformDetails(
                site.url,
                "second-client",
                f"{site.url}/auth",
                f"{site.url}/token",
                f"{site.url}/jwks.json",
                (DEPLOYMENT,),
                "Second",
            )  # fmt: skip
        )
    # Another key: whoever holds the second registration signs for it alone.
    second = Platform(site, world.tool, client_id="second-client")
    browser = requests.Session()
    sent = launch(second, browser, TEACHER).response
    assert sent.status_code == 303, page_text(sent)
    assert sent.headers["Location"] != first
    assert browser.get(world.tool + first).status_code == 404
    with world.app.app_context():
        linked = db.session.scalars(db.select(LtiUser.instructor_id)).all()
        assert len(set(linked)) == 2
        assert counts(world.app)["instructors"] == 2


# --- Each Security Framework check, failing: a page saying what, a log line, nothing stored.


def forged(key_pem: str, kid: str):
    """Re-sign a launch's id_token with another key, keeping (or changing) its kid."""

    def post(fields):
        claims = jwt.decode(fields["id_token"], options={"verify_signature": False})
        token = jwt.encode(claims, key_pem, algorithm="RS256", headers={"kid": kid})
        return {**fields, "id_token": token}

    return post


def setter(claim, value):
    def tamper(message):
        message[claim] = value

    return tamper


def refused_launch(world, reason, status, words, **how):
    """Launch as the student after the instructor; check the refusal, its log and no rows."""
    launch(world.platform, requests.Session(), TEACHER)
    before = counts(world.app)
    sent = launch(world.platform, requests.Session(), STUDENT, **how)
    assert sent.response.status_code == status, page_text(sent.response)
    assert words in page_text(sent.response)
    assert f"LTI launch refused: <code>{reason}</code>" in sent.response.text
    assert counts(world.app) == before
    assert f"lti launch refused ({reason})" in world.log.read_text()
    return sent


def test_wrong_signature_is_refused(world):
    """Signed by another key under the platform's kid: 401, the signature does not match."""
    kid = public_jwk(world.platform.key)["kid"]
    refused_launch(
        world, "signature", 401, "signature does not match", post=forged(private_pem(), kid)
    )


def test_unknown_kid_refetches_the_key_set_then_refuses(world):
    """A kid the cached key set lacks makes the tool fetch the set again; still unknown, 401."""
    stranger = private_pem()
    fetches = world.platform.site.key_set_fetches
    refused_launch(
        world,
        "unknown_key",
        401,
        "the platform's key set does not publish",
        post=forged(stranger, public_jwk(stranger)["kid"]),
    )
    # The instructor's launch fetched it once, the unknown kid once more.
    assert world.platform.site.key_set_fetches == fetches + 2


@pytest.mark.parametrize(
    ("key", "reason", "words"),
    [
        ({"kty": "oct", "k": "c2VjcmV0LXdpdGgtbm9ib2R5"}, "bad_key", "cannot check an RSA"),
        ({"kty": "RSA", "e": "AQAB"}, "bad_key", "cannot check an RSA"),
        ({"kty": "nonsense"}, "bad_key", "cannot check an RSA"),
        ({"kty": "RSA", "n": "not base64url!", "e": "AQAB"}, "bad_key", "cannot check an RSA"),
        # A key, but not the one that signed.
        ({"kty": "RSA", "n": public_jwk(private_pem())["n"], "e": "AQAB"}, "signature",
         "does not match"),
    ],
    ids=["symmetric", "no modulus", "unknown type", "bad modulus", "another modulus"],
)
def test_any_key_set_content_is_a_refusal(world, key, reason, words):
    """Attacker repro: the platform's key set holds a symmetric (or broken) key under the kid
    the token names; jwcrypto's error was a 500. Any key content is a 401 and a log line."""
    world.platform.site.keys = [*world.platform.site.keys, {**key, "kid": "odd-1"}]
    refused_launch(world, reason, 401, words, post=forged(private_pem(), "odd-1"))


def launch_with_a_made_up_kid(world, who) -> Sent:
    """A launch signed by a key no platform published, under a kid of its own: refused."""
    stranger = private_pem()
    forgery = forged(stranger, public_jwk(stranger)["kid"])
    sent = launch(world.platform, requests.Session(), who, post=forgery)
    assert sent.response.status_code == 401
    return sent


def test_made_up_kids_fetch_the_key_set_once_in_a_while(world):
    """Launches signed with one made-up kid after another make one fetch, not one each: the
    tool will not hammer the platform's key set for whoever sends them."""
    launch(world.platform, requests.Session(), TEACHER)
    fetches = world.platform.site.key_set_fetches
    for _ in range(3):
        sent = launch_with_a_made_up_kid(world, STUDENT)
        assert "LTI launch refused: <code>unknown_key</code>" in sent.response.text
    assert world.platform.site.key_set_fetches == fetches + 1


def test_a_key_set_fetched_just_now_is_not_fetched_again(world):
    """The first launch fetches the key set; if its kid is missing there, one fetch was enough."""
    fetches = world.platform.site.key_set_fetches
    launch_with_a_made_up_kid(world, TEACHER)
    assert world.platform.site.key_set_fetches == fetches + 1


def test_a_platform_that_rotated_its_key_is_followed(world):
    """After the platform replaces its key, the next launch's new kid refreshes the cached key
    set and the launch succeeds."""
    assert launch(world.platform, requests.Session(), TEACHER).response.status_code == 303
    fetched = world.platform.site.key_set_fetches
    assert launch(world.platform, requests.Session(), TEACHER).response.status_code == 303
    assert world.platform.site.key_set_fetches == fetched  # cached
    world.platform.key = private_pem()
    world.platform.site.keys = [public_jwk(world.platform.key)]
    assert launch(world.platform, requests.Session(), TEACHER).response.status_code == 303
    assert world.platform.site.key_set_fetches == fetched + 1


def test_wrong_audience_is_refused(world):
    """A launch for another tool's client id: 401."""
    refused_launch(
        world, "audience", 401, "not this tool's client id", tamper=setter("aud", "other-tool")
    )


def test_foreign_azp_is_refused(world):
    """Several audiences with an azp naming another tool: 401."""

    def two_audiences(message):
        message["aud"] = [CLIENT_ID, "other-tool"]
        message["azp"] = "other-tool"

    refused_launch(world, "audience", 401, "not this tool's client id", tamper=two_audiences)


def test_expired_launch_is_refused(world):
    """An id_token whose exp passed (beyond a minute's clock skew): 401."""

    def post(fields):
        claims = jwt.decode(fields["id_token"], options={"verify_signature": False})
        claims["iat"] -= 600
        claims["exp"] = claims["iat"] + 300
        kid = public_jwk(world.platform.key)["kid"]
        token = jwt.encode(claims, world.platform.key, algorithm="RS256", headers={"kid": kid})
        return {**fields, "id_token": token}

    refused_launch(world, "expired", 401, "The launch has expired", post=post)


def test_replayed_launch_is_refused(world):
    """The same id_token and state posted again from the same browser: the nonce is used up."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    first = launch(world.platform, browser, STUDENT)
    assert first.response.status_code == 303
    before = counts(world.app)
    again = browser.post(f"{world.tool}/lti/launch", data=first.form, allow_redirects=False)
    assert again.status_code == 401
    assert "a launch works once" in page_text(again)
    assert counts(world.app) == before
    assert "lti launch refused (nonce)" in world.log.read_text()


def test_launch_without_state_is_refused(world):
    """No state at all: 401."""
    refused_launch(
        world,
        "state",
        401,
        "did not carry the state this browser was given",
        post=lambda fields: {"id_token": fields["id_token"]},
    )


def test_launch_with_a_foreign_state_is_refused(world):
    """A state this browser was never given (another browser's): 401."""
    refused_launch(
        world,
        "state",
        401,
        "did not carry the state this browser was given",
        post=lambda fields: {**fields, "state": "state-from-another-browser"},
    )


def test_launch_finished_in_another_browser_is_refused(world):
    """The login started in one browser, the launch posted from another (no cookies): 401."""
    launch(world.platform, requests.Session(), TEACHER)
    started = requests.Session()
    target = f"{world.tool}/lti/launch"
    redirect = started.get(world.platform.login_url(STUDENT.sub, target), allow_redirects=False)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect.headers["Location"]).query))
    form = world.platform.authorize(query, target, STUDENT)
    before = counts(world.app)
    other = requests.post(
        form["launch_url"],
        data={"id_token": form["id_token"], "state": form["state"]},
        allow_redirects=False,
    )
    assert other.status_code == 401
    assert counts(world.app) == before


def test_unregistered_deployment_is_refused(world):
    """A deployment id the admin never registered: 400."""
    world.platform.deployment = "deployment-unknown"
    refused_launch(world, "deployment", 400, "not registered for this platform")


def test_wrong_message_type_is_refused(world):
    """A message type the tool does not answer: 400."""
    refused_launch(
        world,
        "message_type",
        400,
        "deep linking requests (LtiDeepLinkingRequest) only",
        tamper=setter(CLAIM + "message_type", "LtiSubmissionReviewRequest"),
    )


def test_wrong_lti_version_is_refused(world):
    """An LTI version other than 1.3.0: 400."""
    refused_launch(
        world,
        "message",
        400,
        "not a valid LTI 1.3 message",
        tamper=setter(CLAIM + "version", "1.1"),
    )


def test_unregistered_platform_is_refused_at_login(world):
    """A login initiation from an issuer nobody registered: 400 before any redirect."""
    stranger = Platform(world.platform.site, world.tool, client_id="unknown-client")
    response = requests.get(
        stranger.login_url("x", f"{world.tool}/lti/launch"), allow_redirects=False
    )
    assert response.status_code == 400
    assert "No platform with this issuer and client id" in page_text(response)


def test_a_login_keeps_its_nonce_for_ten_minutes(world):
    """The nonce a login stores expires after ten minutes; the state cookie after five."""
    started = now()
    response = requests.get(
        world.platform.login_url("x", f"{world.tool}/lti/launch"), allow_redirects=False
    )
    state_cookie = next(c for c in response.cookies if c.name.startswith("lti1p3-state-"))
    assert started.timestamp() + 290 < state_cookie.expires <= started.timestamp() + 310
    with world.app.app_context():
        rows = db.session.scalars(db.select(LtiLaunchData)).all()
    nonces = [row for row in rows if "-nonce-" in row.key]
    assert len(nonces) == 1
    expires = aware(nonces[0].expires_at)
    assert started + timedelta(seconds=590) < expires <= now() + timedelta(seconds=600)


def test_a_login_for_another_site_is_refused(world):
    """A target_link_uri that is not this tool's: 400, no redirect to the platform, and its
    text quoted in the log, never able to start a forged line."""
    response = requests.get(
        world.platform.login_url("x", "https://elsewhere.example/lti/launch\nFORGED: line"),
        allow_redirects=False,
    )
    assert response.status_code == 400
    log = world.log.read_text()
    assert "lti launch refused (no_launch)" in log
    assert "\nFORGED" not in log


def test_launch_needs_a_post_from_a_platform(world):
    """Opening the launch address by hand, or a platform checking it as Moodle does when an
    activity is saved, gets a plain page that says what it is for, and no refusal is logged."""
    for ask in (requests.get, requests.head):
        response = ask(f"{world.tool}/lti/launch")
        assert response.status_code == 200
    assert "Open the activity from your course" in page_text(
        requests.get(f"{world.tool}/lti/launch")
    )
    assert "lti launch refused" not in world.log.read_text()


# --- Framing and the new-window fallback


def frame_ancestors(response) -> str:
    policy = response.headers["Content-Security-Policy"]
    return next(part.strip() for part in policy.split(";") if "frame-ancestors" in part)


def test_lms_pages_offer_no_instructor_log_in(world):
    """A launched learner's pages and the LTI pages leave out the footer's "Instructor log in":
    their instructors come in through the LMS. The home page keeps it."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    sent = launch(world.platform, browser, STUDENT)
    question = browser.get(world.tool + sent.response.headers["Location"])
    assert question.status_code == 200 and "Instructor log in" not in question.text
    assert "Instructor log in" not in requests.get(f"{world.tool}/lti/launch").text
    assert "Instructor log in" in requests.get(f"{world.tool}/").text


def test_registered_platforms_may_frame_lti_pages_only(world):
    """LTI pages, and a launched student's pages, name the platform in frame-ancestors; other
    pages keep 'none'."""
    launch(world.platform, requests.Session(), TEACHER)
    browser = requests.Session()
    sent = launch(world.platform, browser, STUDENT)
    assert frame_ancestors(sent.response) == f"frame-ancestors 'self' {world.platform.issuer}"
    question = browser.get(world.tool + sent.response.headers["Location"])
    assert frame_ancestors(question) == f"frame-ancestors 'self' {world.platform.issuer}"
    assert "X-Frame-Options" not in question.headers
    for page in ("/", "/login"):
        assert frame_ancestors(requests.get(world.tool + page)) == "frame-ancestors 'none'"
    assert requests.get(world.tool + "/").headers["X-Frame-Options"] == "DENY"


# --- Dynamic registration


def registration_link(app, tool) -> str:
    result = app.test_cli_runner().invoke(args=["lti", "registration-link", "--site", tool])
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "code, named",
    [
        ("moodle", "Moodle"),
        ("canvas", "Canvas"),
        ("desire2learn", "Brightspace"),
        ("", "The platform"),
    ],
)
def test_a_registered_platform_is_named_as_people_call_it(code, named):
    """The admin saw "moodle can launch Quizwright now": the product as its users name it,
    and its site."""
    configuration = {
        "issuer": "https://lms.example.edu",
        "https://purl.imsglobal.org/spec/lti-platform-configuration": {"product_family_code": code},
    }
    assert platform_name(configuration) == f"{named} at lms.example.edu"


def test_dynamic_registration_registers_the_platform(bare_tool, site):
    """The platform opens the admin's link with its configuration and token; the tool registers
    itself there and stores the platform and deployment, and a launch then works."""
    app, tool = bare_tool.app, bare_tool.url
    link = registration_link(app, tool)
    opened = f"{link}&openid_configuration={site.url}/.well-known/openid-configuration"
    browser = requests.Session()
    page = browser.get(opened + "&registration_token=reg-token-1")
    assert page.status_code == 200
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    done = browser.post(f"{tool}/lti/register", data=fields)
    assert done.status_code == 200, done.text
    assert "Quizwright is registered" in done.text
    # Named as people call the product, with its site, not by its raw product code.
    assert f"testplatform at {urllib.parse.urlsplit(site.url).netloc} can launch" in page_text(done)

    sent, authorization = site.registrations[-1]
    assert authorization == "Bearer reg-token-1"
    assert sent["initiate_login_uri"] == f"{tool}/lti/login"
    assert sent["redirect_uris"] == [f"{tool}/lti/launch"]
    assert sent["jwks_uri"] == f"{tool}/lti/jwks.json"
    with app.app_context():
        platform = db.session.scalars(db.select(LtiPlatform)).one()
        assert (platform.issuer, platform.client_id) == (site.url, "dynamic-client")
        assert [d.deployment_id for d in platform.deployments] == ["dynamic-deployment"]
        assert platform.key_set_url == f"{site.url}/jwks.json"

    # The link works once.
    assert browser.post(f"{tool}/lti/register", data=fields).status_code == 403

    registered = Platform(site, tool, deployment="dynamic-deployment", client_id="dynamic-client")
    assert launch(registered, requests.Session(), TEACHER).response.status_code == 303


def test_the_admin_makes_a_registration_link_on_the_lti_page(bare_tool, site):
    """No shell: the admin presses the button (a CSRF-protected POST), the page shows the link
    once with its expiry, and the platform registers with it."""
    app, tool = bare_tool.app, bare_tool.url
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
    admin = requests.Session()
    token = csrf_token(admin.get(f"{tool}/login").text)
    admin.post(f"{tool}/login", data={"username": "boss", "password": "boss password",
               "csrf_token": token})  # fmt: skip
    page = admin.get(f"{tool}/lti/admin").text
    forged = admin.post(f"{tool}/lti/admin/registration-link", allow_redirects=False)
    assert forged.status_code == 400  # no CSRF token
    made = admin.post(f"{tool}/lti/admin/registration-link", data={"csrf_token": csrf_token(page)})
    shown = page_text(made).replace("<wbr>", "")  # where a phone may wrap it, not text
    link = re.search(r"(http://\S+/lti/register\?code=[\w-]+)", shown)[1]
    assert "It works once, until" in shown
    assert link not in page_text(admin.get(f"{tool}/lti/admin")).replace("<wbr>", "")  # once
    opened = f"{link}&openid_configuration={site.url}/.well-known/openid-configuration"
    browser = requests.Session()
    form = browser.get(opened + "&registration_token=reg-token-1").text
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
    assert browser.post(f"{tool}/lti/register", data=fields).status_code == 200
    with app.app_context():
        assert db.session.scalars(db.select(LtiPlatform.issuer)).all() == [site.url]


def test_dynamic_registration_asks_for_grades_roster_and_deep_linking(bare_tool, site):
    """The registration requests what README promises, as LTI Dynamic Registration writes it:
    the AGS scopes (line items, scores, results read-only), NRPS, and the deep linking message
    beside the resource link launch."""
    done = register(bare_tool.app, bare_tool.url, f"{site.url}/.well-known/openid-configuration")
    assert done.status_code == 200, page_text(done)
    sent, _ = site.registrations[-1]
    assert set(sent["scope"].split()) == {
        "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
        "https://purl.imsglobal.org/spec/lti-ags/scope/score",
        "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
        "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
    }
    messages = sent["https://purl.imsglobal.org/spec/lti-tool-configuration"]["messages"]
    launch_url = f"{bare_tool.url}/lti/launch"
    assert [(m["type"], m["target_link_uri"]) for m in messages] == [
        ("LtiResourceLinkRequest", launch_url),
        ("LtiDeepLinkingRequest", launch_url),
    ]


def test_the_registering_platform_alone_may_frame_the_registration_page(bare_tool, site):
    """Moodle opens the registration link in a frame: the origin of the configuration it names
    may frame the page, with a valid link only, and no other site."""
    configuration = f"{site.url}/.well-known/openid-configuration"
    page = requests.get(f"{registration_link(bare_tool.app, bare_tool.url)}"
                        f"&openid_configuration={configuration}")  # fmt: skip
    assert page.status_code == 200
    assert frame_ancestors(page) == f"frame-ancestors 'self' {site.url}"
    refused = requests.get(f"{bare_tool.url}/lti/register?code=made-up"
                           f"&openid_configuration={configuration}")  # fmt: skip
    assert refused.status_code == 403 and site.url not in frame_ancestors(refused)
    assert "evil" not in frame_ancestors(
        requests.get(
            f"{registration_link(bare_tool.app, bare_tool.url)}"
            "&openid_configuration=http://a;frame-ancestors%20evil.example/x"
        )  # fmt: skip
    )


@pytest.mark.parametrize("dots", ["..", "%2e%2E", "./.."])
def test_dot_segments_cannot_pass_for_the_issuers_path(bare_tool, site, dots):
    """Attacker repro: …/moodle/../oidc-config passed the issuer-prefix check as text, though it
    is fetched as /oidc-config; compared as fetched, it registers nothing."""
    site.openid_configuration = lambda: {
        **PlatformSite.openid_configuration(site),
        "issuer": f"{site.url}/moodle",
    }
    done = register(bare_tool.app, bare_tool.url,
                    f"{site.url}/moodle/{dots}/.well-known/openid-configuration")  # fmt: skip
    assert done.status_code == 400 and "names the issuer" in page_text(done)
    assert site.registrations == []


def test_every_address_of_a_registration_stays_on_its_issuers_origin(bare_tool, site):
    """A configuration whose key set, token or registration address is on another host is
    refused before anything is posted."""
    for name in ("jwks_uri", "token_endpoint", "registration_endpoint"):
        site.openid_configuration = lambda name=name: {
            **PlatformSite.openid_configuration(site),
            name: "http://elsewhere.example/x",
        }
        done = register(
            bare_tool.app, bare_tool.url, f"{site.url}/.well-known/openid-configuration"
        )
        assert done.status_code == 400 and f"{name} is not at its issuer" in page_text(done)
    assert site.registrations == []


def test_a_registration_never_stands_beside_a_registered_issuer(world, site):
    """Attacker repro: a second registration under a registered platform's issuer made that
    platform's logins fail. Refused before anything is posted; the platform still launches."""
    done = register(world.app, world.tool, f"{site.url}/.well-known/openid-configuration")
    assert done.status_code == 400 and "already has a platform with the issuer" in page_text(done)
    assert site.registrations == []
    assert launch(world.platform, requests.Session(), TEACHER).response.status_code == 303


def test_a_configuration_that_redirects_is_not_followed(bare_tool, site):
    """No redirect is followed: a registration goes only where the link said."""
    done = register(bare_tool.app, bare_tool.url, f"{site.url}/moved")
    assert done.status_code == 400 and "answered 302" in page_text(done)
    assert ".well-known" not in page_text(done)  # where it pointed stays in the log
    assert site.registrations == []


@pytest.mark.parametrize(
    "address",
    ["http://127.0.0.1:9/x", "http://localhost:9/x", "http://[::1]:9/x",
     "http://169.254.169.254/latest", "http://10.0.0.7/x", "http://192.168.1.1/x"],
)  # fmt: skip
def test_registration_reaches_no_internal_address(app, address, caplog):
    """Attacker repro: the link's configuration address probed this machine ("Connection
    refused" on the page). Loopback, private and link-local targets are refused before any
    request, unless LTI_PRIVATE_PLATFORMS allows them."""
    from app.lti.registration import new_link_code

    with app.app_context():
        code = new_link_code()
    client = app.test_client()
    done = client.post("/lti/register", data={"code": code, "openid_configuration": address})
    assert done.status_code == 400
    said = page_text(done)
    assert "loopback, private or link-local" in said and "Connection refused" not in said
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform)) == 0


def test_registration_needs_the_admins_link(bare_tool, site):
    """Without a link the admin made, nothing is sent to the platform and nothing stored."""
    app, tool = bare_tool.app, bare_tool.url
    configuration = f"{site.url}/.well-known/openid-configuration"
    page = requests.get(f"{tool}/lti/register?openid_configuration={configuration}")
    assert page.status_code == 403
    posted = requests.post(
        f"{tool}/lti/register",
        data={"code": "guessed", "openid_configuration": configuration},
    )
    assert posted.status_code == 403
    assert site.registrations == []
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform)) == 0


def test_a_refused_registration_says_why_and_stores_nothing(bare_tool, site):
    """The platform answers 401 to a wrong token: the page says what the platform answered."""
    app, tool = bare_tool.app, bare_tool.url
    done = register(app, tool, f"{site.url}/.well-known/openid-configuration", token="bad")
    assert done.status_code == 400
    assert "The platform's registration endpoint answered 401" in page_text(done)
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform)) == 0


def test_a_configuration_claiming_another_issuer_is_refused(bare_tool, site):
    """A configuration whose issuer is not where it was found registers nothing."""
    site.openid_configuration = lambda: {
        "issuer": "https://trusted-lms.example.edu",
        "authorization_endpoint": f"{site.url}/auth",
        "token_endpoint": f"{site.url}/token",
        "jwks_uri": f"{site.url}/jwks.json",
        "registration_endpoint": f"{site.url}/register",
    }
    app, tool = bare_tool.app, bare_tool.url
    done = register(app, tool, f"{site.url}/.well-known/openid-configuration", token="x")
    assert done.status_code == 400
    assert "names the issuer https://trusted-lms.example.edu" in page_text(done)
    assert site.registrations == []
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform)) == 0


def register(app, tool, configuration: str, token="reg-token-1") -> requests.Response:
    """Open a fresh registration link with this configuration address and press Register."""
    link = registration_link(app, tool)
    browser = requests.Session()
    opened = f"{link}&openid_configuration={configuration}&registration_token={token}"
    page = browser.get(opened)
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    return browser.post(f"{tool}/lti/register", data=fields)


def test_a_lookalike_address_cannot_claim_an_issuer(bare_tool, site):
    """The configuration's address must be under its issuer at a "/": another host whose
    address merely starts with the issuer's text (user info, a longer port) registers nothing."""
    port = site.url.rsplit(":", 1)[1]
    claims = {
        "http://trusted-lms.example.edu": f"http://trusted-lms.example.edu@127.0.0.1:{port}",
        site.url[:-1]: site.url,  # http://127.0.0.1:4567 is not the site at :45678
    }
    app, tool = bare_tool.app, bare_tool.url
    for issuer, address in claims.items():
        site.openid_configuration = lambda issuer=issuer: {
            **PlatformSite.openid_configuration(site),
            "issuer": issuer,
        }
        done = register(app, tool, f"{address}/.well-known/openid-configuration")
        assert done.status_code == 400, done.text
        # A user in the address is no plain URL; the longer port is another site's.
        said = "not a plain http(s) URL" if "@" in address else f"names the issuer {issuer}"
        assert said in page_text(done)
    assert site.registrations == []
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform)) == 0


def test_dynamic_registration_cannot_change_a_registered_platform(bare_tool, site):
    """A registration link adds a platform: an answer naming an issuer and client id already
    registered leaves that registration's keys and addresses as the admin set them."""
    app, tool = bare_tool.app, bare_tool.url
    with app.app_context():
        save_platform(
            PlatformDetails(
                site.url,
                "dynamic-client",
                "https://lms.example.edu/auth",
                "https://lms.example.edu/token",
                "https://lms.example.edu/jwks.json",
                ("deployment-0",),
                "Registered by the admin",
            )
        )
    done = register(app, tool, f"{site.url}/.well-known/openid-configuration")
    assert done.status_code == 400, done.text
    assert "already has" in page_text(done)
    with app.app_context():
        platform = db.session.scalars(db.select(LtiPlatform)).one()
        assert platform.key_set_url == "https://lms.example.edu/jwks.json"
        assert platform.auth_login_url == "https://lms.example.edu/auth"
        assert [d.deployment_id for d in platform.deployments] == ["deployment-0"]


def test_launch_data_expires(app):
    """Expired nonces and states are swept away by the next login."""
    with app.app_context():
        storage = DatabaseStorage()
        storage.set_value("fresh", True, 60)
        storage.set_value("stale", True, 60)
        stale = db.session.get(LtiLaunchData, "lti1p3-stale")
        stale.expires_at = stale.expires_at.replace(year=2000)
        db.session.commit()
        assert storage.get_value("stale") is None
        assert storage.check_value("stale") is False
        assert purge_expired() == 1
        assert storage.check_value("fresh") is True
        assert storage.check_value("fresh") is False  # taken once


def test_link_instructor_needs_a_known_user_and_account(app, runner):
    """Linking names what is missing: the platform, the account, or a user who never launched."""
    with app.app_context():
        create_instructor("ada", "a password")
        save_platform(
            PlatformDetails(
                "https://lms.example.edu", "c1", "https://lms.example.edu/a",
                "https://lms.example.edu/t", "https://lms.example.edu/k", ("1",),
            )
        )  # fmt: skip
    link = ["lti", "link-instructor", "--sub", "s-1"]
    unknown = runner.invoke(args=[*link, "--issuer", "https://other.example.edu", "ada"])
    assert "No platform https://other.example.edu is registered" in unknown.output
    nobody = runner.invoke(args=[*link, "--issuer", "https://lms.example.edu", "bob"])
    assert "There is no instructor named “bob”" in nobody.output
    never = runner.invoke(args=[*link, "--issuer", "https://lms.example.edu", "ada"])
    assert "s-1 has never launched from lms.example.edu" in never.output
    assert {unknown.exit_code, nobody.exit_code, never.exit_code} == {1}


def test_admin_page_costs_the_same_queries_for_1_and_20_platforms(app, client):
    """Platforms, deployments and linked instructors are fetched in a fixed number of queries."""
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
    assert login(client, "boss", "boss password").status_code == 303
    client.get("/lti/admin")  # the first visit makes the tool's key

    def counted(platforms):
        with app.app_context():
            start = db.session.scalar(db.select(db.func.count()).select_from(LtiPlatform))
            for n in range(start, start + platforms):
                host = f"https://lms{n}.example.edu"
                saved, _ = save_platform(
                    PlatformDetails(
                        host, "c", f"{host}/a", f"{host}/t", f"{host}/k", ("1", "2", "3")
                    )
                )
                user_for(saved, f"teacher-{n}", f"Teacher {n}")
                instructor_for(db.session.scalars(db.select(LtiUser).filter_by(
                    platform_id=saved.id)).one())  # fmt: skip
        with queries(app) as statements:
            page = client.get("/lti/admin")
        assert page.status_code == 200
        return len(statements)

    few = counted(1)
    assert counted(19) == few <= 8


def test_admin_page_lists_addresses_platforms_and_keys(app, client):
    """The admin's LTI page shows the four addresses, each platform and the signing key."""
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
        save_platform(
            PlatformDetails(
                "https://moodle.example.edu",
                "abc123",
                "https://moodle.example.edu/mod/lti/auth.php",
                "https://moodle.example.edu/mod/lti/token.php",
                "https://moodle.example.edu/mod/lti/certs.php",
                ("7",),
                "Example Moodle",
            )
        )
    assert login(client, "boss", "boss password").status_code == 303
    page = " ".join(client.get("/lti/admin").get_data(as_text=True).split())
    page = page.replace("<wbr>", "")  # where a phone may wrap an address, no character of it
    for address in ("/lti/login", "/lti/launch", "/lti/jwks.json"):
        assert f"http://localhost{address}" in page
    # The bare registration address, which answers 403 without a link's code, is not shown.
    assert "http://localhost/lti/register" not in page and "Make a registration link" in page
    assert "Example Moodle" in page and "abc123" in page and "<code>7</code>" in page
    with app.app_context():
        assert f"<code>{signing_key().kid}</code>: signs now" in page
    runner = app.test_cli_runner()
    assert runner.invoke(args=["lti", "rotate-key", "--grace-days", "2"]).exit_code == 0
    rotated = " ".join(client.get("/lti/admin").get_data(as_text=True).split())
    assert re.search(
        r"replaced, published until <time datetime=\"[\d-]+T[\d:]+Z\" data-zone=", rotated
    )


class ShownText(html.parser.HTMLParser):
    """The text of each <code> element, as a reader selects and copies it."""

    def __init__(self):
        super().__init__()
        self.codes, self.inside = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "code":
            self.inside = True
            self.codes.append("")

    def handle_endtag(self, tag):
        self.inside = self.inside and tag != "code"

    def handle_data(self, data):
        if self.inside:
            self.codes[-1] += data


def test_admin_page_addresses_break_only_after_slashes(app, client):
    """On a phone an address wraps between its parts, not mid-word: each may break only after
    a run of slashes, and its text, as selected and copied, is the exact address (issue 27,
    item 18)."""
    issuer = "https://moodle.example.edu/school/physics"
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
        ends = (f"{issuer}/auth", f"{issuer}/token", f"{issuer}/keys")
        save_platform(PlatformDetails(issuer, "client", *ends, ("1",)))
    assert login(client, "boss", "boss password").status_code == 303
    token = csrf_token(client.get("/lti/admin").get_data(as_text=True))
    made = client.post("/lti/admin/registration-link", data={"csrf_token": token})
    page = client.get(made.location).get_data(as_text=True)
    link = re.search(r'<code class="copyable">(.*?)</code>', page).group(1)
    expected = [
        "http://localhost/lti/login",
        "http://localhost/lti/launch",
        "http://localhost/lti/jwks.json",
        html.unescape(link.replace("<wbr>", "")),
        issuer,
    ]
    shown = ShownText()
    shown.feed(page)
    addresses = [code for code in shown.codes if code.startswith("http")]
    assert addresses == expected and "/lti/register?code=" in expected[3]
    marked = re.findall(r"<code[^>]*>([^<]*(?:<wbr>[^<]*)+)</code>", page)
    assert len(marked) == len(expected)
    for address in marked:
        assert "://<wbr>" in address and ":/<wbr>/" not in address
        assert all(before.endswith("/") for before in address.split("<wbr>")[:-1]), address
        assert address.count("<wbr>") == address.count("/") - 1  # "//" is one run


def test_an_address_keeps_its_escaping_between_its_breaks():
    """The filter escapes the address before marking its breaks: a query's & and < stay text."""
    marked = breakable_address("https://lms.example/a/?b=<c>&d=1/")
    assert marked == "https://<wbr>lms.example/<wbr>a/<wbr>?b=&lt;c&gt;&amp;d=1/"
