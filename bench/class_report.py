"""Time the class results page and its exports for a class of 500 on SQLite.

Not a test: run it with `make bench`. It seeds a temporary database with 500 students who
each completed the quiz (4,000 answers), logs an instructor in through the test client and
reports the median and 99th-percentile time of each page over repeated requests.
"""

import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from app import create_app
from app.auth import create_instructor
from app.extensions import db
from app.models import Answer, Attempt, Class, QuizVersion

STUDENTS = 500
REPEATS = 40
PAGES = ["", "/gradebook.csv", "/responses.csv", "/items.csv"]


def seed(app) -> int:
    """500 students with one completed attempt each; returns the class id."""
    rng = random.Random(2026)
    with app.app_context():
        db.create_all()
        teacher = create_instructor("bench", "bench password")
        class_ = Class(name="Benchmark class", join_code="BENCH2", instructor=teacher)
        quiz = next(iter(app.extensions["quizwright.bank"].quizzes.values()))
        version = QuizVersion(slug=quiz.slug, digest=quiz.version, snapshot=quiz.snapshot)
        for n in range(STUDENTS):
            attempt = Attempt(
                quiz_version=version, student_name=f"Student {n:03d}", browser="bench",
                class_=class_,
            )  # fmt: skip
            skill = rng.random()
            for question in quiz.questions:
                right = rng.random() < 0.3 + 0.6 * skill
                wrong = [c for c in question.choices if not c.correct]
                choice = question.right_choice if right else rng.choice(wrong)
                attempt.answers.append(
                    Answer(question_id=question.id, choice_id=choice.id, is_correct=right)
                )
            # The tallies record_answer keeps, kept here by hand for speed.
            attempt.answered = len(quiz.questions)
            attempt.points = sum(answer.is_correct for answer in attempt.answers)
            attempt.last_answer_at = attempt.started_at = datetime.now(UTC)
            db.session.add(attempt)
        db.session.commit()
        return class_.id


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="quizwright-bench-"))
    app = create_app(
        {"SECRET_KEY": "bench", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder / 'bench.db'}"}
    )
    class_id = seed(app)
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    client.post(
        "/login", data={"csrf_token": token, "username": "bench", "password": "bench password"}
    )
    print(f"Class of {STUDENTS} students, {REPEATS} requests each, SQLite, one process")
    print(f"{'page':<40} {'p50 ms':>8} {'p99 ms':>8} {'bytes':>9}")
    for suffix in PAGES:
        url = f"/teach/classes/{class_id}{suffix}"
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            response = client.get(url)
            times.append(1000 * (time.perf_counter() - start))
            assert response.status_code == 200, (url, response.status_code)
        times.sort()
        p99 = times[min(len(times) - 1, round(0.99 * len(times)))]
        print(f"{url:<40} {statistics.median(times):>8.1f} {p99:>8.1f} {len(response.data):>9}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
