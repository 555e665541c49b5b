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

  var refreshing = false, again = false;
  ui.refreshRows = function refreshRows() {
    if (body.dataset.firstPage !== "true") {
      document.getElementById("fresh").hidden = false;
      return;
    }
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(body.dataset.liveRows, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        // Read what is shown and highlighted now, not when the fetch began: a key pressed meanwhile
        // (j, k) moved the highlight, and restoring the older one would undo it.
        var known = {};
        rows().forEach(function (r) { known[r.dataset.id] = true; });
        var selected = document.querySelector("#rows tr.row.selected");
        var selectedId = selected ? selected.dataset.id : null;
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
        document.dispatchEvent(new CustomEvent("emulator:rows", { detail: data }));  // unread.js
      })
      .catch(function () { /* the next event or reconnect retries */ })
      .finally(function () {
        refreshing = false;
        if (again) { again = false; refreshRows(); }
      });
  };

  if (ui.page === "list") setup();
}());
