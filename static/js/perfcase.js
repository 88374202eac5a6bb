// Times are shown and read in the browser's own zone: tell the server which one it is.
(function () {
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && document.cookie.indexOf("perfcase_tz=" + encodeURIComponent(zone)) === -1) {
    document.cookie = "perfcase_tz=" + encodeURIComponent(zone) + "; path=/; max-age=31536000; SameSite=Lax";
  }
})();

// The action type matters only for actions: hide it for notes.
function perfcaseSyncActionField(root) {
  root.querySelectorAll("form.timeline-form").forEach(function (form) {
    var kind = form.querySelector("[name=kind]");
    var action = form.querySelector("[name=action]");
    if (!kind || !action) return;
    var field = action.closest(".field");
    var update = function () { field.hidden = kind.value !== "action"; };
    kind.addEventListener("change", update);
    update();
  });
}

htmx.onLoad(perfcaseSyncActionField);
