// Picking messages in a list: a checkbox per row, "select all on this page", shift-click for a range and
// `x` for the highlighted row. The bulk bar says how many are picked; its buttons act on them. Picks
// survive live refreshes of the rows. Also confirms any submit button that carries data-confirm.
(function () {
  "use strict";
  var ui = window.EmulatorUI;

  document.addEventListener("submit", function (event) {
    var message = event.submitter && event.submitter.getAttribute("data-confirm");
    if (message && !window.confirm(message)) { event.preventDefault(); event.stopImmediatePropagation(); }
  }, true);

  var bulk = document.getElementById("bulk");
  if (ui.page !== "list" || !bulk) return;
  var tbody = document.getElementById("rows");
  var all = document.getElementById("pick-all");
  var label = document.getElementById("picked");
  var picked = {};
  var last = null;

  function boxes() { return Array.prototype.slice.call(tbody.querySelectorAll('input[name="id"]')); }

  function update() {
    var shown = boxes();
    var count = shown.filter(function (box) { return box.checked; }).length;
    label.textContent = count ? count + " selected" : "None selected";
    bulk.classList.toggle("active", count > 0);
    Array.prototype.forEach.call(bulk.querySelectorAll("button"), function (b) { b.disabled = !count; });
    all.checked = count > 0 && count === shown.length;
    all.indeterminate = count > 0 && count < shown.length;
  }

  function pick(box, on) {
    box.checked = on;
    if (on) picked[box.value] = true; else delete picked[box.value];
  }

  tbody.addEventListener("click", function (event) {
    if (!event.target.closest(".pick")) return;
    event.stopPropagation();  // a click on the checkbox picks the row, it does not open it
    var box = event.target.closest(".pick").querySelector("input");
    if (event.target !== box) return;
    var shown = boxes();
    if (event.shiftKey && last !== null) {
      var from = shown.indexOf(last), to = shown.indexOf(box);
      shown.slice(Math.min(from, to), Math.max(from, to) + 1).forEach(function (b) { pick(b, box.checked); });
    }
    pick(box, box.checked);
    last = box;
    update();
  }, true);  // before the row's own click handler (list.js), which would open the message

  document.getElementById("pick-all-label").hidden = false;
  all.addEventListener("change", function () {
    boxes().forEach(function (box) { pick(box, all.checked); });
    update();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "x" || ui.typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
    var row = tbody.querySelector("tr.row.selected");
    var box = row && row.querySelector('input[name="id"]');
    if (!box) return;
    pick(box, !box.checked);
    last = box;
    update();
  });

  // Live refreshes replace the rows: pick again what was picked and is still shown.
  new MutationObserver(function () {
    var still = {};
    boxes().forEach(function (box) {
      if (picked[box.value]) { box.checked = true; still[box.value] = true; }
    });
    picked = still;
    last = null;
    update();
  }).observe(tbody, { childList: true });

  boxes().forEach(function (box) { if (box.checked) picked[box.value] = true; });  // kept by the browser
  update();
}());
