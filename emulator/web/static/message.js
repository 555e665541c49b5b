// One message: tabs (click, arrows, digits), preview widths, Esc/u back to the list, live activity.
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var body = ui.body;

  function setup() {
    var tabs = Array.prototype.slice.call(document.querySelectorAll('[role="tab"]'));
    function show(tab) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
      try { sessionStorage.setItem("ui-tab", tab.dataset.tab); } catch (e) { /* private mode */ }
    }
    tabs.forEach(function (tab, index) {
      tab.addEventListener("click", function () { show(tab); });
      tab.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        var next = tabs[(index + step + tabs.length) % tabs.length];
        show(next); next.focus();
      });
    });
    if (tabs.length) show(tabs[0]);

    var wrap = document.getElementById("frame-wrap");
    var preview = document.getElementById("preview");
    Array.prototype.forEach.call(document.querySelectorAll("[data-width]"), function (button) {
      if (button.tagName !== "BUTTON") return;
      button.addEventListener("click", function () {
        wrap.dataset.width = button.dataset.width;
        // Narrower makes the email taller, wider shorter: let the frame measure itself again.
        ui.remeasure(preview);
        Array.prototype.forEach.call(document.querySelectorAll("button[data-width]"), function (b) {
          b.setAttribute("aria-pressed", b === button ? "true" : "false");
        });
      });
    });
    ui.setupPreview(preview);

    document.addEventListener("keydown", function (event) {
      if (ui.typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
      if (event.key === "Escape" || event.key === "u") {
        window.location.href = document.getElementById("back").getAttribute("href");
      } else if (/^[1-9]$/.test(event.key) && tabs[Number(event.key) - 1]) {
        show(tabs[Number(event.key) - 1]);
      }
    });
  }

  ui.refreshActivity = ui.debounce(function () {
    fetch(body.dataset.liveUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        document.getElementById("status-slot").innerHTML = data.status;
        var activity = document.getElementById("activity");
        var open = activity.querySelectorAll("details[open]").length;
        if (!open) activity.innerHTML = data.activity;
        if (data.pending) ui.pollSoon(ui.refreshActivity);
      })
      .catch(function () { /* retried on the next event */ });
  }, 120);

  if (ui.page === "message") setup();
}());
