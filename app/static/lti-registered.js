// LTI Dynamic Registration: tell the platform that opened this page that registration is done.
(function () {
  "use strict";
  var platform = window.opener || (window.parent !== window ? window.parent : null);
  if (platform) {
    platform.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
})();
