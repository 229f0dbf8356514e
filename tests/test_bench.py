"""`make bench`'s own seeding, on a small class: the benchmark runs rarely and for twenty
minutes, so a change to the app or to the tests' helpers that breaks it shows here first."""

import importlib.util
import sys

import pytest

from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Attempt, RosterStudent

from helpers import make_app

pytestmark = pytest.mark.any_database


@pytest.fixture
def bench(monkeypatch):
    """bench/run.py as a module, sized down: a few students and a few prepared requests."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # run.py puts bench/ first; undone after
    spec = importlib.util.spec_from_file_location("bench_run", PROJECT_ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    monkeypatch.setattr(run, "STUDENTS", 3)
    monkeypatch.setattr(run, "HALL", 2)
    monkeypatch.setattr(run, "SECONDS", 1)
    monkeypatch.setattr(run, "POOL_RATES", dict.fromkeys(run.POOL_RATES, 8))
    return run


def test_the_benchmark_seeds_what_its_scenarios_read(tmp_path, bench):
    """The seed makes the roster class, the pages the scenarios read, and requests each serves."""
    app = make_app(tmp_path, QUESTIONS_PATH=bench.scenarios.bank_with_every_type(tmp_path))
    seeded = bench.seed(app)
    try:
        with app.app_context():
            roster = db.session.scalars(
                db.select(RosterStudent).filter_by(class_id=seeded["class_id"])
            ).all()
            assert len(roster) == 3
            taken = db.select(db.func.count()).where(Attempt.class_id == seeded["class_id"])
            assert db.session.scalar(taken) == 3 * bench.ATTEMPTS_EACH
        assert len(seeded["hall"]) == 2
        client = app.test_client(use_cookies=False)
        for path, cookie in [seeded["question"], seeded["results"], *seeded["types"].values()]:
            assert client.get(path, headers={"Cookie": cookie}).status_code == 200, path
        _, path, body, (cookie, form) = seeded["posts"][0][0]
        answered = client.post(path, data=body, headers=[cookie.split(": ", 1)],
                               content_type=form.split(": ", 1)[1])  # fmt: skip
        assert answered.status_code == 303
    finally:
        seeded["lti"].close()
