"""The WSGI entry point: `gunicorn wsgi:app`, `flask --app wsgi ...`."""

import os

from app import create_app

# The Flask command line sets this before loading the app; an app server needs no migrations.
app = create_app(migrations="FLASK_RUN_FROM_CLI" in os.environ)
