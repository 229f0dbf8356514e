"""Alembic's environment, run by `flask db ...` inside the app: its engine and its models."""

import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app

config = context.config
# Keep the app's own loggers working when migrations run inside a live process.
fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger("alembic.env")

db = current_app.extensions["migrate"].db
config.set_main_option(
    "sqlalchemy.url", db.engine.url.render_as_string(hide_password=False).replace("%", "%%")
)


def run_migrations_offline():
    """Write the migration SQL to standard output instead of running it (`--sql`)."""
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=db.metadata,
        literal_binds=True,
        **current_app.extensions["migrate"].configure_args,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run the migrations on the app's own engine."""

    def skip_empty_revisions(context, revision, directives):
        # `flask db migrate` with no model change should not write an empty revision.
        if getattr(config.cmd_opts, "autogenerate", False) and directives[0].upgrade_ops.is_empty():
            directives[:] = []
            logger.info("No changes in schema detected.")

    options = {
        "process_revision_directives": skip_empty_revisions,
        **current_app.extensions["migrate"].configure_args,
    }
    with db.engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # A batch migration copies a table, drops it and renames the copy: with foreign keys
            # on, the drop deleted every row referring to it (0004 lost every answer). SQLite
            # takes this pragma only outside a transaction.
            _foreign_keys(connection, "OFF")
        context.configure(connection=connection, target_metadata=db.metadata, **options)
        with context.begin_transaction():
            context.run_migrations()
        if sqlite:
            _foreign_keys(connection, "ON")  # the connection goes back to the app's pool


def _foreign_keys(connection, state: str) -> None:
    """Turn SQLite's foreign keys on or off for this connection."""
    connection.exec_driver_sql(f"PRAGMA foreign_keys={state}")
    connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
