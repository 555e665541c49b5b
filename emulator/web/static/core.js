// Resend emulator UI, shared by every page: the namespace the other modules add to, small helpers, and
// the behaviour of forms. Plain JS, no build; each module is its own <script defer>, run in page order.
(function () {
  "use strict";
  var ui = window.EmulatorUI = window.EmulatorUI || {};
  ui.body = document.body;
  ui.page = document.body.dataset.page;

  ui.typing = function (target) {
    return target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName) || (target && target.isContentEditable);
  };

  // One pending poll at most, however many refreshes ask for one.
  var pollTimer = null;
  ui.pollSoon = function (fn) {
    if (pollTimer) return;
    pollTimer = setTimeout(function () { pollTimer = null; fn(); }, 3000);
  };

  // This page again, fresh from the server, as a parsed document (null when the server says no).
  ui.fetchPage = function () {
    return fetch(window.location.pathname + window.location.search, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { return html ? new DOMParser().parseFromString(html, "text/html") : null; });
  };

  ui.debounce = function (fn, ms) {
    var timer = null;
    return function () {
      if (timer) clearTimeout(timer);
      timer = setTimeout(function () { timer = null; fn(); }, ms);
    };
  };

  // The header: when the row of sections does not fit beside the rest, the menu stands in for it (on a
  // phone the stylesheet does that without any script).
  var top = document.getElementById("top");
  var sections = document.getElementById("sections");
  function fitHeader() {
    if (!top || !sections) return;
    top.classList.remove("crowded");
    if (sections.scrollWidth > sections.clientWidth + 1) top.classList.add("crowded");
  }
  fitHeader();
  window.addEventListener("resize", ui.debounce(fitHeader, 100));
  // The open menu closes when a click lands anywhere else, as menus do.
  var menu = document.getElementById("menu");
  document.addEventListener("click", function (event) {
    if (menu && menu.open && !menu.contains(event.target)) menu.open = false;
  });

  // Forms: confirm dangerous actions, submit filters as soon as a select changes.
  document.addEventListener("submit", function (event) {
    var message = event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
  document.addEventListener("change", function (event) {
    if (event.target.hasAttribute("data-autosubmit")) event.target.form.submit();
  });
}());
