// Times are shown and read in the browser's own zone: tell the server which one it is.
(function () {
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && document.cookie.indexOf("perfcase_tz=" + encodeURIComponent(zone)) === -1) {
    document.cookie = "perfcase_tz=" + encodeURIComponent(zone) + "; path=/; max-age=31536000; SameSite=Lax";
  }
})();

// A form with errors answers 400 with the form again: swap it in, like a success.
htmx.config.responseHandling = [
  {code: "204", swap: false},
  {code: "[23]..", swap: true},
  {code: "400", swap: true, error: false},
  {code: "[45]..", swap: false, error: true},
];

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

// Charts: each [data-chart] element draws the figure in the json_script it names (for
// "chart-NAME", the one named NAME). One with data-node-url is the traffic path: a click on
// a node opens its details in the panel.
function perfcaseDrawCharts(root) {
  if (typeof Plotly === "undefined" || !root.querySelectorAll) return;
  root.querySelectorAll("[data-chart]").forEach(function (target) {
    var data = document.getElementById(target.dataset.chart.replace(/^chart-/, ""));
    if (!data) return;
    var figure = JSON.parse(data.textContent);
    Plotly.newPlot(target, figure.data, figure.layout, {displayModeBar: false, responsive: true});
    if (!target.dataset.nodeUrl) return;
    target.on("plotly_click", function (event) {
      var id = event.points[0].customdata;
      htmx.ajax("GET", target.dataset.nodeUrl + id, {target: "#path-panel", swap: "outerHTML"});
    });
  });
}

htmx.onLoad(perfcaseDrawCharts);

// A ladder that just ended: reload once so that its charts and verdicts show.
htmx.onLoad(function (root) {
  if (root.id === "ladder-progress" && root.hasAttribute("data-reload-charts")) {
    window.location.reload();
  }
});
