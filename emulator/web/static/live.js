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

  if (body.dataset.pending === "true") ui.pollSoon(page === "webhooks" ? refreshSection : ui.refreshActivity);
  connect();
}());
