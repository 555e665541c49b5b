// Pages with work under way (a contact import, a broadcast's send: body[data-running="true"]) refresh
// their main section when the live channel reports a change, and every 2 s without it, until the page
// says nothing runs any more. The page itself is complete without this script.
(function () {
  "use strict";
  var ui = window.EmulatorUI;  // core.js, loaded first
  var body = document.body;
  if (body.dataset.running !== "true") return;
  var busy = false, again = false, timer = null, source = null, poll = null;

  function stop() {
    if (source) source.close();
    clearInterval(poll);
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    ui.fetchPage()
      .then(function (doc) {
        if (!doc) return;
        var fresh = doc.getElementById("main");
        if (fresh) document.getElementById("main").innerHTML = fresh.innerHTML;
        if (doc.body.dataset.running !== "true") {
          body.dataset.running = "false";
          stop();
        }
      })
      .catch(function () { /* the next event or poll retries */ })
      .finally(function () {
        busy = false;
        if (again) { again = false; soon(); }
      });
  }

  // Events arrive by the hundred during a broadcast: one refresh per quarter second at most.
  function soon() {
    if (timer === null && body.dataset.running === "true") {
      timer = setTimeout(function () { timer = null; refresh(); }, 250);
    }
  }

  if (window.EventSource) {
    source = new EventSource("/_emulator/ui/events?account=" + encodeURIComponent(body.dataset.account || ""));
    source.onmessage = soon;
  }
  poll = setInterval(soon, 2000);
}());
