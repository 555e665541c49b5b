// Resend emulator UI: live updates (server-sent events), keyboard navigation, tabs. Plain JS, no build.
(function () {
  "use strict";
  var UI = "/_emulator/ui";
  var body = document.body;
  var page = body.dataset.page;

  function typing(target) {
    return target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName) || (target && target.isContentEditable);
  }

  // One pending poll at most, however many refreshes ask for one.
  var pollTimer = null;
  function pollSoon(fn) {
    if (pollTimer) return;
    pollTimer = setTimeout(function () { pollTimer = null; fn(); }, 3000);
  }

  function debounce(fn, ms) {
    var timer = null;
    return function () {
      if (timer) clearTimeout(timer);
      timer = setTimeout(function () { timer = null; fn(); }, ms);
    };
  }

  // Forms: confirm dangerous actions, submit filters as soon as a select changes.
  document.addEventListener("submit", function (event) {
    var message = event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
  document.addEventListener("change", function (event) {
    if (event.target.hasAttribute("data-autosubmit")) event.target.form.submit();
  });

  // ---- the list -------------------------------------------------------------------------------
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("#rows tr.row")); }

  function select(row) {
    rows().forEach(function (r) { r.classList.remove("selected"); r.removeAttribute("aria-selected"); });
    if (!row) return;
    row.classList.add("selected");
    row.setAttribute("aria-selected", "true");
    row.scrollIntoView({ block: "nearest" });
    try { sessionStorage.setItem("ui-selected", row.dataset.id); } catch (e) { /* private mode */ }
  }

  function move(step) {
    var all = rows();
    if (!all.length) return;
    var current = all.findIndex(function (r) { return r.classList.contains("selected"); });
    var next = current < 0 ? 0 : Math.min(all.length - 1, Math.max(0, current + step));
    select(all[next]);
  }

  function openSelected() {
    var row = document.querySelector("#rows tr.row.selected");
    if (row) window.location.href = row.dataset.href;
  }

  function setupList() {
    document.getElementById("rows").addEventListener("click", function (event) {
      var row = event.target.closest("tr.row");
      if (!row || event.target.closest("a, button, form")) return;
      select(row);
      window.location.href = row.dataset.href;
    });
    var remembered = null;
    try { remembered = sessionStorage.getItem("ui-selected"); } catch (e) { remembered = null; }
    if (remembered) select(document.querySelector('#rows tr.row[data-id="' + CSS.escape(remembered) + '"]'));
    document.addEventListener("keydown", function (event) {
      if (event.metaKey || event.ctrlKey || event.altKey) return;
      if (typing(event.target)) {
        if (event.key === "Escape") event.target.blur();
        return;
      }
      if (event.key === "j" || event.key === "ArrowDown") { move(1); event.preventDefault(); }
      else if (event.key === "k" || event.key === "ArrowUp") { move(-1); event.preventDefault(); }
      else if (event.key === "Enter" || event.key === "o") { openSelected(); }
      else if (event.key === "/") { var s = document.getElementById("search"); if (s) { s.focus(); event.preventDefault(); } }
    });
  }

  var refreshing = false, again = false;
  function refreshRows() {
    if (body.dataset.firstPage !== "true") {
      document.getElementById("fresh").hidden = false;
      return;
    }
    if (refreshing) { again = true; return; }
    refreshing = true;
    var known = {};
    rows().forEach(function (r) { known[r.dataset.id] = true; });
    var selected = document.querySelector("#rows tr.row.selected");
    var selectedId = selected ? selected.dataset.id : null;
    fetch(body.dataset.liveRows, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        // The fragment comes from our own server-side templates (every value escaped there).
        document.getElementById("rows").innerHTML = data.rows;
        var total = document.getElementById("total");
        if (total && data.total !== null) total.textContent = data.total;
        rows().forEach(function (r) {
          if (!known[r.dataset.id]) {
            r.classList.add("flash");
            r.addEventListener("animationend", function () { r.classList.remove("flash"); }, { once: true });
          }
          if (r.dataset.id === selectedId) r.classList.add("selected");
        });
      })
      .catch(function () { /* the next event or reconnect retries */ })
      .finally(function () {
        refreshing = false;
        if (again) { again = false; refreshRows(); }
      });
  }

  // ---- the message view -----------------------------------------------------------------------
  function setupMessage() {
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
        remeasure(preview);
        Array.prototype.forEach.call(document.querySelectorAll("button[data-width]"), function (b) {
          b.setAttribute("aria-pressed", b === button ? "true" : "false");
        });
      });
    });
    setupPreview(preview);

    document.addEventListener("keydown", function (event) {
      if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
      if (event.key === "Escape" || event.key === "u") {
        window.location.href = document.getElementById("back").getAttribute("href");
      } else if (/^[1-9]$/.test(event.key) && tabs[Number(event.key) - 1]) {
        show(tabs[Number(event.key) - 1]);
      }
    });
  }

  // The preview frame reports its content's height (a script of ours the frame's CSP allows by nonce);
  // only numbers from that frame's own window are taken.
  // The first report of each document is taken at the frame's current height; the frame is then
  // shrunk to a sliver and grows to the height it reports from there (its content's own height).
  var MIN_FRAME = 40;
  var measured = false;
  function remeasure(preview) {
    measured = false;
    if (preview) preview.style.height = "";
  }
  function setupPreview(preview) {
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
    var dark = document.getElementById("dark-preview");
    if (!dark) return;
    dark.addEventListener("click", function () {
      var on = dark.getAttribute("aria-pressed") !== "true";
      dark.setAttribute("aria-pressed", on ? "true" : "false");
      var src = preview.dataset.src;
      remeasure(preview);
      preview.src = on ? src + (src.indexOf("?") < 0 ? "?" : "&") + "scheme=dark" : src;
      wrap().dataset.scheme = on ? "dark" : "light";
    });
  }

  function wrap() { return document.getElementById("frame-wrap"); }

  var refreshActivity = debounce(function () {
    fetch(body.dataset.liveUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        document.getElementById("status-slot").innerHTML = data.status;
        var activity = document.getElementById("activity");
        var open = activity.querySelectorAll("details[open]").length;
        if (!open) activity.innerHTML = data.activity;
        if (data.pending) pollSoon(refreshActivity);
      })
      .catch(function () { /* retried on the next event */ });
  }, 120);

  var refreshSection = debounce(function () {
    fetch(window.location.pathname + window.location.search, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        if (fresh && !document.querySelector("#main details[open]")) {
          document.getElementById("main").innerHTML = fresh.innerHTML;
        }
        if (doc.body.dataset.pending === "true") pollSoon(refreshSection);
      })
      .catch(function () { /* retried on the next event */ });
  }, 300);

  // ---- live updates ---------------------------------------------------------------------------
  function onLive(message) {
    if (page === "list") {
      var kind = body.dataset.kind;
      var received = message.type === "email.received" || message.type === "inbound";
      if (message.type === "reset" || message.type === "resync" ||
          (kind === "received" ? received : /^email\./.test(message.type) || message.type === "outbox" ||
           message.type === "emulator.changed")) {
        refreshRows();
      }
    } else if (page === "message") {
      if (message.subject_id === body.dataset.messageId || message.type === "resync" ||
          message.type === "webhook") {
        refreshActivity();
      }
    } else if (page === "webhooks") {
      refreshSection();
    } else if (page === "inboxes" || page === "inbox") {
      if (/^inbox\./.test(message.type) || message.type === "resync" || message.type === "reset") refreshSection();
    } else if (page === "thread") {
      // Only when something happens in an inbox: re-rendering reloads the message frames.
      if (/^inbox\./.test(message.type)) refreshSection();
    }
  }

  function connect() {
    if (!window.EventSource) return;
    var live = document.getElementById("live");
    var source = new EventSource(UI + "/events?account=" + encodeURIComponent(body.dataset.account || ""));
    source.onopen = function () {
      live.classList.add("on");
      live.textContent = "live";
      // Events may have been missed before this (re)connect: catch up once.
      onLive({ type: "resync" });
    };
    source.onerror = function () { live.classList.remove("on"); live.textContent = "reconnecting"; };
    source.onmessage = function (event) {
      try { onLive(JSON.parse(event.data)); } catch (e) { /* ignore a malformed frame */ }
    };
  }

  if (page === "list") setupList();
  if (page === "message") setupMessage();
  if (body.dataset.pending === "true") pollSoon(page === "webhooks" ? refreshSection : refreshActivity);
  connect();
}());
