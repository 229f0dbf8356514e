"""gunicorn settings for Quizwright from the environment: `gunicorn -c gunicorn.conf.py`."""

import multiprocessing
import os

wsgi_app = "wsgi:app"
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * multiprocessing.cpu_count() + 1))
# Every page is a few quick queries; a request still running after 30 s is stuck, not busy.
timeout = 30
# On SIGTERM, finish the requests in flight (an answer being saved) before exiting.
graceful_timeout = 20
keepalive = 5
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# Each worker builds its own app and database pool after the fork, so no connection is shared.
preload_app = False
