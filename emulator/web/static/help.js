// `?` shows the keyboard shortcuts (the <dialog> in base.html); Esc or Close shuts it. While it is open,
// the pages' own keys wait (ui.dialogOpen).
(function () {
  "use strict";
  var ui = window.EmulatorUI;
  var help = document.getElementById("help");
  var button = document.getElementById("help-open");

  ui.dialogOpen = function () { return Boolean(document.querySelector("dialog[open]")); };

  function open() { if (help && !help.open) help.showModal(); }

  if (button) button.addEventListener("click", open);
  document.addEventListener("keydown", function (event) {
    if (event.key !== "?" || event.metaKey || event.ctrlKey || event.altKey || ui.typing(event.target)) return;
    event.preventDefault();
    open();
  });
}());
