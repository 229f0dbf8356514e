"""Quizwright: a self-hosted quiz app that explains every answer."""

from pathlib import Path

import sqlalchemy
from flask import Flask, redirect, url_for
from werkzeug.middleware.proxy_fix import ProxyFix

# The pages first: a `git pull` landing while the code below is imported can then only pair
# newer code with older pages, which name nothing it lacks (a migration, a route only adds).
from . import pages

# isort: split
from . import (
    attempts,
    auth,
    authoring,
    cli,
    errors,
    evidence,
    formatting,
    guards,
    headers,
    health,
    images,
    lti,
    ratelimits,
    roster,
    sqlite,
    teach,
    transactions,
)
from .config import (
    PROJECT_ROOT,
    ConfigError,
    engine_options,
    from_environment,
    instance_secret,
)
from .cookies import SessionCookies
from .evidence import all_evidence, current_evidence
from .extensions import csrf, db, login_manager, talisman
from .releases import ServedBank


def create_app(config: dict | None = None, *, command_line: bool = True) -> Flask:
    """Build the app: settings, extensions, question bank, pages, commands, error pages.

    App servers leave out what only the command line needs: the `flask db` commands (Alembic
    costs each worker 11 MB) and checking the measurements against their schema (jsonschema,
    3 MB), which the command line makes: `flask db upgrade`, `flask quiz check` (docs/evidence.md).
    """
    app = Flask(__name__)
    app.config.from_mapping(from_environment(app.instance_path))
    app.config.from_mapping(config or {})
    if not app.debug:  # while debugging, edited pages and stylesheets show at once
        app.jinja_loader = pages.loader()
        app.view_functions["static"] = pages.static_file
    app.config.setdefault(
        "SQLALCHEMY_ENGINE_OPTIONS", engine_options(app.config["SQLALCHEMY_DATABASE_URI"])
    )
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    if not app.config["SECRET_KEY"]:
        if not app.debug:
            raise ConfigError(
                "SECRET_KEY is not set. It signs every session, so it must be set in the "
                "environment, be the same on every app server and survive restarts "
                "(README, Configuration). `make run` sets one from instance/secret_key."
            )
        app.config["SECRET_KEY"] = instance_secret(app.instance_path)
    app.logger.setLevel(app.config["LOG_LEVEL"])
    if proxies := app.config["TRUSTED_PROXIES"]:
        # Believe that many proxies' X-Forwarded-* headers for the client's address and scheme.
        app.wsgi_app = ProxyFix(
            app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies, x_port=proxies
        )

    app.session_interface = SessionCookies()
    db.init_app(app)
    if command_line:
        from flask_migrate import Migrate

        Migrate(app, db, directory=str(PROJECT_ROOT / "migrations"), render_as_batch=True)
    csrf.init_app(app)
    login_manager.init_app(app)
    ratelimits.init_app(app)
    talisman.init_app(
        app,
        force_https=False,  # the proxy in front redirects; the app may run behind plain HTTP
        session_cookie_secure=app.config["SESSION_COOKIE_SECURE"],
        # Built per page by app/headers.py, which LTI pages widen for their platforms.
        content_security_policy=None,
        frame_options=None,
        # Attempt tokens are in the address: no other site should ever see one.
        referrer_policy="same-origin",
    )
    headers.init_app(app)
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            sqlalchemy.event.listen(db.engine, "connect", sqlite.tune)
            sqlalchemy.event.listen(db.engine, "handle_error", sqlite.drop_read_only_connection)
    transactions.init_app(app)

    # The bank comes from the database on first use, never from the file a worker boots beside:
    # a file edited or broken on disk cannot make workers disagree or stop one from starting.
    app.extensions["quizwright.served"] = ServedBank(
        app.config["QUESTIONS_PATH"], app.config["BANK_CHECK_SECONDS"]
    )
    # A broken measurement raises EvidenceError here, before serving anyone.
    app.extensions["quizwright.evidence"] = all_evidence(schema=command_line)
    app.jinja_env.globals["measurements"] = current_evidence
    # Guards first: the blueprints' rules are built with its converters in place.
    for feature in (
        guards, attempts, roster, auth, teach, authoring, lti, health, cli, errors, formatting,
        images,
    ):
        feature.init_app(app)
    app.register_blueprint(evidence.bp)
    # Browsers ask for /favicon.ico whatever the page links; answer instead of logging a 404.
    app.add_url_rule(
        "/favicon.ico", "favicon", lambda: redirect(url_for("static", filename="favicon.svg"), 301)
    )
    return app


def read_every_template(app: Flask) -> None:
    """Compile every template now, from the pages read as the worker imported its code
    (app/pages.py), so that no first request waits for it."""
    for name in app.jinja_env.list_templates(extensions=["html"]):
        app.jinja_env.get_template(name)
