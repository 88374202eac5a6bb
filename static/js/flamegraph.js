// Flame graphs: each [data-flame-url] element fetches the JSON of
// investigations/analysis/flame.py (flame_tree, or diff_tree when data-flame-kind="diff")
// and draws it with ONE horizontal bar trace: a bar per frame, x = width, base = start,
// y = depth. (In headless Chromium plotly's icicle trace took 155 s for 10,000 frames; a bar
// trace with base= took 2.8 s.) The JSON already merged the frames too narrow to see, so
// a graph is at most a few thousand bars.
//
// The graph is as tall as its deepest stack, but it is shown in a viewport of bounded
// height (.flame-viewport, see perfcase.css) that scrolls: one rare 128-frame stack must
// not push the wide frames people came for below a screen of blank. As flamegraph.pl draws
// it, the root is at the bottom, so each draw scrolls the viewport to the bottom: the
// root and the widest frames are in view, deep stacks are a scroll up (speedscope keeps
// the same fixed viewport).
//
// A search box highlights the frames whose name contains the text (the others dim) and
// says what share of the profile they take; a click on a frame zooms into it; the options
// form (threshold, and for the diff shape and measure) fetches the JSON again.
//
// Every text shown comes from the element's data-text-* attributes, which the template
// translates, with %(name)s placeholders filled here. No inline script, no eval, no
// inline handler: the page can run under a strict Content-Security-Policy.
(function () {
  "use strict";

  var ROW = 18; // px a level
  var DIM = 0.22; // opacity of the frames a search does not match
  var NEUTRAL = [222, 222, 222]; // no change between the sides
  var SIDE_A = [0, 114, 178]; // #0072b2, more on A (SIDE_COLOURS in analysis/ladder.py)
  var SIDE_B = [213, 94, 0]; // #d55e00, more on B
  var GREY = [190, 190, 190]; // "all" and "[other]" in a single profile
  var OTHER = "[other]";

  var language = document.documentElement.lang || undefined;

  function formatter(options) {
    try {
      return new Intl.NumberFormat(language, options);
    } catch (error) {
      return new Intl.NumberFormat(undefined, options);
    }
  }

  var percentFormat = formatter({style: "percent", maximumFractionDigits: 2});
  var countFormat = formatter({maximumFractionDigits: 0});
  var pointsFormat = formatter({maximumFractionDigits: 2, signDisplay: "exceptZero"});
  var numberFormat = formatter({maximumFractionDigits: 2});

  function percent(value) {
    return percentFormat.format(value / 100);
  }

  function fill(template, values) {
    return (template || "").replace(/%\((\w+)\)s/g, function (match, name) {
      return name in values ? values[name] : match;
    });
  }

  // plotly reads hover and bar texts as a little HTML: frame names such as
  // "std::vector<int>::push_back" or "<init>" must show as they are.
  function escapeHtml(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function hex(rgb) {
    return "#" + rgb.map(function (c) {
      return ("0" + Math.round(c).toString(16)).slice(-2);
    }).join("");
  }

  function mix(from, to, t) {
    return [0, 1, 2].map(function (i) { return from[i] + (to[i] - from[i]) * t; });
  }

  function textColour(rgb) {
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150 ? "#1c2330" : "#ffffff";
  }

  // flamegraph.pl's "hot" palette, but the same colour for the same name every time.
  function warm(name) {
    var hash = 0;
    for (var i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
    var v1 = (hash & 255) / 255, v2 = ((hash >>> 8) & 255) / 255, v3 = ((hash >>> 16) & 255) / 255;
    return [205 + 50 * v3, 230 * v1, 55 * v2];
  }

  // The diff's diverging scale: blue where A spends more, vermilion where B does, light
  // grey where they match (blue and vermilion stay apart for every kind of colour vision).
  function divergent(delta, scale) {
    var t = Math.max(-1, Math.min(1, delta / scale));
    return mix(NEUTRAL, t < 0 ? SIDE_A : SIDE_B, Math.sqrt(Math.abs(t)));
  }

  function Flame(root) {
    this.root = root;
    this.texts = root.dataset;
    this.diff = root.dataset.flameKind === "diff";
    this.chart = root.querySelector(".flame-chart");
    this.viewport = root.querySelector(".flame-viewport");
    this.status = root.querySelector(".flame-status");
    this.note = root.querySelector(".flame-note");
    this.search = root.querySelector(".flame-search");
    this.share = root.querySelector(".flame-share");
    this.reset = root.querySelector(".flame-reset");
    this.zoomed = root.querySelector(".flame-zoomed");
    this.form = root.querySelector("form.flame-options");
    this.missing = root.querySelector(".flame-missing");
    this.scale = root.querySelector(".flame-scale");
    this.data = null;
    this.zoom = 0; // the node drawn full width
    this.matched = null; // per node: 1 when its name matches the search
    this.loads = 0;
    this.listen();
    this.load();
  }

  Flame.prototype.listen = function () {
    var self = this;
    var timer = null;
    if (this.search) {
      this.search.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(function () { self.find(); }, 120);
      });
      this.search.addEventListener("keydown", function (event) {
        if (event.key === "Escape") {
          self.search.value = "";
          self.find();
        }
      });
      // The search is not a form to send: Enter searches at once.
      var searchForm = this.search.closest("form");
      if (searchForm) {
        searchForm.addEventListener("submit", function (event) {
          event.preventDefault();
          self.find();
        });
      }
    }
    if (this.reset) {
      this.reset.addEventListener("click", function () { self.zoomTo(0); });
    }
    if (this.form) {
      // Without JavaScript the form reloads the page; with it, only the graph.
      var apply = this.form.querySelector("button[type=submit]");
      if (apply) apply.hidden = true;
      this.form.addEventListener("change", function () { self.options(); });
      this.form.addEventListener("submit", function (event) {
        event.preventDefault();
        self.options();
      });
    }
    var resized = null;
    window.addEventListener("resize", function () {
      clearTimeout(resized);
      resized = setTimeout(function () { if (self.data) self.draw(true); }, 200);
    });
  };

  Flame.prototype.url = function () {
    var url = new URL(this.root.dataset.flameUrl, window.location.href);
    if (this.form) {
      new FormData(this.form).forEach(function (value, key) { url.searchParams.set(key, value); });
    }
    return url.toString();
  };

  Flame.prototype.options = function () {
    // The page's own address keeps the options, so that a reload or a shared link shows
    // the same graph (the server renders the form from the same query).
    var page = new URL(window.location.href);
    new FormData(this.form).forEach(function (value, key) { page.searchParams.set(key, value); });
    window.history.replaceState(null, "", page.toString());
    this.load();
  };

  Flame.prototype.say = function (text) {
    this.status.textContent = text || "";
    this.status.hidden = !text;
  };

  Flame.prototype.load = function () {
    var self = this;
    var load = ++this.loads;
    var started = performance.now();
    this.say(this.texts.textLoading);
    this.root.setAttribute("aria-busy", "true");
    fetch(this.url(), {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        return response.json();
      })
      .then(function (data) {
        if (load !== self.loads) return; // a newer request is on its way
        self.root.dataset.loadMs = Math.round(performance.now() - started);
        self.data = data;
        self.zoom = 0;
        self.matched = null;
        if (self.reset) self.reset.hidden = true;
        if (self.zoomed) self.zoomed.textContent = "";
        self.prepare();
        if (!data.nodes.length || !data.nodes[0].width) {
          self.say(self.texts.textEmpty);
          self.root.removeAttribute("aria-busy");
          return;
        }
        self.say("");
        self.describe();
        self.draw().then(function () {
          if (self.search && self.search.value) self.find();
        });
      })
      .catch(function (error) {
        if (load !== self.loads) return;
        self.root.removeAttribute("aria-busy");
        self.say(fill(self.texts.textFailed, {error: error.message}));
      });
  };

  // What each node shows, worked out once a load: its colour, hover text and where its
  // subtree ends (the nodes come parents first, so a subtree is a run of the list).
  Flame.prototype.prepare = function () {
    var data = this.data, nodes = data.nodes, texts = this.texts, self = this;
    var count = nodes.length;
    this.end = new Int32Array(count);
    var open = [];
    for (var i = 0; i < count; i++) {
      while (open.length && nodes[open[open.length - 1]].depth >= nodes[i].depth) {
        this.end[open.pop()] = i;
      }
      open.push(i);
    }
    while (open.length) this.end[open.pop()] = count;
    var scale = 0;
    if (this.diff) {
      for (var j = 1; j < count; j++) scale = Math.max(scale, Math.abs(nodes[j].delta));
      // Below half a point nothing is worth a strong colour.
      scale = Math.max(scale, 0.5);
      if (this.scale) this.scale.textContent = fill(texts.textScale, {points: numberFormat.format(scale)});
    }
    var threshold = percent(data.threshold);
    var selfMeasure = this.diff && data.measure === "self";
    this.colours = [];
    this.textColours = [];
    this.hovers = [];
    this.patterns = [];
    nodes.forEach(function (node) {
      var rgb, lines = ["<b>" + escapeHtml(node.name) + "</b>"];
      if (self.diff) {
        rgb = divergent(node.delta, scale);
        lines.push(escapeHtml(
          fill(selfMeasure ? texts.textASelf : texts.textA, {value: percent(node.a)}) + " · " +
          fill(selfMeasure ? texts.textBSelf : texts.textB, {value: percent(node.b)}) + " · " +
          fill(texts.textDelta, {delta: pointsFormat.format(node.delta)})
        ));
        if (node.only) lines.push(escapeHtml(node.only === "a" ? texts.textOnlyA : texts.textOnlyB));
        self.patterns.push(node.only ? "/" : "");
      } else {
        rgb = node.name === OTHER || node.depth === 0 ? GREY : warm(node.name);
        lines.push(escapeHtml(fill(texts.textShare, {percent: percent(node.width), self: percent(node.self)})));
        if (node.samples !== null && node.samples !== undefined) {
          lines.push(escapeHtml(fill(texts.textSamples, {count: countFormat.format(node.samples)})));
        } else if (texts.textWeight && node.weight !== null && node.weight !== undefined) {
          // A folded file of weights: say what they are, not "samples".
          lines.push(escapeHtml(fill(texts.textWeight, {count: numberFormat.format(node.weight)})));
        }
      }
      if (node.name === OTHER) lines.push(escapeHtml(fill(texts.textOther, {threshold: threshold})));
      self.colours.push(hex(rgb));
      self.textColours.push(textColour(rgb));
      self.hovers.push(lines.join("<br>"));
    });
  };

  // A line under the graph: how many frames, how many merged, and a raised threshold.
  Flame.prototype.describe = function () {
    var data = this.data, texts = this.texts;
    var parts = [fill(texts.textDrawn, {count: countFormat.format(data.nodes.length)})];
    if (data.merged) {
      parts.push(fill(texts.textMerged, {count: countFormat.format(data.merged), threshold: percent(data.threshold)}));
    }
    if (this.note) this.note.textContent = parts.join(" ");
    if (this.missing) this.listMissing();
  };

  Flame.prototype.listMissing = function () {
    var data = this.data, texts = this.texts, box = this.missing;
    box.textContent = "";
    var rest = data.missing_rest || {frames: 0};
    box.hidden = !(data.missing && data.missing.length) && !rest.frames;
    if (box.hidden) return;
    var heading = document.createElement("h3");
    heading.textContent = data.shape === "a" ? texts.textMissingA : texts.textMissingB;
    box.appendChild(heading);
    var list = document.createElement("ul");
    data.missing.forEach(function (frame) {
      var item = document.createElement("li");
      var name = document.createElement("code");
      name.textContent = frame.name;
      name.title = frame.stack;
      var share = document.createElement("span");
      share.className = "share";
      share.textContent = " " + percent(frame.share);
      var stack = document.createElement("small");
      stack.className = "muted stack";
      stack.textContent = frame.stack;
      item.appendChild(name);
      item.appendChild(share);
      item.appendChild(stack);
      list.appendChild(item);
    });
    box.appendChild(list);
    if (rest.frames) {
      var more = document.createElement("p");
      more.className = "muted";
      more.textContent = fill(texts.textMissingRest, {count: countFormat.format(rest.frames), share: percent(rest.share)});
      box.appendChild(more);
    }
  };

  // The name as far as it fits in the bar (about 7 px a character at 11 px).
  function label(name, pixels) {
    var fits = Math.floor((pixels - 6) / 7);
    if (fits < 3) return "";
    return name.length <= fits ? name : name.slice(0, fits - 1) + "…";
  }

  Flame.prototype.opacities = function (from, to) {
    if (!this.matched) return 1;
    var values = new Array(to - from);
    for (var i = from; i < to; i++) values[i - from] = this.matched[i] ? 1 : DIM;
    return values;
  };

  // Draws the zoomed node and what is above it: bars outside it are left out rather than
  // clipped, so a zoom into a small frame also draws faster. The viewport then shows the
  // bottom rows (the zoomed frame and the widest above it), unless `keep` asks to stay
  // where the reader scrolled to (a resize).
  Flame.prototype.draw = function (keep) {
    var self = this, nodes = this.data.nodes, zoom = nodes[this.zoom];
    var from = this.zoom, to = this.end[this.zoom];
    var pixels = (this.chart.clientWidth || 800) / (zoom.width || 100);
    var x = [], base = [], y = [], text = [], index = [];
    var deepest = zoom.depth;
    var viewport = this.viewport;
    var fromBottom = keep && viewport ? viewport.scrollHeight - viewport.scrollTop : 0;
    for (var i = from; i < to; i++) {
      var node = nodes[i];
      if (node.depth > deepest) deepest = node.depth;
      x.push(node.width);
      base.push(node.start);
      y.push(node.depth);
      text.push(escapeHtml(label(node.name, node.width * pixels)));
      index.push(i);
    }
    var marker = {
      color: this.colours.slice(from, to),
      opacity: this.opacities(from, to),
      line: {color: "rgba(255,255,255,0.9)", width: 0.5},
    };
    if (this.diff) {
      // Frames only one side ran are hatched over their colour.
      marker.pattern = {
        shape: this.patterns.slice(from, to),
        fillmode: "overlay",
        fgcolor: "rgba(28,35,48,0.7)",
        size: 7,
        solidity: 0.3,
      };
    }
    // As many rows as the drawn subtree has (a zoom into a shallow frame needs fewer).
    var rows = deepest - zoom.depth + 1;
    var trace = {
      type: "bar",
      orientation: "h",
      x: x,
      base: base,
      y: y,
      width: 0.94,
      customdata: index,
      marker: marker,
      text: text,
      textposition: "inside",
      insidetextanchor: "start",
      textangle: 0,
      constraintext: "inside",
      textfont: {size: 11, color: this.textColours.slice(from, to)},
      hovertext: this.hovers.slice(from, to),
      hoverinfo: "text",
      hoverlabel: {align: "left"},
    };
    var layout = {
      barmode: "overlay",
      bargap: 0,
      showlegend: false,
      hovermode: "closest",
      dragmode: false,
      height: rows * ROW + 4,
      margin: {l: 1, r: 1, t: 2, b: 2},
      xaxis: {range: [zoom.start, zoom.start + zoom.width], visible: false, fixedrange: true},
      // Rows keep their height when zoomed: the zoomed frame is drawn at the bottom.
      yaxis: {range: [zoom.depth - 0.5, zoom.depth - 0.5 + rows], visible: false, fixedrange: true},
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
    };
    var config = {displayModeBar: false, responsive: true, scrollZoom: false, doubleClick: false};
    var started = performance.now();
    this.root.setAttribute("aria-busy", "true");
    return Plotly.react(this.chart, [trace], layout, config).then(function () {
      if (viewport) {
        viewport.scrollTop = fromBottom ? viewport.scrollHeight - fromBottom : viewport.scrollHeight;
      }
      // Until the next frame is on the screen: plotly's work, then the browser's layout and
      // paint of the bars.
      return new Promise(function (resolve) {
        requestAnimationFrame(function () { setTimeout(resolve, 0); });
      });
    }).then(function () {
      self.root.dataset.drawMs = Math.round(performance.now() - started);
      self.root.dataset.bars = to - from;
      self.root.removeAttribute("aria-busy");
      if (!self.clickable) {
        self.clickable = true;
        self.chart.on("plotly_click", function (event) {
          if (event.points && event.points.length) self.zoomTo(event.points[0].customdata);
        });
      }
    });
  };

  Flame.prototype.zoomTo = function (index) {
    this.zoom = index;
    if (this.reset) this.reset.hidden = index === 0;
    if (this.zoomed) {
      this.zoomed.textContent = index === 0 ? "" : fill(this.texts.textZoomed, {name: this.data.nodes[index].name});
    }
    this.draw();
  };

  // Highlights the frames whose name contains the search text and adds up their share:
  // a match inside another match is already in it, so only the outermost ones count
  // (except for the diff's self measure, where no frame's share contains another's).
  Flame.prototype.find = function () {
    if (!this.data) return;
    var query = this.search.value.trim().toLowerCase();
    var nodes = this.data.nodes, count = nodes.length;
    if (!query) {
      this.matched = null;
      this.share.textContent = "";
      this.root.dataset.matches = 0;
      this.restyle();
      return;
    }
    var matched = new Uint8Array(count), inside = new Uint8Array(count);
    var matches = 0, total = 0, totalA = 0, totalB = 0;
    var nested = !(this.diff && this.data.measure === "self");
    for (var i = 1; i < count; i++) {
      var node = nodes[i], parent = node.parent;
      inside[i] = parent > 0 && (matched[parent] || inside[parent]) ? 1 : 0;
      if (node.name.toLowerCase().indexOf(query) === -1) continue;
      matched[i] = 1;
      matches++;
      if (nested && inside[i]) continue;
      if (this.diff) {
        totalA += node.a;
        totalB += node.b;
      } else {
        total += node.width;
      }
    }
    this.matched = matched;
    this.root.dataset.matches = matches;
    if (!matches) {
      this.share.textContent = this.texts.textNoMatch;
    } else if (this.diff) {
      this.share.textContent = fill(this.texts.textMatchesDiff, {
        count: countFormat.format(matches), a: percent(totalA), b: percent(totalB),
      });
    } else {
      this.share.textContent = fill(this.texts.textMatches, {
        count: countFormat.format(matches), percent: percent(total),
      });
    }
    this.restyle();
  };

  Flame.prototype.restyle = function () {
    if (!this.chart.data) return;
    var from = this.zoom, to = this.end[this.zoom];
    Plotly.restyle(this.chart, {"marker.opacity": [this.opacities(from, to)]}, [0]);
  };

  function start(scope) {
    if (!scope.querySelectorAll) return;
    if (typeof Plotly === "undefined") {
      if (window.perfcaseWithPlotly) perfcaseWithPlotly(scope, function () { start(scope); });
      return;
    }
    var elements = Array.prototype.slice.call(scope.querySelectorAll("[data-flame-url]"));
    if (scope.matches && scope.matches("[data-flame-url]")) elements.push(scope);
    elements.forEach(function (element) {
      if (element.flame) return;
      element.flame = new Flame(element);
    });
  }

  // A function's name in a table (a button with data-flame-search) searches the graph.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-flame-search]");
    if (!button) return;
    var element = document.querySelector("[data-flame-url]");
    if (!element || !element.flame || !element.flame.search) return;
    element.flame.search.value = button.dataset.flameSearch;
    element.flame.find();
    element.scrollIntoView({block: "start", behavior: "smooth"});
  });

  if (window.htmx) {
    htmx.onLoad(start);
  } else {
    document.addEventListener("DOMContentLoaded", function () { start(document); });
  }
})();
