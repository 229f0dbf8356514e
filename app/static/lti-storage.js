// LTI client-side storage (1EdTech's OIDC login with LTI client-side postMessages): inside
// the platform's frame, where the browser may keep no cookie of ours, the login's state is
// put into the platform's storage frame, and the launch reads it back before it goes on.
// Anything unexpected leaves the page's own explanation and new-window link in view.
(function () {
  "use strict";
  var held = document.getElementById("lti-storage");
  if (!held || !window.postMessage) {
    return;
  }
  var data = held.dataset;
  var fallback = document.getElementById("lti-storage-fallback");
  var waiting = document.getElementById("lti-storage-waiting");
  // Only the frame the platform put this page in: never an opener, which any site can be.
  var host = window.parent !== window ? window.parent : null;
  var frame = null;
  try {
    frame = host && (data.target === "_parent" ? host : host.frames[data.target]);
  } catch (error) {
    frame = null;
  }
  var pending = {};

  function giveUp() {
    pending = {};
    waiting.hidden = true;
    fallback.hidden = false;
  }

  function ask(subject, fields, answered) {
    var id = subject + "-" + Date.now() + "-" + Math.random().toString(36).slice(2);
    pending[id] = { subject: subject + ".response", answered: answered };
    var message = { subject: subject, message_id: id };
    Object.keys(fields).forEach(function (name) { message[name] = fields[name]; });
    // Only the platform's origin may receive the state.
    frame.postMessage(message, data.origin);
  }

  if (!frame) {
    return;
  }
  window.addEventListener("message", function (event) {
    var answer = event.data;
    if (event.source !== frame || event.origin !== data.origin) {
      return;
    }
    if (!answer || typeof answer !== "object") {
      return;
    }
    var asked = pending[answer.message_id];
    if (!asked || answer.subject !== asked.subject) {
      return;
    }
    delete pending[answer.message_id];
    if (answer.error) {
      giveUp();
      return;
    }
    asked.answered(answer);
  });
  fallback.hidden = true;
  waiting.hidden = false;
  // A platform that never answers gets the new-window offer after a few seconds.
  var patience = window.setTimeout(giveUp, 5000);

  if (data.mode === "put") {
    var stored = 0;
    var keep = function () {
      stored += 1;
      if (stored === 2) {
        window.clearTimeout(patience);
        window.location.replace(data.next);
      }
    };
    ask("lti.put_data", { key: "state_" + data.state, value: data.state }, keep);
    ask("lti.put_data", { key: "nonce_" + data.nonce, value: data.nonce }, keep);
  } else {
    ask("lti.get_data", { key: "state_" + data.state }, function (answer) {
      window.clearTimeout(patience);
      if (answer.value === data.state) {
        document.getElementById("lti-storage-launch").submit();
      } else {
        giveUp();
      }
    });
  }
})();
