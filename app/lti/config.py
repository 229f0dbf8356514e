"""The registered platforms as pylti1p3 asks for them: a tool configuration read from the
database, so that `flask lti add-platform` and dynamic registration take effect at once."""

from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.tool_config import ToolConfAbstract

from ..extensions import db
from .keys import signing_key
from .models import LtiDeployment
from .platforms import find_platform


class ToolRegistration(Registration):
    """pylti1p3 derives a kid of its own; platforms find the tool's key by the one published."""

    def get_kid(self):
        return signing_key().kid


class DatabaseToolConf(ToolConfAbstract):
    """Registrations and deployments from the lti_platforms and lti_deployments tables."""

    def check_iss_has_one_client(self, iss: str) -> bool:
        # Every issuer may have several client ids: always look up by both.
        return False

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return True

    def find_registration_by_issuer(self, iss, *args, **kwargs):
        return self.find_registration_by_params(iss, None)

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        platform = find_platform(iss, client_id)
        if platform is None:
            return None
        return (
            ToolRegistration()
            .set_issuer(platform.issuer)
            .set_client_id(platform.client_id)
            .set_auth_login_url(platform.auth_login_url)
            .set_auth_token_url(platform.auth_token_url)
            .set_key_set_url(platform.key_set_url)
            .set_tool_private_key(signing_key().private_key)
        )

    def find_deployment(self, iss, deployment_id):
        return self.find_deployment_by_params(iss, deployment_id, None)

    def find_deployment_by_params(self, iss, deployment_id, client_id, *args, **kwargs):
        platform = find_platform(iss, client_id)
        if platform is None:
            return None
        found = db.session.scalar(
            db.select(LtiDeployment).filter_by(platform_id=platform.id, deployment_id=deployment_id)
        )
        return Deployment().set_deployment_id(found.deployment_id) if found else None
