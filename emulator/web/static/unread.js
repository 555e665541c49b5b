// Unread mail in the list header and the page title ("(3) Outbox"), kept current by the live refresh
// of the rows; and opt-in browser notifications for new mail: asked for only when the user clicks
// "Notify me of new mail", shown only while the tab is in the background.
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var body = ui.body;
  if (ui.page !== "list") return;
  var baseTitle = document.title.replace(/^\([\d,]+\) /, "");
  var button = document.getElementById("notify");
  var known = {};

  function shownRows() { return Array.prototype.slice.call(document.querySelectorAll("#rows tr.row")); }
  function stored() { try { return localStorage.getItem("ui-notify"); } catch (e) { return null; } }
  function store(value) { try { localStorage.setItem("ui-notify", value); } catch (e) { /* private mode */ } }
  shownRows().forEach(function (row) { known[row.dataset.id] = true; });

  function showUnread(count) {
    body.dataset.unread = count;
    var shown = document.getElementById("unread");
    if (shown) shown.textContent = count;
    document.title = (count && count !== "0" ? "(" + count + ") " : "") + baseTitle;
  }

  function wanted() {
    return "Notification" in window && Notification.permission === "granted" &&
      stored() === "on";
  }

  function showButton() {
    if (!("Notification" in window)) return;
    button.hidden = false;
    var on = wanted();
    var blocked = Notification.permission === "denied";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.disabled = blocked;
    button.textContent = blocked ? "Notifications blocked" : on ? "Notifying of new mail" : "Notify me of new mail";
  }

  function announce(rows) {
    if (!rows.length || !wanted() || (!document.hidden && document.hasFocus())) return;
    var first = rows[0];
    var subject = first.querySelector(".subject");
    var from = first.querySelector(".c-from");
    var title = rows.length === 1 ? "New mail: " + (subject ? subject.textContent : "")
      : rows.length + " new emails";
    var note = new Notification(title, { body: from ? "From " + from.textContent.trim() : "", tag: "emulator-mail" });
    note.onclick = function () { window.focus(); window.location.href = first.dataset.href; };
  }

  document.addEventListener("emulator:rows", function (event) {
    var data = event.detail || {};
    if (data.unread !== undefined && data.unread !== null) showUnread(String(data.unread));
    var fresh = shownRows().filter(function (row) { return !known[row.dataset.id] && row.dataset.read === "false"; });
    shownRows().forEach(function (row) { known[row.dataset.id] = true; });
    announce(fresh);
  });

  if (button) {
    button.addEventListener("click", function () {
      if (wanted()) {
        store("off");
        showButton();
        return;
      }
      Notification.requestPermission().then(function (permission) {
        if (permission === "granted") store("on");
        showButton();
      });
    });
    showButton();
  }
  showUnread(body.dataset.unread || "0");
}());
