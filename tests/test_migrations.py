"""The committed migrations build exactly the schema the models describe, on either database."""

import hashlib
import json

import flask_migrate
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app import create_app
from app.extensions import db
from app.health import SCHEMA_REVISION, schema_behind
from app.text import plain

pytestmark = pytest.mark.postgres


@pytest.fixture
def blank_app(blank_database):
    """An app on a database with no tables, for the migrations to build."""
    app = create_app({"SECRET_KEY": "test", **blank_database})
    yield app
    with app.app_context():
        db.engine.dispose()


def test_migrations_match_the_models(blank_app):
    """Upgrading an empty database leaves no difference from the models (no drift)."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), db.metadata) == []


def test_the_code_knows_the_migration_it_needs(blank_app):
    """app/health.py names the head of migrations/versions, which app servers never load:
    a new migration must move it, or /healthz would call the upgraded schema behind. An
    upgraded database is healthy."""
    with blank_app.app_context():
        head = ScriptDirectory.from_config(flask_migrate.Migrate().get_config()).get_current_head()
        assert head == SCHEMA_REVISION
        flask_migrate.upgrade()
        assert schema_behind() is None
        flask_migrate.downgrade(revision="-1")
        assert "run `flask db upgrade`" in schema_behind()


def test_migrations_downgrade_to_empty(blank_app):
    """Every migration can be undone, leaving only Alembic's own table."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade()
        flask_migrate.downgrade(revision="base")
        assert inspect(db.engine).get_table_names() == ["alembic_version"]


def test_upgrade_fills_in_what_reports_read_of_existing_attempts(blank_app):
    """Old attempts get their tallies (revision 0003) and their student's key (0004); old
    answers their marks, right 1 and wrong 0 (0022)."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade(revision="d86e449ffcf1")
        with db.engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO quiz_versions (id, slug, digest, snapshot, created_at)"
                " VALUES (1, 'q', 'd', '{}', '2026-01-01 10:00:00')"
            )
            connection.exec_driver_sql(
                "INSERT INTO attempts (id, token, quiz_version_id, student_name, browser,"
                " started_at) VALUES (1, 't', 1, 'Ada Straße', 'b', '2026-01-01 10:00:00')"
            )
            for n, correct in enumerate((True, False, True)):
                connection.exec_driver_sql(
                    "INSERT INTO answers (attempt_id, question_id, choice_id, is_correct,"
                    f" answered_at) VALUES (1, 'q{n}', 'a', {str(correct).lower()},"
                    f" '2026-01-01 10:0{n + 1}:00')"
                )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            answered, points, last, key = connection.exec_driver_sql(
                "SELECT answered, points, last_answer_at, student_key FROM attempts"
            ).one()
            marks = connection.exec_driver_sql(
                "SELECT mark FROM answers ORDER BY question_id"
            ).scalars().all()
    assert (answered, points, key) == (3, 2, "ada strasse")
    assert marks == [1, 0, 1]
    assert str(last).startswith("2026-01-01 10:03:00")


def test_upgrade_gives_older_names_with_invisible_characters_their_student(blank_app):
    """An attempt stored as "Ada" plus a zero-width space counts as Ada's after 0006, and back."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade(revision="c3f69411be20")
        with db.engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO quiz_versions (id, slug, digest, snapshot, created_at)"
                " VALUES (1, 'q', 'd', '{}', '2026-01-01 10:00:00')"
            )
            for id_, name in enumerate(["Ada", "Ada\u200b", "\ufeffA\u200dda "], start=1):
                connection.execute(
                    text(
                        "INSERT INTO attempts (id, token, quiz_version_id, student_name,"
                        " student_key, browser, started_at) VALUES (:id, :token, 1, :name, :key,"
                        " 'b', '2026-01-01 10:00:00')"
                    ),
                    {"id": id_, "token": f"t{id_}", "name": name, "key": name.strip().casefold()},
                )
        keys = "SELECT student_key FROM attempts ORDER BY id"
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql(keys).scalars().all() == ["ada"] * 3
        flask_migrate.downgrade(revision="c3f69411be20")
        with db.engine.connect() as connection:
            restored = connection.exec_driver_sql(keys).scalars().all()
    assert restored == ["ada", "ada\u200b", "\ufeffa\u200dda"]


def test_upgrade_gives_existing_roster_students_their_name_key(blank_app):
    """Roster students stored before 0011 keep their rows and get the key of their name."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade(revision="e928b78e10ef")
        with db.engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO instructors (id, username, password_hash, is_admin, session_token,"
                " is_active, time_zone, created_at) VALUES (1, 't', 'h', false, 's', true, 'UTC',"
                " '2026-01-01 10:00:00')"
            )
            connection.exec_driver_sql(
                "INSERT INTO classes (id, name, join_code, instructor_id, is_open, created_at)"
                " VALUES (1, 'Physics', 'ABCDEF', 1, true, '2026-01-01 10:00:00')"
            )
            connection.exec_driver_sql(
                "INSERT INTO roster_students (id, class_id, name, sign_in_code, created_at)"
                " VALUES (1, 1, 'Dana  STRASSE', 'ABCD2345', '2026-01-01 10:00:00')"
            )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            row = connection.exec_driver_sql(
                "SELECT name, name_key, sign_in_code FROM roster_students"
            ).one()
    assert tuple(row) == ("Dana  STRASSE", "dana strasse", "ABCD2345")


def test_upgrade_keeps_accounts_lms_launches_made_to_their_courses(blank_app):
    """Accounts a launch made before revision 0017 reach only their courses' classes; accounts
    an admin made keep every right."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade(revision="5d7c2a90e6b1")
        with db.engine.begin() as connection:
            for n, (name, password) in enumerate((("ada", "scrypt:x"), ("lti-3f2a", "!lti"))):
                connection.exec_driver_sql(
                    "INSERT INTO instructors (id, username, password_hash, is_admin,"
                    f" session_token, created_at) VALUES ({n + 1}, '{name}', '{password}',"
                    f" false, 'token-{n}', '2026-01-01 10:00:00')"
                )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            rows = connection.exec_driver_sql(
                "SELECT username, course_only FROM instructors ORDER BY id"
            ).all()
    assert [(name, bool(flag)) for name, flag in rows] == [("ada", False), ("lti-3f2a", True)]


def test_upgrade_gives_courses_of_a_one_deployment_platform_their_deployment(blank_app):
    """Revision 0018: a course of a platform with one deployment is that deployment's; one of
    a platform with several waits, unclaimed, for a launch to say which."""
    app = blank_app
    with app.app_context():
        flask_migrate.upgrade(revision="7e3a1c5b9d20")
        with db.engine.begin() as connection:
            run = connection.exec_driver_sql
            run(
                "INSERT INTO instructors (id, username, password_hash, is_admin, session_token,"
                " created_at) VALUES (1, 'ada', 'x', false, 't', '2026-01-01 10:00:00')"
            )
            for n, deployments in ((1, ("d-1",)), (2, ("d-2", "d-3"))):
                run(
                    "INSERT INTO lti_platforms (id, issuer, client_id, name, auth_login_url,"
                    f" auth_token_url, key_set_url, created_at) VALUES ({n}, 'https://lms{n}',"
                    f" 'c', 'LMS', 'https://a', 'https://t', 'https://k', '2026-01-01 10:00:00')"
                )
                for deployment in deployments:
                    run(
                        "INSERT INTO lti_deployments (platform_id, deployment_id)"
                        f" VALUES ({n}, '{deployment}')"
                    )
                run(
                    "INSERT INTO classes (id, name, join_code, instructor_id, is_open,"
                    f" created_at) VALUES ({n}, 'C{n}', 'CODE{n}', 1, true,"
                    " '2026-01-01 10:00:00')"
                )
                run(
                    "INSERT INTO lti_courses (platform_id, context_id, class_id)"
                    f" VALUES ({n}, 'course-42', {n})"
                )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            rows = connection.exec_driver_sql(
                "SELECT platform_id, deployment_id FROM lti_courses ORDER BY platform_id"
            ).all()
    assert [tuple(row) for row in rows] == [(1, "d-1"), (2, None)]


def test_upgrade_marks_the_zones_instructors_chose(blank_app):
    """Revision 0019: "UTC", everyone's default, is no choice, so pages follow the browser;
    any other zone was chosen on a form. The zones themselves stay, for servers not yet
    restarted."""
    with blank_app.app_context():
        flask_migrate.upgrade(revision="2b8f0d4e6a13")
        with db.engine.begin() as connection:
            for id_, zone in ((1, "UTC"), (2, "Europe/Berlin")):
                connection.exec_driver_sql(
                    "INSERT INTO instructors (id, username, password_hash, is_admin,"
                    " session_token, is_active, course_only, time_zone, created_at) VALUES"
                    f" ({id_}, 't{id_}', 'h', false, 's{id_}', true, false, '{zone}',"
                    " '2026-01-01 10:00:00')"
                )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            rows = connection.exec_driver_sql(
                "SELECT id, time_zone, time_zone_chosen FROM instructors ORDER BY id"
            ).all()
    assert [tuple(row) for row in rows] == [(1, "UTC", False), (2, "Europe/Berlin", True)]


def test_upgrade_makes_the_banks_quizzes_site_quizzes(blank_app):
    """0020: the quizzes the newest release offers become listed site quizzes, in its order,
    serving the same versions; a quiz no longer offered becomes an archived one. The release
    is served as it was, every quiz still listed."""
    with blank_app.app_context():
        flask_migrate.upgrade(revision="5c1e9a7f3b02")
        with db.engine.begin() as connection:
            for id_, slug, title in ((1, "old", "Old"), (2, "b", "Bee"), (3, "a", "Ay")):
                connection.execute(
                    text(
                        "INSERT INTO quiz_versions (id, slug, digest, snapshot, created_at)"
                        " VALUES (:id, :slug, 'd', :snapshot, '2026-01-01 10:00:00')"
                    ),
                    {"id": id_, "slug": slug, "snapshot": f'{{"title": "{title}"}}'},
                )
            connection.exec_driver_sql(
                "INSERT INTO releases (id, created_at) VALUES (1, '2026-01-02 10:00:00')"
            )
            for position, version in enumerate((2, 3)):
                connection.exec_driver_sql(
                    "INSERT INTO offered_quizzes (release_id, position, quiz_version_id)"
                    f" VALUES (1, {position}, {version})"
                )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            quizzes = connection.exec_driver_sql(
                "SELECT slug, title, owner_id, listed, position, published_version_id,"
                " archived_at IS NOT NULL FROM quizzes ORDER BY id"
            ).all()
            published = connection.exec_driver_sql(
                "SELECT quiz_version_id FROM publications ORDER BY id"
            ).all()
            listed = connection.exec_driver_sql("SELECT listed FROM offered_quizzes").all()
    assert [tuple(row) for row in quizzes] == [
        ("b", "Bee", None, True, 0, 2, False),
        ("a", "Ay", None, True, 1, 3, False),
        ("old", "Old", None, True, None, 1, True),
    ]
    assert [row[0] for row in published] == [2, 3, 1]
    assert [bool(row[0]) for row in listed] == [True, True]


def test_upgrade_keeps_text_written_before_markdown_reading_as_written(blank_app):
    """0021: stored versions and drafts escape the marks Markdown would read, so an old
    attempt's review shows its text as it did; text that needs nothing is left as it was."""
    marked = {"slug": "m", "title": "M", "description": "Plain.", "questions": [
        {"id": "q", "prompt": "What is 2*3*4 in __init__?", "explanation": "Plain.",
         "choices": [{"id": "a", "text": "24", "correct": True, "explanation": "*Yes*"}]}]}
    with blank_app.app_context():
        flask_migrate.upgrade(revision="8d2a6c4e1f57")
        with db.engine.begin() as connection:
            for id_, quiz in ((1, marked), (2, {**marked, "questions": []})):
                connection.execute(
                    text(
                        "INSERT INTO quiz_versions (id, slug, digest, snapshot, created_at)"
                        " VALUES (:id, 'm', :digest, :snapshot, '2026-01-01 10:00:00')"
                    ),
                    {"id": id_, "digest": f"d{id_}", "snapshot": json.dumps(quiz)},
                )
            connection.execute(
                text(
                    "INSERT INTO quizzes (id, slug, title, listed, draft, draft_revision,"
                    " created_at) VALUES (1, 'm', 'M', false, :draft, 0, '2026-01-01 10:00:00')"
                ),
                {"draft": json.dumps(marked)},
            )
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            versions = connection.exec_driver_sql(
                "SELECT digest, snapshot FROM quiz_versions ORDER BY id"
            ).all()
            draft = connection.exec_driver_sql("SELECT draft FROM quizzes").scalar_one()
    (digest, snapshot), untouched = versions
    question = json.loads(snapshot)["questions"][0]
    assert question["prompt"] == "What is 2\\*3\\*4 in \\_\\_init\\_\\_?"
    assert question["choices"][0]["explanation"] == "\\*Yes\\*"
    assert plain(question["prompt"]) == marked["questions"][0]["prompt"]
    assert digest == hashlib.sha256(snapshot.encode()).hexdigest()
    assert tuple(untouched) == ("d2", json.dumps({**marked, "questions": []}))
    assert json.loads(draft)["questions"][0] == question
