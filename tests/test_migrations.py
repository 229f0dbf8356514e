"""The committed migrations build exactly the schema the models describe, on either database."""

import flask_migrate
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from app import create_app
from app.extensions import db

from helpers import database


def test_migrations_match_the_models(tmp_path):
    """Upgrading an empty database leaves no difference from the models (no drift)."""
    app = create_app({"SECRET_KEY": "test", **database(tmp_path)})
    with app.app_context():
        flask_migrate.upgrade()
        with db.engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection), db.metadata) == []


def test_migrations_downgrade_to_empty(tmp_path):
    """Every migration can be undone, leaving only Alembic's own table."""
    app = create_app({"SECRET_KEY": "test", **database(tmp_path)})
    with app.app_context():
        flask_migrate.upgrade()
        flask_migrate.downgrade(revision="base")
        assert inspect(db.engine).get_table_names() == ["alembic_version"]
