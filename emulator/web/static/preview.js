// The HTML preview frame: as tall as the email it shows, and the dark-mode rendering on request.
(function () {
  "use strict";
  var ui = window.EmulatorUI;

  // The preview frame reports its content's height (a script of ours the frame's CSP allows by nonce);
  // only numbers from that frame's own window are taken.
  // The first report of each document is taken at the frame's current height; the frame is then
  // shrunk to a sliver and grows to the height it reports from there (its content's own height).
  var MIN_FRAME = 40;
  var measured = false;
  ui.remeasure = function (preview) {
    measured = false;
    if (preview) preview.style.height = "";
  };

  function wrap() { return document.getElementById("frame-wrap"); }

  // The frame always says which scheme to show: light is the light rendering even under a dark system.
  function schemed(src, dark) {
    return src + (src.indexOf("?") < 0 ? "?" : "&") + "scheme=" + (dark ? "dark" : "light");
  }

  ui.setupPreview = function (preview) {
    if (!preview) return;
    window.addEventListener("message", function (event) {
      if (event.source !== preview.contentWindow || !event.data) return;
      var height = event.data.resendEmulatorFrameHeight;
      if (typeof height !== "number" || !isFinite(height)) return;
      // Taken before the last resize: the frame reports again at its new height.
      if (Math.abs(event.data.atHeight - preview.clientHeight) > 1) return;
      if (!measured) {
        measured = true;
        preview.style.height = MIN_FRAME + "px";  // its resize makes the frame report again
        return;
      }
      preview.style.height = Math.min(Math.max(Math.ceil(height), MIN_FRAME), 200000) + "px";
    });
    // A frame that loaded before this listener existed reported to no one: ask it again.
    if (preview.contentWindow) preview.contentWindow.postMessage("resendEmulatorMeasure", "*");
    var dark = document.getElementById("dark-preview");
    if (!dark) return;
    dark.addEventListener("click", function () {
      var on = dark.getAttribute("aria-pressed") !== "true";
      dark.setAttribute("aria-pressed", on ? "true" : "false");
      ui.remeasure(preview);
      preview.src = schemed(preview.dataset.src, on);
      wrap().dataset.scheme = on ? "dark" : "light";
    });
  };
}());
