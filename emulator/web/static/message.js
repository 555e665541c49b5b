// One message: tabs (click, arrows, digits) that keep their content in view, preview widths, `j`/`k` to
// the older/newer message of the list, Esc/u back to it, source lines named by the Checks tab, the spam
// row asked for when the Checks tab opens, the link check asked in place, live activity.
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var body = ui.body;

  function go(id) {
    var link = document.getElementById(id);
    if (link && link.getAttribute("href")) window.location.href = link.getAttribute("href");
  }

  // A tab switched while the page is scrolled past the tab bar brings the bar back to the top of the
  // screen, so the new content starts in view instead of somewhere above it.
  function keepInView(tablist) {
    var header = document.getElementById("top");
    var covered = header ? header.getBoundingClientRect().bottom : 0;  // the header stays on top
    if (tablist.getBoundingClientRect().top < covered) tablist.scrollIntoView({ block: "start" });
  }

  function loadSpam() {
    var slot = document.getElementById("spam-result");
    if (!slot || !slot.dataset.src || slot.dataset.loaded) return;
    slot.dataset.loaded = "true";
    fetch(slot.dataset.src, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.text(); })
      // The fragment comes from our own server-side template (every value escaped there).
      .then(function (html) { slot.innerHTML = html; })
      .catch(function () { delete slot.dataset.loaded; });
  }

  function setup() {
    var tablist = document.querySelector('[role="tablist"]');
    var tabs = Array.prototype.slice.call(document.querySelectorAll('[role="tab"]'));
    function show(tab) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
      tab.scrollIntoView({ block: "nearest", inline: "nearest" });  // a tab bar that scrolls sideways
      if (tablist) keepInView(tablist);
      if (tab.dataset.tab === "checks") loadSpam();
      try { sessionStorage.setItem("ui-tab", tab.dataset.tab); } catch (e) { /* private mode */ }
    }
    function tabNamed(name) { return document.getElementById("tab-" + name); }
    tabs.forEach(function (tab, index) {
      tab.addEventListener("click", function () { show(tab); });
      tab.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        var next = tabs[(index + step + tabs.length) % tabs.length];
        show(next); next.focus();
      });
    });

    // Line links of the Checks tab (#L12) open the source tab at that line.
    function showLine(hash) {
      var line = /^#L\d+$/.test(hash) && document.getElementById(hash.slice(1));
      if (!line || !tabNamed("source")) return false;
      show(tabNamed("source"));
      Array.prototype.forEach.call(document.querySelectorAll(".src-line.jumped"), function (other) {
        other.classList.remove("jumped");
      });
      line.classList.add("jumped");
      line.scrollIntoView({ block: "center" });
      return true;
    }
    document.addEventListener("click", function (event) {
      var link = event.target.closest('a[href^="#L"], a[data-show-tab]');
      if (!link) return;
      if (link.dataset.showTab && tabNamed(link.dataset.showTab)) {
        event.preventDefault();
        show(tabNamed(link.dataset.showTab));
      } else if (showLine(link.getAttribute("href"))) {
        history.replaceState(null, "", link.getAttribute("href"));
        event.preventDefault();
      }
    });
    if (!showLine(window.location.hash) && tabs.length) {
      tabs.forEach(function (t) { t.tabIndex = t === tabs[0] ? 0 : -1; });
    }

    var wrap = document.getElementById("frame-wrap");
    var preview = document.getElementById("preview");
    Array.prototype.forEach.call(document.querySelectorAll("button[data-width]"), function (button) {
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
      if (ui.typing(event.target) || event.metaKey || event.ctrlKey || event.altKey || ui.dialogOpen()) return;
      if (event.key === "Escape" || event.key === "u") go("back");
      else if (event.key === "j") go("older");
      else if (event.key === "k") go("newer");
      else if (/^[1-9]$/.test(event.key) && tabs[Number(event.key) - 1]) show(tabs[Number(event.key) - 1]);
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

  // The link check (web/outbound.py): asked in place, its table shown under the button; without this
  // script the form answers a page of its own.
  function setupLinkProbe() {
    var form = document.getElementById("link-probe-form");
    var slot = document.getElementById("link-probe");
    if (!form || !slot) return;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = document.getElementById("link-probe-button");
      button.disabled = true;
      slot.innerHTML = "";
      slot.setAttribute("aria-busy", "true");
      button.textContent = "Requesting…";
      fetch(form.action + "?fragment=1", { method: "POST", credentials: "same-origin", cache: "no-store",
                                           body: new URLSearchParams(new FormData(form)) })
        .then(function (response) { return response.text(); })
        // The fragment comes from our own server-side template (every value escaped there).
        .then(function (html) { slot.innerHTML = html; })
        .catch(function () { slot.textContent = "The link check did not answer: try again."; })
        .then(function () {
          button.disabled = false;
          button.textContent = "Request each link again";
          slot.removeAttribute("aria-busy");
        });
    });
  }

  if (ui.page === "message") {
    setup();
    setupLinkProbe();
    var releaseLink = document.getElementById("release-link");
    var release = document.getElementById("release");
    if (releaseLink && release) releaseLink.addEventListener("click", function () { release.open = true; });
  }
}());
