// Unread mail in the list header, the page title ("(3) Outbox") and a badge on the favicon ("99+" past
// 99: an icon has room for three characters; the title keeps the number), kept current by the live
// refresh of the rows; and opt-in browser notifications for new mail: asked for only when the user clicks
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

  // The favicon's badge: drawn onto our own icon (fetched once) as an SVG data URL.
  var icon = document.querySelector('link[rel="icon"]');
  var plainIcon = icon ? icon.getAttribute("href") : null;
  var iconSvg = null;
  function badgeText(count) {
    var n = parseInt(count, 10);
    return !n || n < 0 ? "" : n > 99 ? "99+" : String(n);
  }
  function drawBadge(text) {
    if (!icon) return;
    icon.dataset.unread = text;
    if (!text || !iconSvg) { icon.setAttribute("href", plainIcon); return; }
    var size = text.length > 2 ? 8.5 : text.length > 1 ? 10.5 : 12;
    var badge = '<circle cx="22" cy="10" r="9.5" fill="#d93025" stroke="#fff" stroke-width="1.5"/>' +
      '<text x="22" y="' + (10 + size * 0.36).toFixed(1) + '" font-family="Arial,Helvetica,sans-serif"' +
      ' font-size="' + size + '" font-weight="700" fill="#fff" text-anchor="middle">' + text + "</text>";
    icon.setAttribute("href", "data:image/svg+xml," + encodeURIComponent(iconSvg.replace("</svg>", badge + "</svg>")));
  }
  function showBadge(count) {
    var text = badgeText(count);
    if (iconSvg || !text || !plainIcon) { drawBadge(text); return; }
    fetch(plainIcon, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (svg) { iconSvg = svg; drawBadge(badgeText(body.dataset.unread)); })
      .catch(function () { /* the plain icon stays */ });
  }

  function showUnread(count) {
    body.dataset.unread = count;
    var shown = document.getElementById("unread");
    if (shown) shown.textContent = count;
    var markAll = document.getElementById("mark-all-read");  // "Mark all N read" states the live count
    if (markAll) { markAll.hidden = count === "0"; document.getElementById("mark-all-count").textContent = count; }
    document.title = (count && count !== "0" ? "(" + count + ") " : "") + baseTitle;
    showBadge(count);
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
    // The sender's name and address, not the recipients stacked under them at some widths (list.css).
    var from = Array.prototype.filter.call(first.querySelectorAll(".c-from > span"), function (part) {
      return !part.classList.contains("stacked");
    }).map(function (part) { return part.textContent; }).join(" ");
    var title = rows.length === 1 ? "New mail: " + (subject ? subject.textContent : "")
      : rows.length + " new emails";
    var note = new Notification(title, { body: from ? "From " + from.trim() : "", tag: "emulator-mail" });
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
