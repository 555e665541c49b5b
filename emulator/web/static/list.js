// Message lists: keyboard and click navigation, the remembered selection, live refresh of the first page.
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var body = ui.body;

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

  function setup() {
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
      if (event.metaKey || event.ctrlKey || event.altKey || ui.dialogOpen()) return;
      if (ui.typing(event.target)) {
        if (event.key === "Escape") event.target.blur();
        return;
      }
      if (event.key === "j" || event.key === "ArrowDown") { move(1); event.preventDefault(); }
      else if (event.key === "k" || event.key === "ArrowUp") { move(-1); event.preventDefault(); }
      else if (event.key === "Enter" || event.key === "o") { openSelected(); }
      else if (event.key === "/") { var s = document.getElementById("search"); if (s) { s.focus(); event.preventDefault(); } }
    });
  }

  // Counts are exact (issue 39). A search the page could not count in its own time shows "counting…"
  // and its "Delete these N results" stays disabled until the count route answers; the form then
  // carries that number and the newest seq it covers, so the delete acts on exactly what it stated.
  function plural(count, one, many) { return count === 1 ? one : many; }

  function stateCount(form, count, upto) {
    if (!form) return;
    form.querySelector("input[name=expect]").value = String(count);
    form.querySelector("input[name=upto]").value = String(upto);
  }

  function showCount(shown, count, upto) {
    var total = document.getElementById("total");
    if (total) { total.textContent = shown; total.removeAttribute("data-counting"); }
    var results = document.getElementById("results");
    var button = document.getElementById("delete-results");
    if (results && button) {
      stateCount(results, count, upto);
      button.textContent = "Delete " + plural(count, "the ", "these ") + shown + plural(count, " result", " results");
      button.setAttribute("data-confirm", "Delete the " + shown + plural(count, " email", " emails") +
        " this search finds? Mail arriving from now on and everything else stays.");
      button.disabled = count === 0;
    }
    var all = document.getElementById("delete-all");
    if (all && body.dataset.filtered !== "true") {
      stateCount(all, count, upto);
      var noun = plural(count, " email", " emails");
      all.querySelector("button").textContent = "Delete all " + shown + noun;
      all.querySelector("button").disabled = count === 0;
      all.setAttribute("data-confirm", all.getAttribute("data-confirm").replace(/^Delete all [\d,]+ (\w+) \w+\?/, "Delete all " + shown + " $1" + noun + "?"));
    }
  }

  var counting = false;
  function fetchCount() {
    if (counting || !body.dataset.countUrl) return;
    counting = true;
    fetch(body.dataset.countUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) { if (data) showCount(data.shown, data.total, data.upto); })
      .catch(function () { /* the next refresh asks again */ })
      .finally(function () { counting = false; });
  }

  var refreshing = false, again = false, pressed = false;
  // Rows replaced between a press and its release would swallow the click: a refresh waits for the release.
  document.addEventListener("pointerdown", function (event) {
    pressed = Boolean(event.target.closest && event.target.closest("#rows"));
  }, true);
  function released() {
    if (!pressed) return;
    pressed = false;
    if (again && !refreshing) { again = false; setTimeout(ui.refreshRows, 0); }
  }
  document.addEventListener("pointerup", released, true);
  document.addEventListener("pointercancel", released, true);
  ui.refreshRows = function refreshRows() {
    if (body.dataset.firstPage !== "true") {
      document.getElementById("fresh").hidden = false;
      return;
    }
    if (refreshing || pressed) { again = true; return; }
    refreshing = true;
    fetch(body.dataset.liveRows, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        if (pressed) { again = true; return; }  // pressed while the fetch ran: after the release
        // Read what is shown and highlighted now, not when the fetch began: a key pressed meanwhile
        // (j, k) moved the highlight, and restoring the older one would undo it.
        var known = {};
        rows().forEach(function (r) { known[r.dataset.id] = true; });
        var selected = document.querySelector("#rows tr.row.selected");
        var selectedId = selected ? selected.dataset.id : null;
        // The fragment comes from our own server-side templates (every value escaped there).
        document.getElementById("rows").innerHTML = data.rows;
        if (data.count !== null && data.count !== undefined) showCount(data.total, data.count, data.upto);
        else if (body.dataset.filtered === "true") fetchCount();
        rows().forEach(function (r) {
          if (!known[r.dataset.id]) {
            r.classList.add("flash");
            r.addEventListener("animationend", function () { r.classList.remove("flash"); }, { once: true });
          }
          if (r.dataset.id === selectedId) r.classList.add("selected");
        });
        document.dispatchEvent(new CustomEvent("emulator:rows", { detail: data }));  // unread.js
      })
      .catch(function () { /* the next event or reconnect retries */ })
      .finally(function () {
        refreshing = false;
        if (again) { again = false; refreshRows(); }
      });
  };

  if (ui.page === "list") {
    setup();
    var pending = document.getElementById("total");
    if (pending && pending.hasAttribute("data-counting")) fetchCount();
  }
}());
