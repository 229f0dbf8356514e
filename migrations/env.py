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
        context.configure(connection=connection, target_metadata=db.metadata, **options)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
