// The browser's own time zone (zone.py, "Browser zone"): the server rendered UTC, and here every
// <time datetime> is rewritten in this browser's zone, with its offset where the page showed one
// (data-offset), and each zone name on the page (.tz-name, .tz-short) says which zone that is. Rows that
// live updates add are rewritten as they arrive.
(function () {
  "use strict";
  if (!document.body || document.body.getAttribute("data-zone") !== "local") return;

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function offset(date) {
    var minutes = -date.getTimezoneOffset();
    var sign = minutes >= 0 ? "+" : "-";
    minutes = Math.abs(minutes);
    return sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }
  function shown(date) {
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + " " +
      pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
  }
  var name = (window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone) || "local time";
  var short = "UTC" + offset(new Date());

  function convert(root) {
    var times = Array.prototype.slice.call(root.querySelectorAll("time[datetime]"));
    if (root.matches && root.matches("time[datetime]")) times.push(root);
    times.forEach(function (el) {
      if (el.getAttribute("data-local")) return;
      var date = new Date(el.getAttribute("datetime"));
      if (isNaN(date.getTime())) return;
      el.setAttribute("data-local", "1");
      el.textContent = shown(date) + (el.hasAttribute("data-offset") ? " " + offset(date) : "");
      el.title = name;
    });
    Array.prototype.forEach.call(root.querySelectorAll(".tz-name"), function (el) {
      el.textContent = name + " (" + short + ")";
    });
    Array.prototype.forEach.call(root.querySelectorAll(".tz-short"), function (el) { el.textContent = short; });
  }

  function start() {
    convert(document);
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        Array.prototype.forEach.call(change.addedNodes, function (node) { if (node.nodeType === 1) convert(node); });
      });
    }).observe(document.body, {childList: true, subtree: true});
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
