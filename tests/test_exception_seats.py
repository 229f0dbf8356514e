import threading

import pytest
from test_timing import assign

from app.attempts.service import NoAttemptsLeft, start_attempt
from app.extensions import db
from app.models import Assignment, Attempt
from app.served import current_bank
from app.teach.exceptions import Said, save_exception

pytestmark = pytest.mark.postgres


def test_starts_racing_for_exception_seats(app, quiz, course):
    """Eight starts at once by a student with three attempts where the class allows one take
    seats 1 to 3, and the rest are told none is left."""
    racers = 8
    a_id = assign(app, quiz, course, attempts_allowed=1)
    with app.app_context():
        save_exception(db.session.get(Assignment, a_id), {"dana": "Dana"}, Said(attempts_allowed=3))
    barrier = threading.Barrier(racers)
    outcomes = []

    def go():
        with app.app_context():
            a = db.session.get(Assignment, a_id)
            q = current_bank().quizzes[quiz.slug]
            barrier.wait()
            try:
                start_attempt(q, "Dana", "b", a.class_id, assignment=a)
                outcomes.append("ok")
            except NoAttemptsLeft:
                outcomes.append("full")
            finally:
                db.session.remove()

    threads = [threading.Thread(target=go) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with app.app_context():
        seats = sorted(a.seat for a in db.session.scalars(db.select(Attempt)))
    assert seats == [1, 2, 3] and sorted(outcomes) == ["full"] * 5 + ["ok"] * 3
