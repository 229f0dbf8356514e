"""`flask lti`: registering platforms, listing and removing them, rotating the tool's key."""

from datetime import timedelta

import pytest

from app.extensions import db
from app.lti.keys import key_set, signing_key
from app.lti.models import LtiDeployment, LtiPlatform, LtiToolKey
from app.lti.rules import chosen_quiz, display_name, quizwright_role, share_role
from app.lti.storage import aware
from app.models import now

pytestmark = pytest.mark.any_database

MOODLE = [
    "--issuer", "https://moodle.example.edu",
    "--client-id", "abc123",
    "--auth-login-url", "https://moodle.example.edu/mod/lti/auth.php",
    "--auth-token-url", "https://moodle.example.edu/mod/lti/token.php",
    "--key-set-url", "https://moodle.example.edu/mod/lti/certs.php",
]  # fmt: skip


def lti(runner, *args, **kwargs):
    return runner.invoke(args=["lti", *args], **kwargs)


def stored(app) -> list[tuple[str, str, list[str]]]:
    with app.app_context():
        platforms = db.session.scalars(db.select(LtiPlatform).order_by(LtiPlatform.id))
        return [
            (p.issuer, p.client_id, [d.deployment_id for d in p.deployments]) for p in platforms
        ]


def test_add_platform_registers_it_and_makes_the_key(app, runner):
    """One command registers the platform with its deployment; the tool's key exists after."""
    result = lti(runner, "add-platform", *MOODLE, "--deployment-id", "7", "--name", "Moodle")
    assert result.exit_code == 0, result.output
    assert "Registered “Moodle” (https://moodle.example.edu, client id abc123)." in result.output
    assert stored(app) == [("https://moodle.example.edu", "abc123", ["7"])]
    with app.app_context():
        kid = db.session.scalars(db.select(LtiToolKey.kid)).one()
    assert f"signs with key {kid}" in result.output


def test_add_platform_again_adds_deployments(app, runner):
    """Running it again for the same issuer and client id adds deployments, not a platform."""
    lti(runner, "add-platform", *MOODLE, "--deployment-id", "7")
    again = lti(runner, "add-platform", *MOODLE, "--deployment-id", "8", "--deployment-id", "7")
    assert again.exit_code == 0, again.output
    assert "Deployments: 7, 8." in again.output
    assert stored(app) == [("https://moodle.example.edu", "abc123", ["7", "8"])]


def test_one_issuer_may_register_several_client_ids(app, runner):
    """A second client id of the same issuer is a second platform."""
    lti(runner, "add-platform", *MOODLE, "--deployment-id", "7")
    other = [*MOODLE]
    other[other.index("abc123")] = "def456"
    assert lti(runner, "add-platform", *other, "--deployment-id", "1").exit_code == 0
    assert [client for _, client, _ in stored(app)] == ["abc123", "def456"]


def test_add_platform_lists_every_problem_and_stores_nothing(app, runner):
    """Bad addresses and an empty client id are all named at once; nothing is written."""
    result = lti(
        runner,
        "add-platform",
        "--issuer", "moodle.example.edu",
        "--client-id", " ",
        "--auth-login-url", "ftp://moodle.example.edu/auth",
        "--auth-token-url", "https://moodle.example.edu/token",
        "--key-set-url", "not an address",
        "--deployment-id", "",
    )  # fmt: skip
    assert result.exit_code == 2
    for problem in (
        "--issuer: 'moodle.example.edu' is not an http:// or https:// address.",
        "--auth-login-url: 'ftp://moodle.example.edu/auth' is not an http:// or https:// address.",
        "--key-set-url: 'not an address' is not an http:// or https:// address.",
        "--client-id: give the client id the platform shows",
        "--deployment-id: '' is not 1 to 255 characters.",
    ):
        assert problem in result.output
    assert stored(app) == []
    with app.app_context():
        assert db.session.scalars(db.select(LtiToolKey)).all() == []


def test_add_platform_needs_every_address(runner):
    """A missing option is Click's usage error, naming it."""
    result = lti(runner, "add-platform", "--issuer", "https://lms.example.edu")
    assert result.exit_code == 2
    assert "Missing option '--client-id'" in result.output


def test_list_platforms(app, runner):
    """The list shows each platform's addresses and deployments; an empty list says how to add."""
    assert "No platforms registered" in lti(runner, "list-platforms").output
    lti(runner, "add-platform", *MOODLE, "--deployment-id", "7", "--name", "Moodle")
    listed = lti(runner, "list-platforms").output
    assert "Moodle" in listed
    assert "key set URL:     https://moodle.example.edu/mod/lti/certs.php" in listed
    assert "deployments:     7" in listed


def test_remove_platform(app, runner):
    """Removing forgets the platform and its deployments, after a confirmation."""
    lti(runner, "add-platform", *MOODLE, "--deployment-id", "7")
    declined = lti(runner, "remove-platform", "--issuer", "https://moodle.example.edu", input="n\n")
    assert declined.exit_code == 1
    assert len(stored(app)) == 1
    removed = lti(runner, "remove-platform", "--issuer", "https://moodle.example.edu", "--yes")
    assert removed.exit_code == 0, removed.output
    assert stored(app) == []
    with app.app_context():
        assert db.session.scalars(db.select(LtiDeployment)).all() == []


def test_remove_an_unknown_platform_says_so(runner):
    result = lti(runner, "remove-platform", "--issuer", "https://nowhere.example", "--yes")
    assert result.exit_code == 1
    assert "No platform https://nowhere.example is registered" in result.output


def test_rotate_key_keeps_the_old_key_published_for_the_grace_period(app, runner):
    """After a rotation the new key signs, both are published; after the grace period only the
    new one is."""
    with app.app_context():
        old = signing_key().kid
    result = lti(runner, "rotate-key", "--grace-days", "3")
    assert result.exit_code == 0, result.output
    with app.app_context():
        new = signing_key().kid
        assert new != old
        assert f"Now signing with key {new}." in result.output
        assert f"Key {old} stays published until" in result.output
        assert [key["kid"] for key in key_set()["keys"]] == [new, old]
        retired = db.session.scalars(db.select(LtiToolKey).filter_by(kid=old)).one()
        until = aware(retired.retired_at)
        assert now() + timedelta(days=2.9) < until <= now() + timedelta(days=3)
        retired.retired_at = now() - timedelta(seconds=1)
        db.session.commit()
        assert [key["kid"] for key in key_set()["keys"]] == [new]


def test_jwks_serves_the_published_keys(app, client, runner):
    """/lti/jwks.json lists the signing key and, during a grace period, the replaced one."""
    first = client.get("/lti/jwks.json").get_json()["keys"]
    assert len(first) == 1
    lti(runner, "rotate-key")
    second = client.get("/lti/jwks.json").get_json()["keys"]
    assert [key["kid"] for key in second][1] == first[0]["kid"]
    assert all("d" not in key and key["alg"] == "RS256" for key in second)


# --- The launch's pure rules


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"], "instructor"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator"], "instructor"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"],
         "instructor"),
        (["Instructor"], "instructor"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"], "learner"),
        (["Learner"], "learner"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
          "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"], "instructor"),
        # Institution roles say nothing about this course.
        (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], None),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"], None),
        ([], None),
    ],
)  # fmt: skip
def test_role_mapping(roles, expected):
    assert quizwright_role(roles) == expected


MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
TEACHING_ASSISTANT = MEMBERSHIP + "/Instructor#TeachingAssistant"


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"], "manage"),
        (["http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator"], "manage"),
        (["Instructor"], "manage"),
        ([MEMBERSHIP + "#Instructor", TEACHING_ASSISTANT], "view"),
        ([TEACHING_ASSISTANT], "view"),
    ],
)  # fmt: skip
def test_share_role(roles, expected):
    """Who teaches a course they did not open gets its class to manage, an assistant to view."""
    assert share_role(roles) == expected


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"name": "  Ada   Lovelace "}, "Ada Lovelace"),
        ({"given_name": "Ada", "family_name": "Lovelace"}, "Ada Lovelace"),
        ({"given_name": "Ada"}, "Ada"),
        ({"name": ""}, None),
        ({}, None),
        ({"name": "x" * 200}, "x" * 80),
    ],
)
def test_display_name(claims, expected):
    assert display_name(claims) == expected


@pytest.mark.parametrize(
    ("custom", "target", "offered", "expected"),
    [
        ({"quiz": "b"}, None, ["a", "b"], "b"),
        (None, "https://tool/lti/launch?quiz=b", ["a", "b"], "b"),
        ({"quiz": "a"}, "https://tool/lti/launch?quiz=b", ["a", "b"], "a"),
        (None, "https://tool/lti/launch", ["a"], "a"),
        (None, "https://tool/lti/launch", ["a", "b"], None),
        ({"quiz": "gone"}, None, ["a", "b"], None),
    ],
)
def test_chosen_quiz(custom, target, offered, expected):
    assert chosen_quiz(custom, target, offered) == expected
