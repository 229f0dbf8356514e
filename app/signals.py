"""What the student side tells the features built on it (LTI today), as blinker signals: the
sender knows no receiver, and connecting a receiver twice keeps one."""

from blinker import Namespace

_signals = Namespace()

grade_changed = _signals.signal("grade-changed")
"""Sent with `attempt_id` and `occasion` ("finished", "voided", "restored") inside the
transaction that did it and before its commit: LTI's grade passback writes its outbox there, so
no grade is ever lost."""

attempt_starting = _signals.signal("attempt-starting")
"""Sent with a new `attempt` that came with no rows of its own to add (a retake, a start by a
roster code), before its commit: LTI ties a launched student's every attempt to their launch."""

class_page = _signals.signal("class-page")
"""Sent with `class_id` and `slug` while a class page is drawn; a receiver returns what it adds
to the page, or None (LTI: a course's roster loading and grade passback)."""

response_headers = _signals.signal("response-headers")
"""Sent as any response, an error page too, is about to get its security headers: a receiver
widens them for this page with app/headers.py's allow_framing and allow_posting_to (LTI: the
platform that frames its pages)."""
