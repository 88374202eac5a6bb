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
    var update = function () {
      field.hidden = kind.value !== "action";
      if (field.hidden) action.value = "";  // a note has no action type
    };
    kind.addEventListener("change", update);
    update();
  });
}

htmx.onLoad(perfcaseSyncActionField);

// A chart narrower than this (a phone) is laid out for its width: see the two functions below.
var PERFCASE_NARROW = 560;

// On a narrow chart a legend beside or under the plot at a fixed fraction of its height wraps
// onto the axis title: it goes to the foot of the figure, in rows, and the figure grows by
// as many rows as it may take, so the plot keeps its height.
// Labels written above the plot (a ladder's knees) would meet the title there: the title
// moves to the top edge of the figure and the figure grows by a line.
function perfcaseNarrowLegend(figure) {
  var layout = figure.layout || {};
  if (layout.title && (layout.annotations || []).length) {
    layout.title = Object.assign({}, layout.title, {yref: "container", y: 1, yanchor: "top", pad: {t: 4}});
    layout.margin = Object.assign({}, layout.margin || {});
    layout.margin.t = (layout.margin.t || 0) + 20;
    if (layout.height) layout.height += 20;
  }
  var shown = (figure.data || []).filter(function (trace) {
    return trace.showlegend !== false && trace.name;
  });
  if (layout.showlegend === false || shown.length < 2) return figure;
  var rows = Math.min(shown.length, 4);
  var margin = Object.assign({}, layout.margin || {});
  margin.b = (margin.b || 0) + 22 * rows;
  layout.legend = Object.assign({}, layout.legend || {}, {
    orientation: "h", x: 0, xanchor: "left", yref: "container", y: 0, yanchor: "bottom",
  });
  layout.margin = margin;
  if (layout.height) layout.height += 22 * rows;
  ["xaxis", "xaxis2"].forEach(function (axis) {
    if (layout[axis]) layout[axis] = Object.assign({}, layout[axis], {automargin: true});
  });
  figure.layout = layout;
  return figure;
}

// The traffic path on a narrow screen: top to bottom instead of left to right, each node's
// label beside it and each edge's label on the other side of the edge, so that no label
// lies over another. A layer's nodes (parallel hops) sit side by side.
function perfcasePathUpright(figure) {
  var layout = figure.layout || {};
  var turn = function (x, y) { return [-y, -x]; };
  (figure.data || []).forEach(function (trace) {
    var xs = trace.x || [], ys = trace.y || [];
    trace.x = xs.map(function (x, i) { return turn(x, ys[i])[0]; });
    trace.y = xs.map(function (x, i) { return turn(x, ys[i])[1]; });
    // Beside a node alone in its layer, under nodes side by side.
    trace.textposition = trace.y.map(function (y) {
      return trace.y.filter(function (other) { return other === y; }).length > 1
        ? "bottom center" : "middle right";
    });
  });
  // Where each edge's middle lands, and whether the edge leans right (its label goes there).
  var edges = (layout.annotations || []).filter(function (note) {
    return note.axref === "x";
  }).map(function (note) {
    var to = turn(note.x, note.y), from = turn(note.ax, note.ay);
    return {x: (to[0] + from[0]) / 2, y: (to[1] + from[1]) / 2, right: to[0] > from[0]};
  });
  (layout.annotations || []).forEach(function (note) {
    var moved = turn(note.x, note.y);
    note.x = moved[0]; note.y = moved[1];
    if (note.ax !== undefined && note.axref === "x") {
      var from = turn(note.ax, note.ay);
      note.ax = from[0]; note.ay = from[1];
    }
    if (note.text) {  // an edge's label: beside the edge, away from the nodes' labels
      var goesRight = edges.some(function (edge) {
        return Math.abs(edge.y - note.y) < 1e-6 && Math.abs(edge.x - note.x) < 1e-6 && edge.right;
      });
      note.yshift = 0; note.xshift = goesRight ? 10 : -10; note.xanchor = goesRight ? "left" : "right";
    }
  });
  var xs = figure.data.length ? figure.data[0].x : [0];
  var ys = figure.data.length ? figure.data[0].y : [0];
  var wide = Math.max.apply(null, xs.map(Math.abs).concat([0]));
  var layers = -Math.min.apply(null, ys.concat([0]));
  var range = wide ? [-wide - 0.8, wide + 0.8] : [-1.6, 1.9];
  layout.xaxis = Object.assign({}, layout.xaxis, {range: range});
  // Labels under the nodes of the last layer need room below it.
  var under = ys.filter(function (y) { return y === -layers; }).length > 1 ? 0.5 : 0;
  layout.yaxis = Object.assign({}, layout.yaxis, {range: [-layers - 0.5 - under, 0.5]});
  layout.height = Math.round(90 * (layers + 1 + under) + 20);
  layout.margin = {l: 10, r: 10, t: 10, b: 10};
  figure.layout = layout;
  return figure;
}

// plotly.js (4.6 MB) is fetched only by a page that draws a chart, when the first chart
// arrives (a chart carries its address in data-plotly; the browser caches it), so that a
// page without one, or the case page before its panels, never waits for it.
var perfcasePlotly = null;
function perfcaseWithPlotly(root, draw) {
  if (typeof Plotly !== "undefined") { draw(); return; }
  var carrier = root.matches && root.matches("[data-plotly]") ? root : root.querySelector("[data-plotly]");
  if (!carrier) return;
  if (!perfcasePlotly) {
    perfcasePlotly = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = carrier.dataset.plotly;
      script.onload = resolve;
      script.onerror = function () { perfcasePlotly = null; reject(); };
      document.head.appendChild(script);
    });
  }
  perfcasePlotly.then(draw, function () {});
}

// Charts: each [data-chart] element draws the figure in the json_script it names (for
// "chart-NAME", the one named NAME). One with data-node-url is the traffic path: a click on
// a node opens its details in the panel.
function perfcaseDrawCharts(root) {
  if (!root.querySelectorAll) return;
  var targets = Array.prototype.slice.call(root.querySelectorAll("[data-chart]"));
  if (root.matches && root.matches("[data-chart]")) targets.push(root);
  if (targets.length) perfcaseWithPlotly(root, function () { perfcaseDrawTargets(targets); });
}

function perfcaseDrawTargets(targets) {
  targets.forEach(function (target) {
    if (!target.isConnected) return;  // swapped away while plotly.js was on its way
    var data = document.getElementById(target.dataset.chart.replace(/^chart-/, ""));
    if (!data) return;
    var figure = JSON.parse(data.textContent);
    if (target.clientWidth && target.clientWidth < PERFCASE_NARROW) {
      figure = target.dataset.nodeUrl ? perfcasePathUpright(figure) : perfcaseNarrowLegend(figure);
    }
    Plotly.newPlot(target, figure.data, figure.layout, {displayModeBar: false, responsive: true});
    if (!target.dataset.nodeUrl) return;
    target.on("plotly_click", function (event) {
      var id = event.points[0].customdata;
      htmx.ajax("GET", target.dataset.nodeUrl + id, {target: "#path-panel", swap: "outerHTML"});
    });
  });
}

htmx.onLoad(perfcaseDrawCharts);


// Live refresh never destroys what a person is typing: a panel that polls (or is asked to
// refresh by an event) skips the refresh while one of its forms has focus, holds text that
// was not sent yet, or has its details open. The next refresh after that catches up.
// A panel with a [data-changed-notice] (it answers 204 while nothing changed) still asks,
// and when it did change shows the notice instead of redrawing, so the person knows.
function perfcaseEditing(root) {
  var active = document.activeElement;
  if (active && root.contains(active) && active.closest("form") &&
      /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
  var fields = root.querySelectorAll("form textarea, form input[type=text], form input:not([type])");
  for (var i = 0; i < fields.length; i++) {
    if (fields[i].value !== fields[i].defaultValue) return true;
  }
  return root.querySelector("form details[open], details[open] form") !== null;
}

document.addEventListener("htmx:beforeRequest", function (event) {
  var element = event.detail.elt;
  // Only refreshes: a form's own request (or a control inside a form) always goes.
  if (!element || element.tagName === "FORM" || element.closest("form")) return;
  if ((event.detail.requestConfig || {}).verb !== "get") return;
  if (!perfcaseEditing(element)) return;
  if (!element.querySelector("[data-changed-notice]")) event.preventDefault();
});

document.addEventListener("htmx:beforeSwap", function (event) {
  var element = event.detail.elt;
  if (!element || element.tagName === "FORM" || element.closest("form")) return;
  if ((event.detail.requestConfig || {}).verb !== "get") return;
  if (event.detail.xhr.status !== 200 || !perfcaseEditing(element)) return;
  event.detail.shouldSwap = false;
  element.querySelectorAll("[data-changed-notice]").forEach(function (notice) {
    notice.hidden = false;
  });
});

// A form that failed comes back in its own place with its errors: show it, not the top.
document.addEventListener("DOMContentLoaded", function () {
  var error = document.querySelector("main form .has-error, main form .errors");
  if (!error) return;
  for (var d = error.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
    d.open = true;
  }
  var form = error.closest("form");
  var field = (error.querySelector("input, select, textarea") ||
               form.querySelector("input:not([type=hidden]), select, textarea"));
  error.scrollIntoView({block: "center"});
  if (field) field.focus({preventScroll: true});
});

// A form of the case page that failed without htmx draws the page at the form's own address,
// which answers only POST: the address bar gets the page's own, so that reloading it or
// sharing it opens the case (the page keeps the form, its error and what was typed).
document.addEventListener("DOMContentLoaded", function () {
  var canonical = document.querySelector("link[rel=canonical]");
  if (!canonical) return;
  var path = new URL(canonical.href, location.href).pathname;
  if (path !== location.pathname) history.replaceState(null, "", path);
});

// Confirm before destroying: a form with data-confirm asks first (deleting a host or a
// credential, removing a member, closing a case, revoking a token).
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
}, true);

// A host on "this machine" (the local transport) has no address, port, user, credential or
// jump host: those fields are hidden while it is chosen.
function perfcaseSyncTransportFields(root) {
  if (!root.querySelectorAll) return;
  root.querySelectorAll("form select[name$=transport]").forEach(function (transport) {
    var form = transport.form;
    var names = ["address", "port", "username", "credential", "jump_host"];
    var update = function () {
      names.forEach(function (name) {
        var input = form.querySelector("[name$=" + name + "]");
        var field = input && input.closest(".field");
        if (field) field.hidden = transport.value === "local";
      });
    };
    transport.addEventListener("change", update);
    update();
  });
}

htmx.onLoad(perfcaseSyncTransportFields);

// Behaviours that would otherwise be inline handlers, which the Content-Security-Policy forbids.
document.addEventListener("click", function (event) {
  var field = event.target.closest && event.target.closest("[data-select-on-click]");
  if (field) field.select();
});
document.addEventListener("change", function (event) {
  var field = event.target.closest && event.target.closest("[data-submit-on-change]");
  if (field && field.form) field.form.submit();
});

// The investigation page loads its panels after it is in (see panels.FRAME): a link to
// a section (…/#timeline) stays on that section while the panels above it grow, until the
// person scrolls for themselves.
(function () {
  var moved = false;
  ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (name) {
    window.addEventListener(name, function () { moved = true; }, {passive: true, once: true});
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (moved || !location.hash) return;
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.classList.contains("card")) target.scrollIntoView();
    if (!document.querySelector(".frame")) moved = true;  // all in: the page is the person's
  });
})();

// A field with a length limit counts instead of cutting: the browser's maxlength silently
// drops what is pasted beyond it (a 5,000-character title became its first 200). The limit
// moves to data-maxlength; near it the field shows "count / limit", marked when over, and
// the server refuses the excess beside the field with what was typed kept.
function perfcaseCountCharacters(root) {
  if (!root.querySelectorAll) return;
  var fields = root.matches && root.matches("[maxlength]") ? [root] : [];
  root.querySelectorAll("input[maxlength], textarea[maxlength]").forEach(function (field) {
    fields.push(field);
  });
  fields.forEach(function (field) {
    var kind = field.tagName === "TEXTAREA" ? "textarea" : field.getAttribute("type") || "text";
    if (!/^(textarea|text|search|url|email)$/.test(kind)) return;
    var limit = parseInt(field.getAttribute("maxlength"), 10);
    field.removeAttribute("maxlength");
    if (!(limit > 0)) return;
    field.dataset.maxlength = limit;
    var count = document.createElement("small");
    count.className = "char-count";
    count.setAttribute("aria-live", "polite");
    field.insertAdjacentElement("afterend", count);
    var update = function () {
      var length = Array.from(field.value).length;
      count.hidden = length < limit * 0.8;
      count.textContent = length.toLocaleString() + " / " + limit.toLocaleString();
      count.classList.toggle("over", length > limit);
    };
    field.addEventListener("input", update);
    update();
  });
}

htmx.onLoad(perfcaseCountCharacters);

// Every error of a form at once, each beside its field: the browser's own check stops a
// form at its first empty required field (or value out of bounds) and shows only that one,
// so forms are sent as they are and the server answers with all of them. The required
// marks stay, for people and screen readers.
function perfcaseServerChecks(root) {
  if (!root.querySelectorAll) return;
  if (root.tagName === "FORM") root.noValidate = true;
  root.querySelectorAll("form").forEach(function (form) { form.noValidate = true; });
}

htmx.onLoad(perfcaseServerChecks);
