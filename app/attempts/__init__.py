"""The student side: starting an attempt, answering, finishing, and the results. Its parts:

- views.py: the student pages; forms.py: what they ask; browser.py: whose attempt it is;
- starts.py: starting, as a typed name, a roster code and an LMS launch all do;
- service.py: recording starts, answers and finishes (the only code that writes answers);
- lookup.py: a quiz or an attempt for a page, or its 404;
- policy.py: the rules that decide, as pure functions, and Rules, one student's rules.

Rosters, LTI and the instructor pages use starts, service, policy and lookup, never the views."""

from flask import Flask

from .policy import Shows, rules_for
from .service import rules_of_attempt
from .views import bp


def init_app(app: Flask) -> None:
    """Add the student pages; their templates say an assignment's rules as rules_for does, and
    every sentence about feedback is chosen by the one answer (Shows) the rules give."""
    app.register_blueprint(bp)
    app.add_template_global(rules_for)
    app.add_template_global(rules_of_attempt)
    app.add_template_global(Shows, "Shows")
