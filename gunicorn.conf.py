"""gunicorn settings for Quizwright from the environment: `gunicorn -c gunicorn.conf.py`."""

import gc
import ipaddress
import os
import re
import runpy
import socket
import time

from gunicorn.glogging import Logger

wsgi_app = "wsgi:app"
host = os.environ.get("HOST", "127.0.0.1")
port = os.environ.get("PORT", "8000")
bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
# A sync worker is held by one client until its request is complete, so six phones on a weak
# network, or anyone sending half a request, stop the server. A gevent worker waits on up to
# worker_connections at once and serves whichever has data (docs/deploy.md, the arrangement).
worker_class = "gevent"
worker_connections = 1000
# The cores this process may use, which in a container can be fewer than the machine has.
CORES = len(os.sched_getaffinity(0))
# A worker per core: a gevent worker waits on the database (psycopg yields to gevent) while it
# serves its other connections, so more workers than cores only take turns on them. On two cores
# five answered with a longer tail than two on SQLite, where a worker descheduled while it
# holds the write lock stops every other, and on PostgreSQL too (bench/analysis.md). Never one
# alone, which a long export or a restart would stop.
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, CORES))
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


# A personal sign-in link or code is a student's identity, and an LTI hand-over link an
# instructor's: whoever reads the access log could sign in as them. Logs keep the path's
# shape, not the code.
SIGN_IN_LINK = re.compile(r"(/s/|/lti/window/)[^/?#\s\"]+")
CODE_VALUE = re.compile(r"(?<=[?&]code=)[^&#\s\"]*|(?<=^code=)[^&#\s\"]*")


def redacted(text: str) -> str:
    """A request line, path, query or referrer with sign-in codes replaced by [code]."""
    return CODE_VALUE.sub("[code]", SIGN_IN_LINK.sub(r"\1[code]", text))


class RedactingLogger(Logger):
    """gunicorn's logger, with sign-in codes taken out of every access log field that shows the
    address: the request line, path, query and the Referer a personal link leaves behind."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for key in ("r", "U", "q", "f", "{referer}i"):
            if isinstance(atoms.get(key), str):
                atoms[key] = redacted(atoms[key])
        return atoms


logger_class = RedactingLogger


def when_ready(server):
    """Say where others can open the app: on 0.0.0.0 or ::, at every network interface's address."""
    if host in ("127.0.0.1", "localhost", "::1"):
        also = "" if port == "8000" else f"PORT={port} "
        server.log.info(
            "Only this computer can open http://%s:%s; to let phones in: HOST=0.0.0.0 %smake run",
            host,
            port,
            also,
        )
    if host not in ("0.0.0.0", "::"):
        return
    import psutil  # only the master needs it, once

    families = {socket.AF_INET} if host == "0.0.0.0" else {socket.AF_INET, socket.AF_INET6}
    for name, addresses in psutil.net_if_addrs().items():
        for address in addresses:
            if address.family not in families:
                continue
            ip = ipaddress.ip_address(address.address.split("%")[0])
            # A link-local IPv6 address needs the interface's name in it, which browsers refuse.
            if ip.is_loopback or ip.is_link_local:
                continue
            shown = f"[{ip}]" if ip.version == 6 else str(ip)
            server.log.info("Students can open http://%s:%s (%s)", shown, port, name)


# gunicorn drops a request whose headers are slow, but waits on a slow body for ever: a client
# that sends headers and then part of a form would hold its connection until the worker restarts.
BODY_SECONDS = 10
BODY_LARGEST = 64 * 1024  # the app's MAX_CONTENT_LENGTH: a larger body is refused unread
TURN_SECONDS = 0.05  # the longest a request waits for the others' turn


def post_fork(server, worker):
    """Ctrl-C reaches the workers too: stop as on SIGTERM, finishing the answers in flight. The
    quick stop exits from a greenlet, which gevent reports with a frightening traceback. Set
    before the worker installs its signal handlers, so that one still booting obeys it too."""
    worker.handle_quit = worker.handle_exit


def post_worker_init(worker):
    """Compile every template (read with the code, app/pages.py: an upgrade may replace the
    files before this worker stops), say if the database's schema is behind this release,
    read each request's body in time before the app sees it, then freeze what the worker has
    loaded: the app lives as long as the worker, so the garbage collector need not walk it
    again on every collection (a tenth of the class page's time)."""
    from app import read_every_template
    from app.health import schema_behind

    worker.quizwright_app = worker.wsgi  # worker_exit closes its connections
    read_every_template(worker.wsgi)
    with worker.wsgi.app_context():
        behind = schema_behind()
    if behind:  # pages that read what the schema lacks answer "being upgraded" until it is
        worker.log.error("The database is behind this release: %s", behind)
    worker.wsgi = body_in_time(worker.wsgi)
    gc.collect()  # first free what loading left behind: frozen garbage would stay for good
    gc.freeze()


def body_in_time(app):
    """Wrap a WSGI app so that each request first gives the worker's other connections their
    turn, and a body still arriving after BODY_SECONDS gets a 408 instead."""
    import io

    import gevent

    def buffered(environ, start_response):
        # Let every other connection with a request waiting have its turn first. A gevent
        # worker reads a kept-alive connection's next request without yielding when it has
        # already arrived, so a few quick clients kept the worker to themselves while the
        # others waited up to a second: /livez's p99 at 20 connections went from 480 ms to 22
        # ms with this, at the same throughput (bench/analysis.md). Bounded: while events keep
        # arriving the loop may never be idle.
        with gevent.Timeout(TURN_SECONDS, False):
            gevent.idle()
        length = environ.get("CONTENT_LENGTH") or ""
        if length.isdigit() and 0 < int(length) <= BODY_LARGEST:
            try:
                with gevent.Timeout(BODY_SECONDS):
                    body = environ["wsgi.input"].read(int(length))
            except gevent.Timeout:
                # Nothing more is read from this client, so its connection closes after the
                # answer instead of waiting for the rest of the body before the next request.
                environ["gunicorn.socket"].shutdown(socket.SHUT_RD)
                start_response(
                    "408 Request Timeout",
                    [("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close"),
                     ("X-Content-Type-Options", "nosniff")],
                )  # fmt: skip
                return [b"The request took too long to arrive. Try again.\n"]
            environ["wsgi.input"] = io.BytesIO(body)
        return app(environ, start_response)

    return buffered


def worker_exit(server, worker):
    """Close the worker's database connections: the last one closed folds SQLite's write-ahead
    log into the database file, so that the file alone holds every answer."""
    app = getattr(worker, "quizwright_app", None)
    if app is not None:  # None when the worker failed to load the app
        from app.extensions import db

        with app.app_context():
            db.engine.dispose()


def on_starting(server):
    """Note the SQLite file to fold at the stop, from the settings alone; again on a reload."""
    # app/config.py and app/sqlite.py, read on their own, import only the standard library: the
    # app itself would cost two seconds, and would import SQLAlchemy before gevent patches the
    # workers' locks. Read now, so that the stop reads no file a `git pull` may have replaced.
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "app")
    settings = runpy.run_path(os.path.join(package, "config.py"))
    sqlite = runpy.run_path(os.path.join(package, "sqlite.py"))
    instance = settings["INSTANCE_PATH"]
    try:
        url = settings["from_environment"](str(instance))["SQLALCHEMY_DATABASE_URI"]
    except settings["ConfigError"]:
        return  # each worker stops on it, saying which setting
    server.quizwright_database = sqlite["sqlite_path"](url, instance)
    server.quizwright_fold = sqlite["fold_write_ahead_log"]


on_reload = on_starting


def on_exit(server):
    """Fold what a killed worker left in SQLite's write-ahead log into the database file."""
    database = getattr(server, "quizwright_database", None)
    if database is None:
        return
    # The stop sends a worker still busy SIGKILL without waiting for it: while it lives, its
    # connection is open, and folding would leave an empty log behind.
    killed, waited = set(server.WORKERS), time.monotonic() + 5
    while killed and time.monotonic() < waited:
        killed = {pid for pid in killed if not _ended(pid)}
        time.sleep(0.01)
    server.quizwright_fold(database)


def _ended(pid: int) -> bool:
    """Whether a worker has ended, reaping it quietly: gunicorn would log a SIGKILL it sent at
    the stop as "Perhaps out of memory?"."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:  # reaped already
        return True
