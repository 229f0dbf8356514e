"""The WSGI entry point: `gunicorn wsgi:app`, `flask --app wsgi ...`."""

import os

from app import create_app

# The Flask command line sets this before loading the app; an app server leaves out its parts.
app = create_app(command_line="FLASK_RUN_FROM_CLI" in os.environ)
