"""gunicorn settings for Quizwright from the environment: `gunicorn -c gunicorn.conf.py`."""

import gc
import os

wsgi_app = "wsgi:app"
bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# The cores this process may use, which in a container can be fewer than the machine has.
workers = int(os.environ.get("WEB_CONCURRENCY", 2 * len(os.sched_getaffinity(0)) + 1))
# Every page is a few quick queries; a request still running after 30 s is stuck, not busy.
timeout = 30
# On SIGTERM, finish the requests in flight (an answer being saved) before exiting.
graceful_timeout = 20
keepalive = 5
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# gunicorn's control socket has one fixed path per user, which two servers would fight over.
control_socket_disable = True
# Each worker builds its own app and database pool after the fork, so no connection is shared.
preload_app = False


def post_worker_init(worker):
    """Freeze what the worker has loaded: the app lives as long as the worker, so the garbage
    collector need not walk it again on every collection (a tenth of the class page's time)."""
    gc.collect()  # first free what loading left behind: frozen garbage would stay for good
    gc.freeze()


def worker_exit(server, worker):
    """Close the worker's database connections: the last one closed folds SQLite's write-ahead
    log into the database file, so that the file alone holds every answer."""
    app = getattr(worker, "wsgi", None)
    if hasattr(app, "app_context"):  # None when the worker failed to load the app
        from app.extensions import db

        with app.app_context():
            db.engine.dispose()


def on_exit(server):
    """Fold what a killed worker left in SQLite's write-ahead log into the database file."""
    from app.backups import configured_database, fold_write_ahead_log

    database = configured_database()
    if database is not None:
        fold_write_ahead_log(database)
