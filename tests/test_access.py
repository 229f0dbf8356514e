"""Who may see what: every instructor route walked as each kind of visitor, and the login rules."""

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import factories
import pytest
from flask import url_for

from app import create_app
from app.attempts.browser import BROWSER_COOKIE
from app.auth import create_instructor
from app.authoring import drafts
from app.extensions import db
from app.lti.keys import signing_key
from app.models import (
    Accommodation,
    Assignment,
    Attempt,
    Class,
    FeedbackWhen,
    Publication,
    QuizRole,
    Role,
    RosterStudent,
    now,
    roster_key,
    student_key,
)
from app.question_types import right_choice
from app.roster import add_students, read_text
from app.served import current_bank
from app.teach.exceptions import Said, save_exception

from helpers import (
    SLUG,
    Student,
    all_rows,
    csrf_token,
    make_app,
    put_rows,
    shared_schema,
    signed_import,
    stored_rows,
    text,
)

pytestmark = pytest.mark.postgres

PASSWORDS = {
    "owner": "owner password",
    "other": "other password",
    "vera": "viewer password",
    "max": "manager password",
    "boss": "boss password",
    "lena": "course password",
}
OWNER_CLASS, OTHER_CLASS = "Physics 101", "Chemistry 202"

ROLES = ("anonymous", "student", "other", "viewer", "manager", "course", "owner", "admin")
ACCOUNT = {"other": "other", "viewer": "vera", "manager": "max", "course": "lena",
           "owner": "owner", "admin": "boss"}  # fmt: skip

# What each visitor gets from each instructor route. A row per endpoint: routes about a class or
# one of its attempts, walked with the owner's class; "... without a class" rows are the same
# endpoints walked with attempts that joined no class. The viewer and the manager are the
# instructors the owner's class is shared with, to view and to manage it; "course" is an account
# an LMS launch made (app/lti/people.py), which the class is shared with to manage, as its
# course's instructors are: it reaches that class and nothing beyond it.
#   L  login:   a redirect to the login page
#   P  page:    200, the page or export itself
#   N  missing: 404, as if there were nothing at that address
#   R  refused: 403, the class is shared with them, but not for this; or, for a quiz's key,
#                    the account reaches its courses' classes only
#   D  done:    a 303 to where ACTIONS says, and the database changed
# Anything but D leaves every table as it was.
# Quiz routes (authoring.*, and "... of an instructor's quiz") are walked with the owner's own
# quiz, shared with the viewer to use it and with the manager to edit it; the course-only
# account is refused every key, and the other instructor cannot learn that the quiz exists. A
# class's pages show a quiz the class does not assign only to those who may use it.
ACCESS = {
    # anonymous, student, other instructor, viewer, manager, course-only manager, owner, admin
    "teach.dashboard":                       "L L P P P P P P",
    "teach.class_page":                      "L L N P P P P P",
    "teach.class_page without a class":      "L L N N N N N P",
    "teach.join_screen":                     "L L N P P P P P",
    "teach.gradebook":                       "L L N P P P P P",
    "teach.gradebook without a class":       "L L N N N N N P",
    "teach.lms_gradebook":                   "L L N P P P P P",
    "teach.responses":                       "L L N P P P P P",
    "teach.responses without a class":       "L L N N N N N P",
    "teach.item_statistics":                 "L L N P P P P P",
    "teach.item_statistics without a class": "L L N N N N N P",
    "teach.attempt_review":                  "L L N P P P P P",
    "teach.attempt_review without a class":  "L L N N N N N P",
    "teach.set_open":                        "L L N R D D D D",
    "teach.manage_class":                    "L L N R P P P P",
    "teach.rename_class":                    "L L N R D D D D",
    "teach.replace_join_code":               "L L N R D D D D",
    "teach.merge":                           "L L N R D D D D",
    "teach.share":                           "L L N R R R D D",
    "teach.stop_sharing":                    "L L N R R R D D",
    "teach.archive":                         "L L N R R R D D",
    "teach.delete_class":                    "L L N R R R D D",
    "teach.assign":                          "L L N R P P P P",
    "teach.edit_assignment":                 "L L N R P P P P",
    "teach.remove_assignment":               "L L N R D D D D",
    "teach.release_feedback":                "L L N R D D D D",
    "teach.confirm_release":                 "L L N R P P P P",
    "teach.new_exception":                   "L L N R P P P P",
    "teach.edit_exception":                  "L L N R P P P P",
    "teach.remove_exception":                "L L N R D D D D",
    "teach.regrade_page":                    "L L N R P P P P",
    "teach.regrade_page of an instructor's quiz": "L L N R P N P P",
    "teach.preview":                         "L L P P P R P P",
    "teach.download":                        "L L P P P R P P",
    "teach.preview of an instructor's quiz": "L L N P P R P P",
    "teach.download of an instructor's quiz":"L L N P P R P P",
    "authoring.quizzes":                     "L L P P P R P P",
    "authoring.edit":                        "L L N R P R P P",
    "authoring.question":                    "L L N R P R P P",
    "authoring.rearrange":                   "L L N R D R D D",
    "authoring.publish":                     "L L N R D R D D",
    "authoring.discard":                     "L L N R D R D D",
    "authoring.duplicate":                   "L L N D D R D D",
    "authoring.delete":                      "L L N R R R D D",
    "authoring.share":                       "L L N R R R P P",
    "authoring.stop_sharing":                "L L N R R R D D",
    "authoring.history":                     "L L N P P R P P",
    "authoring.restore":                     "L L N R D R D D",
    "authoring.draft_preview":               "L L N R P R P P",
    "authoring.import_file":                 "L L P P P R P P",
    "authoring.confirm":                     "L L N R R R P P",
    "authoring.listing":                     "L L N R D R D D",
    "authoring.import_confirm":              "L L D D D R D D",
    "teach.roster_page":                     "L L N R P P P P",
    "teach.sign_in_cards":                   "L L N R P P P P",
    "teach.sign_in_codes":                   "L L N R P P P P",
    "teach.new_sign_in_code":                "L L N R D D D D",
    "teach.remove_student":                  "L L N R D D D D",
    "teach.restore_student":                 "L L N R D D D D",
    "teach.void":                            "L L N R D D D D",
    "teach.void without a class":            "L L N N N N N D",
    "teach.restore":                         "L L N R D D D D",
    "teach.restore without a class":         "L L N N N N N D",
    "teach.marks":                           "L L N R P P P P",
    "teach.marks without a class":           "L L N N N N N P",
    "teach.override":                        "L L N R D D D D",
    "teach.override without a class":        "L L N N N N N D",
    "teach.undo_override":                   "L L N R D D D D",
    "teach.undo_override without a class":   "L L N N N N N D",
    "auth.logout":                           "L L D D D D D D",
    "auth.change_password":                  "L L P P P P P P",
    "lti.admin":                             "L L N N N N N P",
    "lti.new_registration_link":             "L L N N N N N D",
    "lti.window":                            "R R R R R R R R",
}  # fmt: skip

OUTCOMES = {"L": "login", "P": "page", "N": "missing", "R": "refused", "D": "done"}

WALKED = (
    ("teach.", "authoring."), "auth.logout", "auth.change_password", "lti.admin",
    "lti.new_registration_link", "lti.window",
)  # fmt: skip
"""Endpoints the walk covers: every instructor page, the account pages, the LTI admin pages and
the window an instructor's framed launch hands over to (refused to every link not followed
from the tool's own page; the codes themselves are tested in test_lti_storage.py)."""


@dataclass(frozen=True)
class Action:
    """How the walk sends a POST route's form, and where a visitor allowed to act lands."""

    lands: str | Callable[[dict], str]
    """The Location, with {class_id}, {token}, {student_id} and {assignment_id} filled in; a
    function of the rule's defaults where its rules differ."""
    form: Callable[["World"], dict] = lambda world: {}
    prepare: Callable[["World", dict], None] | None = None
    """Sets the scene so that the action would show, given the rule's defaults."""


CLASS_PAGE, MANAGE_PAGE, ROSTER, REVIEW = (
    "/teach/classes/{class_id}",
    "/teach/classes/{class_id}/manage",
    "/teach/classes/{class_id}/roster",
    "/teach/attempts/{token}",
)
ROSTER_STUDENT = ROSTER + "#student-{student_id}"
OWN_SLUG = "owners-quiz"
EDITOR = f"/teach/quizzes/{OWN_SLUG}/edit"
ACTIONS = {
    "teach.set_open": Action(
        CLASS_PAGE, prepare=lambda world, defaults: world.set(is_open=not defaults["is_open"])
    ),
    "teach.rename_class": Action(MANAGE_PAGE, form=lambda world: {"name": "Physics 102"}),
    "teach.replace_join_code": Action(CLASS_PAGE),
    "teach.merge": Action(
        MANAGE_PAGE,
        form=lambda world: {"first": student_key("Ada"), "second": student_key("Ada L")},
    ),
    "teach.share": Action(MANAGE_PAGE, form=lambda world: {"username": "other", "role": "manage"}),
    "teach.stop_sharing": Action(MANAGE_PAGE, form=lambda world: {"instructor": world.viewer_id}),
    "teach.archive": Action(
        lambda defaults: "/teach" if defaults["archived"] else CLASS_PAGE,
        prepare=lambda world, defaults: world.set(
            archived_at=None if defaults["archived"] else now()
        ),
    ),
    "teach.delete_class": Action("/teach", form=lambda world: {"confirm": OWNER_CLASS}),
    "teach.remove_assignment": Action(CLASS_PAGE + f"?quiz={SLUG}"),
    "teach.release_feedback": Action(CLASS_PAGE + f"?quiz={SLUG}"),
    "teach.remove_exception": Action(CLASS_PAGE + f"?quiz={SLUG}#assignment-{{assignment_id}}"),
    "teach.new_sign_in_code": Action(ROSTER_STUDENT),
    "teach.remove_student": Action(ROSTER),
    "teach.restore_student": Action(
        ROSTER_STUDENT, prepare=lambda world, defaults: world.remove_roster_student()
    ),
    "teach.void": Action(REVIEW, form=lambda world: {"confirm": "yes"}),
    "teach.restore": Action(REVIEW, prepare=lambda world, defaults: world.void_attempts()),
    "teach.override": Action(
        REVIEW + "/marks#score",
        form=lambda world: {"points": "1", "comment": "Marked by hand."},
        prepare=lambda world, defaults: world.finish_attempts(),
    ),
    "teach.undo_override": Action(
        REVIEW + "/marks#score",
        prepare=lambda world, defaults: world.finish_attempts(score_override=2),
    ),
    "auth.logout": Action("/login"),
    "authoring.rearrange": Action(EDITOR + "#q-q1"),
    "authoring.publish": Action(EDITOR),
    "authoring.discard": Action(EDITOR, form=lambda world: {"confirm": "yes"}),
    "authoring.listing": Action(EDITOR + "#listing", form=lambda world: {"listed": "on"}),
    "authoring.duplicate": Action(f"/teach/quizzes/{OWN_SLUG}-copy/edit"),
    "authoring.delete": Action("/teach/quizzes", form=lambda world: {"confirm": "yes"}),
    "authoring.stop_sharing": Action(f"/teach/quizzes/{OWN_SLUG}/share", form=lambda world: {}),
    "authoring.restore": Action(EDITOR),
    "authoring.import_confirm": Action(
        "/teach/quizzes/imported/edit",
        form=lambda world: {"parsed": signed_import(world.app), "into": "", "title": "Imported"},
    ),
    "lti.new_registration_link": Action("/lti/admin"),
}



FILL: dict[str, Callable[["World", "Route"], object]] = {
    "class_id": lambda world, route: world.class_id,
    "token": lambda world, route: world.loose_token if route.without_a_class else world.class_token,
    "assignment_id": lambda world, route: world.assignment_id,
    "exception_id": lambda world, route: world.exception_id,
    "student_id": lambda world, route: world.roster_student_id,
    "slug": lambda world, route: OWN_SLUG if route.of_own_quiz else SLUG,
    "question_id": lambda world, route: "q1",
    "action": lambda world, route: "delete" if route.endpoint == "authoring.confirm" else "down",
    "instructor_id": lambda world, route: world.viewer_id,
    "publication_id": lambda world, route: world.publication_id,
    "format_name": lambda world, route: "qti",
    "code": lambda world, route: "never-handed-out",
}
"""How the walk fills each variable of a rule; a route with a new one (a roster student's id)
adds a line here that makes what it names in the world."""


@dataclass(frozen=True)
class Route:
    """One URL rule of the instructor pages, walked as one row of ACCESS."""

    rule: str
    endpoint: str
    method: str
    defaults: tuple
    variables: tuple
    row: str

    @property
    def without_a_class(self) -> bool:
        return self.row.endswith(" without a class")

    @property
    def of_own_quiz(self) -> bool:
        return self.endpoint.startswith("authoring.") or self.row.endswith(OWN_QUIZ)


OWN_QUIZ = " of an instructor's quiz"


def walked(rule) -> bool:
    return rule.endpoint.startswith(WALKED[0]) or rule.endpoint in WALKED[1:]


def rows_of(rule) -> list[str]:
    """The rows of ACCESS a rule is walked as: a route about an attempt is walked with an
    attempt in the class and one without; a no-class default only without."""
    defaults = rule.defaults or {}
    if "class_id" in defaults and defaults["class_id"] is None:
        return [f"{rule.endpoint} without a class"]
    if "token" in rule.arguments:
        return [rule.endpoint, f"{rule.endpoint} without a class"]
    if rule.endpoint.startswith("teach.") and "slug" in rule.arguments:
        return [rule.endpoint, rule.endpoint + OWN_QUIZ]
    return [rule.endpoint]


def routes(app) -> list[Route]:
    found = []
    for rule in app.url_map.iter_rules():
        if not walked(rule):
            continue
        method = "GET" if "GET" in rule.methods else "POST"
        defaults = tuple(sorted((rule.defaults or {}).items()))
        variables = tuple(sorted(rule.arguments - set(rule.defaults or {})))
        for row in rows_of(rule):
            found.append(Route(rule.rule, rule.endpoint, method, defaults, variables, row))
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
    viewer_id: str
    assignment_id: int
    roster_student_id: int
    publication_id: int
    exception_id: int
    browsers: dict = field(default_factory=dict)
    """A logged-in browser per visitor, in the world the read-only cells share."""
    built: tuple = ()
    """Its rows and its student's cookies as built, which a world of a test's own copies."""

    def set(self, **values):
        """Change the owner's class directly, to set a scene."""
        with self.app.app_context():
            scope = db.session.get(Class, self.class_id)
            for name, value in values.items():
                setattr(scope, name, value)
            db.session.commit()

    def remove_roster_student(self):
        """Take the roster's student off it, so that restoring them would show."""
        with self.app.app_context():
            db.session.get(RosterStudent, self.roster_student_id).removed_at = now()
            db.session.commit()

    def void_attempts(self):
        """Void both walked attempts, as the admin would."""
        with self.app.app_context():
            for attempt in db.session.scalars(db.select(Attempt)):
                attempt.voided_at = now()
                attempt.seat = None
            db.session.commit()

    def finish_attempts(self, score_override=None):
        """Finish both walked attempts, as their students would (only then are marks given),
        with a score an instructor set, to undo."""
        with self.app.app_context():
            for attempt in db.session.scalars(db.select(Attempt)):
                attempt.finished_at, attempt.score_override = now(), score_override
            db.session.commit()


@pytest.fixture
def world(app, read_world):
    """A world of the test's own, for a test that changes it: the shared world as built, copied
    into the test's database (building one takes ten times as long)."""
    rows, cookies = read_world.built
    put_rows(app, rows)
    student = Student(app.test_client())
    for name, value in cookies.items():
        student.client.set_cookie(name, value)
    student.token, student._csrf = read_world.student.token, read_world.student.csrf
    return replace(read_world, app=app, student=student, browsers={}, built=())


@pytest.fixture(scope="module")
def read_world(tmp_path_factory):
    """One world for the cells that only read, with a browser logged in as each visitor."""
    with shared_schema("access") as schema:
        app = make_app(tmp_path_factory.mktemp("access"), schema)
        with app.app_context():
            quiz = current_bank().quizzes[SLUG]
        world = build_world(app, quiz)
        cookies = {
            name: cookie.value
            for name in ("session", BROWSER_COOKIE)
            if (cookie := world.student.client.get_cookie(name)) is not None
        }
        world.built = (all_rows(app), cookies)
        world.browsers = {role: browser(world, role) for role in ROLES}
        yield world
        with app.app_context():
            db.engine.dispose()


def build_world(app, quiz):
    """Six instructors: owner and other with a class each, the owner's shared with a viewer, a
    manager and a course-only manager, and an admin; attempts in the owner's class (two
    spellings of Ada) and out of it."""
    with app.app_context():
        owner = create_instructor("owner", PASSWORDS["owner"])
        other = create_instructor("other", PASSWORDS["other"])
        viewer = create_instructor("vera", PASSWORDS["vera"])
        manager = create_instructor("max", PASSWORDS["max"])
        create_instructor("boss", PASSWORDS["boss"], is_admin=True)
        course_only = create_instructor("lena", PASSWORDS["lena"])
        course_only.course_only = True
        mine = Class(name=OWNER_CLASS, join_code="ABCDEF", instructor_id=owner.id)
        theirs = Class(name=OTHER_CLASS, join_code="GHJKMN", instructor_id=other.id)
        db.session.add_all([mine, theirs])
        db.session.commit()
        class_id, other_class_id = mine.id, theirs.id
        factories.share(mine, viewer, Role.VIEW)
        factories.share(mine, manager, Role.MANAGE)
        factories.share(mine, course_only, Role.MANAGE)
        factories.attempt(quiz, "Ada L", class_id=class_id)
        viewer_id = str(viewer.id)
        # The owner's own quiz, published, then changed in a draft: shared to use and to edit.
        own = factories.owned_quiz(owner, OWN_SLUG)
        publication_id = db.session.scalar(db.select(Publication.id).filter_by(quiz_id=own.id))
        drafts.save(own, lambda draft: draft["questions"][1].update(prompt="Reworded?"), owner.id)
        factories.share_quiz(own, viewer, QuizRole.USE)
        factories.share_quiz(own, manager, QuizRole.EDIT)
        signing_key()  # the LTI key is made on first use: before the walk, so a GET changes nothing

    # Outside any class, before a class holds the quiz's feedback back, which would refuse it.
    grace = Student(app.test_client())
    assert grace.start(name="Grace").status_code == 303
    with app.app_context():
        # Feedback held until the close, so that releasing it shows.
        mine = db.session.get(Class, class_id)
        assignment_id = factories.assignment(mine, quiz, feedback=FeedbackWhen.AFTER_CLOSE).id
    ada = Student(app.test_client())
    assert ada.start(name="Ada", class_code="ABCDEF").status_code == 303
    for number in (1, 2):
        right = right_choice(quiz.questions[number - 1]).id
        assert ada.answer(number, right).status_code == 303
        assert grace.answer(number, right).status_code == 303
    with app.app_context():  # added after Ada typed her name: a roster class takes codes only
        dana_id = add_students(class_id, read_text("Dana Diaz, 20231234"))[0].id
        held = db.session.get(Assignment, assignment_id)
        save_exception(held, {roster_key(dana_id): "Dana Diaz"}, Said(attempts_allowed=3))
        exception_id = db.session.scalar(db.select(Accommodation.id))
    return World(
        app,
        class_id,
        other_class_id,
        ada.token,
        grace.token,
        ada,
        viewer_id,
        assignment_id,
        dana_id,
        publication_id,
        exception_id,
    )


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
    fill = {name: value(world, route) for name, value in FILL.items()}
    values = dict(route.defaults)
    for name in route.variables:
        assert name in fill, f"the walk cannot fill <{name}> in {route.rule}: add it to FILL"
        values[name] = fill[name]
    with world.app.test_request_context():
        url = url_for(route.endpoint, **values)
    adapter = world.app.url_map.bind("localhost")
    rule, _ = adapter.match(url, method=route.method, return_rule=True)
    assert rule.rule == route.rule, f"{url} leads to {rule.rule}, not {route.rule}"
    return url


def case_id(route):
    return f"{route.row}:{route.method} {route.rule}"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", ROUTES, ids=case_id)
def test_instructor_routes_by_visitor(request, route, role):
    """Each instructor route treats each visitor as the access table says; only allowed POSTs
    change anything."""
    assert route.row in ACCESS, f"no row for {route.row} ({route.rule}): add it to ACCESS"
    expected = OUTCOMES[ACCESS[route.row].split()[ROLES.index(role)]]
    action = ACTIONS.get(route.endpoint)
    assert (route.method == "POST") == (action is not None), f"ACTIONS and {route.rule} disagree"
    # A cell that changes the world, or sets a scene in it, has one of its own; the others
    # share one, built once.
    if expected == "done" or (action and action.prepare):
        world = request.getfixturevalue("world")
        client = browser(world, role)
    else:
        world = request.getfixturevalue("read_world")
        client = world.browsers[role]
    url = url_of(world, route)
    defaults = dict(route.defaults)
    if action and action.prepare:
        action.prepare(world, defaults)
    before = stored_rows(world.app)

    if route.method == "GET":
        response = client.get(url)
    else:
        form = {"csrf_token": session_token(client), **action.form(world)}
        response = client.post(url, data=form)

    # Grades and names, or the way to them: never kept by a shared computer's browser or a proxy.
    assert response.headers["Cache-Control"] == "no-store"
    location = response.headers.get("Location", "")
    status = {"page": 200, "missing": 404, "refused": 403}
    if expected == "login":
        assert response.status_code in (302, 303), response.status_code
        assert location.startswith("/login"), location
    elif expected == "done":
        assert response.status_code == 303, text(response)
        lands = action.lands(defaults) if callable(action.lands) else action.lands
        token = world.loose_token if route.without_a_class else world.class_token
        student_id = world.roster_student_id
        assert location == lands.format(class_id=world.class_id, token=token,
                                        student_id=student_id, assignment_id=world.assignment_id)
    else:
        assert response.status_code == status[expected], text(response)
    assert (stored_rows(world.app) != before) == (expected == "done")


def test_the_walk_covers_every_instructor_route(world):
    """A new instructor route the walk cannot build or has no row for fails here."""
    in_map = [rule for rule in world.app.url_map.iter_rules() if walked(rule)]
    covered = routes(world.app)
    for route in covered:
        assert route.row in ACCESS, f"{route.rule} has no row in ACCESS"
        assert url_of(world, route).startswith("/")
    assert {route.row for route in covered} == set(ACCESS)
    assert {route.endpoint for route in covered} == {rule.endpoint for rule in in_map}
    assert {route.rule for route in covered} == {rule.rule for rule in in_map}
    assert {route.endpoint for route in covered if route.method == "POST"} == set(ACTIONS)
    assert covered == ROUTES  # the parametrized walk saw the same map


@pytest.mark.parametrize(
    ("role", "visible"),
    [
        ("other", {OTHER_CLASS}),
        ("viewer", {OWNER_CLASS}),
        ("manager", {OWNER_CLASS}),
        ("owner", {OWNER_CLASS}),
        ("admin", {OWNER_CLASS, OTHER_CLASS}),
    ],
)
def test_dashboard_lists_only_the_classes_you_may_see(world, role, visible):
    """An instructor's class list holds their own classes and those shared with them, marked
    with the owner; an admin's holds every class."""
    page = text(browser(world, role).get("/teach"))
    assert {name for name in (OWNER_CLASS, OTHER_CLASS) if name in page} == visible
    shared = {"viewer": "Shared by owner (can view)", "manager": "Shared by owner (can manage)"}
    assert (shared.get(role, "Shared by") in page) == (role in shared)
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
