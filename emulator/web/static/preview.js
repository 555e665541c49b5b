// Email frames as tall as the emails they show (the message's preview, each message of an inbox
// thread), and the preview's dark renderings on request.
(function () {
  "use strict";
  var ui = window.EmulatorUI;

  // Each frame reports its content's height (a script of ours the frame's CSP allows by nonce); only
  // numbers from a fitted frame's own window are taken, each applied to that frame alone.
  // The first report of each document is taken at the frame's current height; the frame is then
  // shrunk to a sliver and grows to the height it reports from there (its content's own height).
  var MIN_FRAME = 40;
  var fitted = [];

  ui.remeasure = function (frame) {
    if (!frame) return;
    frame.dataset.measured = "";
    frame.style.height = "";
  };

  function frameOf(source) {
    for (var i = 0; i < fitted.length; i++) {
      if (fitted[i].contentWindow === source) return fitted[i];
    }
    return null;
  }

  window.addEventListener("message", function (event) {
    var frame = event.data && frameOf(event.source);
    if (!frame) return;
    var height = event.data.resendEmulatorFrameHeight;
    if (typeof height !== "number" || !isFinite(height)) return;
    // Taken before the last resize: the frame reports again at its new height.
    if (Math.abs(event.data.atHeight - frame.clientHeight) > 1) return;
    if (!frame.dataset.measured) {
      frame.dataset.measured = "true";
      frame.style.height = MIN_FRAME + "px";  // its resize makes the frame report again
      return;
    }
    frame.style.height = Math.min(Math.max(Math.ceil(height), MIN_FRAME), 200000) + "px";
  });

  ui.fitFrame = function (frame) {
    if (!frame || fitted.indexOf(frame) >= 0) return;
    fitted.push(frame);
    // A frame that loaded before the listener existed reported to no one: ask it again.
    if (frame.contentWindow) frame.contentWindow.postMessage("resendEmulatorMeasure", "*");
  };

  // The frame always says which scheme to show: light is the light rendering even under a dark system.
  function schemed(src, scheme) {
    return src + (src.indexOf("?") < 0 ? "?" : "&") + "scheme=" + scheme;
  }

  // Dark mode (the email's own dark styles) and Forced dark (the simulated inversion) exclude each
  // other; pressing the one that is on goes back to light.
  function setScheme(preview, scheme) {
    var wrap = document.getElementById("frame-wrap");
    if (!wrap || wrap.dataset.scheme === scheme) return;
    Array.prototype.forEach.call(document.querySelectorAll(".schemes [data-scheme]"), function (button) {
      button.setAttribute("aria-pressed", button.dataset.scheme === scheme ? "true" : "false");
    });
    ui.remeasure(preview);
    preview.src = schemed(preview.dataset.src, scheme);
    wrap.dataset.scheme = scheme;
    var hint = document.getElementById("dark-hint");
    if (hint) hint.hidden = scheme !== "dark" || wrap.hasAttribute("data-dark-styles");
    var note = document.getElementById("forced-note");
    if (note) note.hidden = scheme !== "forced";
  }

  ui.setupPreview = function (preview) {
    if (!preview) return;
    ui.fitFrame(preview);
    Array.prototype.forEach.call(document.querySelectorAll("[data-scheme]"), function (button) {
      if (button.tagName !== "BUTTON") return;
      button.addEventListener("click", function () {
        var on = button.getAttribute("aria-pressed") !== "true";
        setScheme(preview, on ? button.dataset.scheme : "light");
      });
    });
  };

  if (ui.page === "thread") {
    Array.prototype.forEach.call(document.querySelectorAll(".conversation iframe"), ui.fitFrame);
  }
}());
