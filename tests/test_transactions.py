"""On PostgreSQL a request that only read ends its transaction with a commit, which keeps
psycopg's prepared statements; one that may have written and did not commit still ends with the
rollback (app/transactions.py)."""

import pytest
from sqlalchemy import func, select, text

from app.extensions import csrf, db
from app.models import Instructor

from helpers import Student, make_app

pytestmark = pytest.mark.postgres


def test_a_page_that_only_reads_keeps_its_query_prepared(tmp_path):
    """On PostgreSQL the question page's query for the attempt, seven tables joined, was planned
    anew at every request: each request's rollback made psycopg forget it had prepared it."""
    app = make_app(tmp_path)
    with app.app_context():
        if db.engine.dialect.name != "postgresql":
            pytest.skip("psycopg's prepared statements")
    student = Student(app.test_client())
    student.start()
    for _ in range(6):  # psycopg prepares a statement the fifth time a connection runs it
        assert student.client.get(student.question_url(1)).status_code == 200
    with app.app_context():
        prepared = db.session.scalars(text("SELECT statement FROM pg_prepared_statements"))
        assert any(statement.startswith("SELECT attempts.id") for statement in prepared)
    assert student.client.get(student.results_url).status_code == 200


@pytest.mark.parametrize("wrote", ["added", "flushed", "in SQL"])
def test_a_request_that_wrote_and_did_not_commit_stores_nothing(tmp_path, wrote):
    """A view that changes something and then refuses, leaving the commit out, stores nothing:
    a change still in the session, one sent to the database, or a statement of its own."""
    app = make_app(tmp_path)

    @app.post("/changes-then-refuses")
    @csrf.exempt
    def changes_then_refuses():
        db.session.scalar(select(func.count()).select_from(Instructor))  # a read first
        if wrote == "in SQL":
            db.session.execute(
                text("INSERT INTO instructors (username, password_hash, is_admin, session_token, "
                     "is_active, course_only, time_zone, time_zone_chosen, created_at) VALUES "
                     "('ghost', 'x', false, 'ghost-token', true, false, 'UTC', false, "
                     "CURRENT_TIMESTAMP)")
            )  # fmt: skip
        else:
            db.session.add(Instructor(username="ghost", password_hash="x"))
            if wrote == "flushed":
                db.session.flush()
        return "Refused.", 400

    refused = app.test_client().post("/changes-then-refuses")
    assert (refused.status_code, refused.text) == (400, "Refused.")
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Instructor)) == 0


def test_a_connection_lost_in_a_handled_error_still_ends_the_request_cleanly(tmp_path):
    """A view that catches a failure of its connection and answers anyway (as an LTI launch
    refuses when the platform's keys cannot be read) gets its answer, and the next request a
    fresh connection."""
    app = make_app(tmp_path)

    @app.get("/connection-lost")
    def connection_lost():
        db.session.scalar(select(func.count()).select_from(Instructor))
        db.session.connection().invalidate()
        return "Answered anyway."

    client = app.test_client()
    lost = client.get("/connection-lost")
    assert (lost.status_code, lost.text) == (200, "Answered anyway.")
    assert client.get("/connection-lost").status_code == 200
