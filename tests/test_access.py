"""Who may see what: every instructor route walked as each kind of visitor, and the login rules."""

from dataclasses import dataclass

import pytest
from flask import url_for

from app import create_app
from app.auth import create_instructor
from app.extensions import db
from app.models import Class

from helpers import Student, csrf_token, text

pytestmark = pytest.mark.usefixtures("quick_passwords")

PASSWORDS = {"owner": "owner password", "other": "other password", "boss": "boss password"}
OWNER_CLASS, OTHER_CLASS = "Physics 101", "Chemistry 202"

ROLES = ("anonymous", "student", "other", "owner", "admin")
ACCOUNT = {"other": "other", "owner": "owner", "admin": "boss"}

# What each visitor gets from each kind of route:
#   login:   a redirect to the login page
#   page:    200, the page or export itself
#   missing: 404, as if there were nothing at that address
#   done:    a 303 to the page the action leads to, and the action took effect
EXPECTED = {
    #                      anonymous  student   other      owner      admin
    "dashboard":          ("login",   "login",  "page",    "page",    "page"),
    "class":              ("login",   "login",  "missing", "page",    "page"),
    "class_change":       ("login",   "login",  "missing", "done",    "done"),
    "class_attempt":      ("login",   "login",  "missing", "page",    "page"),
    "no_class":           ("login",   "login",  "missing", "missing", "page"),
    "unassigned_attempt": ("login",   "login",  "missing", "missing", "page"),
    "logout":             ("login",   "login",  "done",    "done",    "done"),
    "account":            ("login",   "login",  "page",    "page",    "page"),
    "lti_admin":          ("login",   "login",  "missing", "missing", "page"),
}  # fmt: skip
# Where a "done" action sends the browser.
DONE_AT = {"class_change": "/teach/classes/{class_id}", "logout": "/login"}


@dataclass(frozen=True)
class Route:
    """One URL rule of the instructor pages, as the walk sees it."""

    rule: str
    endpoint: str
    method: str
    defaults: tuple
    variables: tuple
    kind: str | None


def walked(rule) -> bool:
    return rule.endpoint.startswith("teach.") or rule.endpoint in ACCOUNT_PAGES


ACCOUNT_PAGES = {
    "auth.logout": "logout",
    "auth.change_password": "account",
    "lti.admin": "lti_admin",
}


def kinds_of(rule) -> list[str | None]:
    """Which rows of EXPECTED a rule is checked against; [None] for a shape the walk can't fill."""
    defaults = rule.defaults or {}
    variables = rule.arguments - set(defaults)
    if rule.endpoint in ACCOUNT_PAGES:
        return [ACCOUNT_PAGES[rule.endpoint]]
    if "class_id" in defaults and defaults["class_id"] is None and not variables:
        return ["no_class"]
    if variables == {"class_id"}:
        return ["class" if "GET" in rule.methods else "class_change"]
    if variables == {"token"} and "GET" in rule.methods:
        return ["class_attempt", "unassigned_attempt"]
    if not variables and not defaults and "GET" in rule.methods:
        return ["dashboard"]
    return [None]


def routes(app) -> list[Route]:
    found = []
    for rule in app.url_map.iter_rules():
        if not walked(rule):
            continue
        method = "GET" if "GET" in rule.methods else "POST"
        defaults = tuple(sorted((rule.defaults or {}).items()))
        variables = tuple(sorted(rule.arguments - set(rule.defaults or {})))
        for kind in kinds_of(rule):
            found.append(Route(rule.rule, rule.endpoint, method, defaults, variables, kind))
    return found


def _routes_at_collection() -> list[Route]:
    """The routes of an app built just to read its URL map, so parametrize sees new routes."""
    app = create_app({"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    with app.app_context():
        db.engine.dispose()
    return routes(app)


ROUTES = _routes_at_collection()


@dataclass
class World:
    app: object
    class_id: int
    other_class_id: int
    class_token: str
    loose_token: str
    student: Student


@pytest.fixture
def world(app, quiz):
    """Three instructors, a class each for owner and other, and attempts in and out of a class."""
    with app.app_context():
        owner = create_instructor("owner", PASSWORDS["owner"])
        other = create_instructor("other", PASSWORDS["other"])
        create_instructor("boss", PASSWORDS["boss"], is_admin=True)
        mine = Class(name=OWNER_CLASS, join_code="ABCDEF", instructor_id=owner.id)
        theirs = Class(name=OTHER_CLASS, join_code="GHJKMN", instructor_id=other.id)
        db.session.add_all([mine, theirs])
        db.session.commit()
        class_id, other_class_id = mine.id, theirs.id

    ada = Student(app.test_client())
    assert ada.start(name="Ada", class_code="ABCDEF").status_code == 303
    grace = Student(app.test_client())
    assert grace.start(name="Grace").status_code == 303
    for number in (1, 2):
        right = quiz.questions[number - 1].right_choice.id
        assert ada.answer(number, right).status_code == 303
        assert grace.answer(number, right).status_code == 303
    return World(app, class_id, other_class_id, ada.token, grace.token, ada)


def session_token(client):
    """The session's CSRF token from a form: the login page, or the dashboard once logged in."""
    return csrf_token(client.get("/login", follow_redirects=True).get_data(as_text=True))


def log_in(client, username, password, url="/login", **kwargs):
    """Fill in and send the login form; returns the response."""
    fields = {"username": username, "password": password, "csrf_token": session_token(client)}
    return client.post(url, data=fields, **kwargs)


def browser(world, role):
    """A client as this visitor: nobody, a student mid-quiz, or a logged-in instructor."""
    if role == "anonymous":
        return world.app.test_client()
    if role == "student":
        return world.student.client
    client = world.app.test_client()
    account = ACCOUNT[role]
    assert log_in(client, account, PASSWORDS[account]).status_code == 303
    return client


def url_of(world, route):
    """The route's concrete URL, built by the app and checked to lead back to the same rule."""
    fill = {
        "class_id": world.class_id,
        "token": world.loose_token if route.kind == "unassigned_attempt" else world.class_token,
    }
    values = dict(route.defaults)
    for name in route.variables:
        assert name in fill, f"the walk cannot fill <{name}> in {route.rule}: teach it how"
        values[name] = fill[name]
    with world.app.test_request_context():
        url = url_for(route.endpoint, **values)
    adapter = world.app.url_map.bind("localhost")
    rule, _ = adapter.match(url, method=route.method, return_rule=True)
    assert rule.rule == route.rule, f"{url} leads to {rule.rule}, not {route.rule}"
    return url


def is_open(world):
    with world.app.app_context():
        return db.session.get(Class, world.class_id).is_open


def observe(world, client):
    """What a visitor could notice changing: the owner's class status and this login."""
    return {"open": is_open(world), "logged_in": client.get("/teach").status_code == 200}


def set_open(world, value):
    with world.app.app_context():
        db.session.get(Class, world.class_id).is_open = value
        db.session.commit()


def case_id(route):
    return f"{route.kind}:{route.method} {route.rule}"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", ROUTES, ids=case_id)
def test_instructor_routes_by_visitor(world, route, role):
    """Each instructor page treats each visitor as the access table says; only allowed POSTs act."""
    assert route.kind in EXPECTED, f"no expectations for {route.rule}: add its kind to EXPECTED"
    expected = EXPECTED[route.kind][ROLES.index(role)]
    client = browser(world, role)
    url = url_of(world, route)
    if route.kind == "class_change":
        set_open(world, not dict(route.defaults)["is_open"])  # so that the action would show
    before = observe(world, client)

    if route.method == "GET":
        response = client.get(url)
    else:
        response = client.post(url, data={"csrf_token": session_token(client)})

    # Grades and names, or the way to them: never kept by a shared computer's browser or a proxy.
    assert response.headers["Cache-Control"] == "no-store"
    location = response.headers.get("Location", "")
    if expected == "login":
        assert response.status_code in (302, 303), response.status_code
        assert location.startswith("/login"), location
    elif expected == "page":
        assert response.status_code == 200
    elif expected == "missing":
        assert response.status_code == 404
    else:
        assert response.status_code == 303
        assert location == DONE_AT[route.kind].format(class_id=world.class_id)

    after = dict(before)
    if expected == "done" and route.kind == "class_change":
        after["open"] = dict(route.defaults)["is_open"]
    if expected == "done" and route.kind == "logout":
        after["logged_in"] = False
    assert observe(world, client) == after


def test_the_walk_covers_every_instructor_route(world):
    """A new instructor route the walk cannot build or has no expectations for fails here."""
    in_map = [rule for rule in world.app.url_map.iter_rules() if walked(rule)]
    covered = routes(world.app)
    for route in covered:
        assert route.kind in EXPECTED, f"{route.rule} has a shape the walk does not know"
        assert url_of(world, route).startswith("/")
    assert {route.kind for route in covered} == set(EXPECTED)
    assert {route.endpoint for route in covered} == {rule.endpoint for rule in in_map}
    assert {route.rule for route in covered} == {rule.rule for rule in in_map}
    assert covered == ROUTES  # the parametrized walk saw the same map


@pytest.mark.parametrize(
    ("role", "visible"),
    [
        ("other", {OTHER_CLASS}),
        ("owner", {OWNER_CLASS}),
        ("admin", {OWNER_CLASS, OTHER_CLASS}),
    ],
)
def test_dashboard_lists_only_the_classes_you_may_see(world, role, visible):
    """An instructor's class list holds only their own classes; an admin's holds every class."""
    page = text(browser(world, role).get("/teach"))
    assert {name for name in (OWNER_CLASS, OTHER_CLASS) if name in page} == visible
    assert ("Attempts without a class" in page) == (role == "admin")


def test_admin_sees_the_attempts_without_a_class(world):
    """The admin's no-class page lists the student who joined no class, not the class's student."""
    client = browser(world, "admin")
    loose = text(client.get("/teach/no-class"))
    assert "Grace" in loose
    assert "Ada" not in loose
    in_class = text(client.get(f"/teach/classes/{world.class_id}"))
    assert "Ada" in in_class
    assert "Grace" not in in_class


@pytest.mark.parametrize(
    ("username", "password"),
    [("owner", "not the password"), ("nobody", PASSWORDS["owner"])],
    ids=["wrong password", "unknown username"],
)
def test_failed_login_says_the_same_either_way(world, username, password):
    """A wrong password and an unknown name get the same refusal, and nobody is logged in."""
    client = world.app.test_client()
    response = log_in(client, username, password)
    assert response.status_code == 400
    assert "Invalid username or password" in text(response)
    assert client.get("/teach").headers["Location"].startswith("/login")


def test_login_pages_are_not_stored(world):
    """The login form, a refused login and the landing after it carry Cache-Control: no-store."""
    client = world.app.test_client()
    responses = [
        client.get("/login"),
        log_in(client, "owner", "not the password"),
        log_in(client, "owner", PASSWORDS["owner"]),
        client.get("/login"),
    ]
    assert [r.status_code for r in responses] == [200, 400, 303, 302]
    assert {r.headers["Cache-Control"] for r in responses} == {"no-store"}


def test_username_ignores_case_and_surrounding_spaces(world):
    """ " OWNER " logs in as owner and sees owner's classes."""
    client = world.app.test_client()
    response = log_in(client, " OWNER ", PASSWORDS["owner"])
    assert response.status_code == 303
    assert OWNER_CLASS in text(client.get("/teach"))


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example",
        "https://evil.example",
        "javascript:alert(1)",
        "/\\evil.example",
        "\\\\evil.example",
        "%2F%2Fevil.example",
        "/\t/evil.example",
        "///evil.example",
    ],
)
@pytest.mark.parametrize("how", ["decoded", "raw"])
def test_next_never_leaves_the_site(world, target, how):
    """After logging in with a foreign or scripted `next`, the instructor lands on their classes."""
    client = world.app.test_client()
    if how == "decoded":  # the app's `next` is exactly the target
        response = log_in(client, "owner", PASSWORDS["owner"], query_string={"next": target})
    else:  # the target as typed into the address bar, percent-escapes decoded by the server
        response = log_in(client, "owner", PASSWORDS["owner"], url=f"/login?next={target}")
    assert response.status_code == 303
    assert response.headers["Location"] == "/teach"


def test_next_brings_you_back_to_the_class_you_asked_for(world):
    """Opening a class page logged out, then logging in, lands on that class page."""
    client = world.app.test_client()
    wanted = f"/teach/classes/{world.class_id}"
    to_login = client.get(wanted).headers["Location"]
    assert to_login.startswith("/login?")
    response = log_in(client, "owner", PASSWORDS["owner"], url=to_login)
    assert response.status_code == 303
    assert response.headers["Location"] == wanted
    assert OWNER_CLASS in text(client.get(wanted))


def test_logout_is_post_only(world):
    """Following a link to /logout does nothing: 405, and the instructor stays logged in."""
    client = browser(world, "owner")
    assert client.get("/logout").status_code == 405
    assert client.get("/teach").status_code == 200


def test_logout_ends_every_copy_of_the_session(world):
    """After logging out, a copy of the old session cookie no longer opens the dashboard."""
    client = browser(world, "owner")
    cookie = client.get_cookie("session").value
    copy = world.app.test_client()
    copy.set_cookie("session", cookie)
    assert copy.get("/teach").status_code == 200  # the copy works while the session lives

    response = client.post("/logout", data={"csrf_token": session_token(client)})
    assert response.status_code == 303
    assert response.headers["Location"] == "/login"

    replay = world.app.test_client()
    replay.set_cookie("session", cookie)
    assert replay.get("/teach").headers["Location"].startswith("/login")
    assert copy.get("/teach").headers["Location"].startswith("/login")
    assert client.get("/teach").headers["Location"].startswith("/login")


def test_login_starts_a_fresh_session(world):
    """Logging in on a browser that took a quiz drops what the session held; its quiz id stays."""
    client = world.student.client
    with client.session_transaction() as session:
        session["planted"] = "before the login"
    browser = client.get_cookie("browser").value

    assert log_in(client, "owner", PASSWORDS["owner"]).status_code == 303
    with client.session_transaction() as session:
        assert "planted" not in session
    assert client.get_cookie("browser").value == browser
    assert client.get("/teach").status_code == 200
