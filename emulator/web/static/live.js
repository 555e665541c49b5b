// The live channel: server-sent events tell each page what changed, and the page re-fetches its part.
// Every page is complete without it (server-rendered); this only saves the reload.
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var body = ui.body, page = ui.page;
  var UI = "/_emulator/ui";

  var refreshSection = ui.debounce(function () {
    ui.fetchPage()
      .then(function (doc) {
        if (!doc) return;
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        // Not while the user types in the page (an inbox's search box: new HTML would wipe it), nor when
        // nothing changed (a resync after connecting: a click may be on its way to the old DOM).
        var typing = ui.typing(document.activeElement) && main.contains(document.activeElement);
        if (fresh && fresh.innerHTML !== main.innerHTML && !document.querySelector("#main details[open]") &&
            !typing) {
          main.innerHTML = fresh.innerHTML;
        }
        if (doc.body.dataset.pending === "true") ui.pollSoon(refreshSection);
      })
      .catch(function () { /* retried on the next event */ });
  }, 300);

  function onLive(message) {
    if (page === "list") {
      var kind = body.dataset.kind;
      var received = message.type === "email.received" || message.type === "inbound" ||
        message.type === "emulator.changed";  // read, unread, deleted
      if (message.type === "reset" || message.type === "resync" ||
          (kind === "received" ? received : /^email\./.test(message.type) || message.type === "outbox" ||
           message.type === "emulator.changed")) {
        ui.refreshRows();
      }
    } else if (page === "message") {
      if (message.subject_id === body.dataset.messageId || message.type === "resync" ||
          message.type === "webhook") {
        ui.refreshActivity();
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

  // The indicator shows real trouble only. The server ends each stream on purpose every ~15 s (sse.py) and
  // says so first ("recycle"): the page reconnects at once, silently. Any other break shows "reconnecting"
  // only once it has lasted TROUBLE_MS, and clears when a stream opens again.
  var TROUBLE_MS = 2000, RETRY_MS = 2000;
  var live = document.getElementById("live");
  var source = null, trouble = null, retry = null;

  function showLive() {
    clearTimeout(trouble);
    trouble = null;
    live.classList.add("on");
    live.textContent = "live";
  }

  function troubleSoon() {
    if (trouble !== null) return;  // already counting from the first failure
    trouble = setTimeout(function () { live.classList.remove("on"); live.textContent = "reconnecting"; },
                         TROUBLE_MS);
  }

  function connect() {
    clearTimeout(retry);
    if (source) source.close();
    source = new EventSource(UI + "/events?account=" + encodeURIComponent(body.dataset.account || ""));
    source.onopen = function () {
      showLive();
      // Events may have been missed before this (re)connect: catch up once.
      onLive({ type: "resync" });
    };
    source.addEventListener("recycle", connect);
    source.onerror = function () {
      troubleSoon();
      // A network error retries by itself; an error status (a 502 from a proxy, a 503) closes the source
      // for good, so the page retries then.
      if (source.readyState === EventSource.CLOSED) retry = setTimeout(connect, RETRY_MS);
    };
    source.onmessage = function (event) {
      try { onLive(JSON.parse(event.data)); } catch (e) { /* ignore a malformed frame */ }
    };
  }

  if (body.dataset.pending === "true") ui.pollSoon(page === "webhooks" ? refreshSection : ui.refreshActivity);
  if (window.EventSource) connect();
}());
