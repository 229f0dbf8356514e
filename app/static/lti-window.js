// Inside an LMS's iframe: if this browser keeps Quizwright's cookies here, go on in the frame;
// if it blocks them (third-party cookies off), leave the choice of a new window to the student.
(function () {
  "use strict";
  var here = document.getElementById("lti-here");
  if (!here) { return; }
  var secure = window.location.protocol === "https:";
  document.cookie = "lti_cookie_check=1; path=/; max-age=60" + (secure ? "; SameSite=None; Secure" : "");
  var kept = document.cookie.indexOf("lti_cookie_check=1") !== -1;
  if (kept) {
    window.location.replace(here.href);
    return;
  }
  here.hidden = true;
  document.getElementById("lti-window-help").textContent =
    "Your browser blocks Quizwright's cookies inside the course page. Open it in a new window: your course stays open in this one.";
  document.getElementById("lti-new-window").focus();
})();
