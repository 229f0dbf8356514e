"""The Flask extensions, created unbound so that every module can import them without cycles."""

from hashlib import sha512

from flask import request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy
from flask_talisman import Talisman
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    """Declarative base whose constraint names are stable, so migrations can refer to them."""

    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


db = SQLAlchemy(model_class=Base)
csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Log in to see your classes."
# The session cookie is checked against the request's address and browser on every request.
login_manager.session_protection = "strong"


def _address_and_browser() -> str:
    """What a login is bound to: the client's address as ProxyFix found it, and its browser.

    Flask-Login's own version reads X-Forwarded-For as sent, which anyone can forge. Same format
    otherwise, so that upgrading logs nobody out.
    """
    address = (request.remote_addr or "").encode()
    browser = request.headers.get("User-Agent")
    browser = browser if browser is None else browser.encode()
    return sha512(f"{address}|{browser}".encode()).hexdigest()


login_manager._session_identifier_generator = _address_and_browser
# Limits are declared where they apply (login, answering); storage from RATELIMIT_STORAGE_URI.
limiter = Limiter(key_func=get_remote_address)
talisman = Talisman()
