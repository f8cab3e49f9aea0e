// Lays out the figures of the #report-data block (computed by tfrec's library) as two
// tables, numeric and string features apart as Facets Overview shows them; sorts by a
// column, filters by name and draws one page of rows at a time, so 1,000 features stay quick.
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var sides = data.datasets.length;
  var compare = sides > 1;

  var COLUMNS = {
    numeric: [
      { key: "name", label: "Feature", cls: "name" },
      { key: "count", label: "Count" },
      { key: "missing", label: "Missing" },
      { key: "mean", label: "Mean" },
      { key: "stdDev", label: "Std dev" },
      { key: "zeros", label: "Zeros" },
      { key: "min", label: "Min" },
      { key: "median", label: "Median" },
      { key: "max", label: "Max" },
      { key: "chart", label: "Histogram", cls: "chart", nosort: true },
      { key: "drift", label: "Drift (JS)", cmp: true },
      { key: "examples", label: "Examples", cls: "examples", nosort: true }
    ],
    string: [
      { key: "name", label: "Feature", cls: "name" },
      { key: "count", label: "Count" },
      { key: "missing", label: "Missing" },
      { key: "unique", label: "Unique" },
      { key: "top", label: "Top value" },
      { key: "topCount", label: "Freq top" },
      { key: "avgLength", label: "Avg length" },
      { key: "chart", label: "Top values", cls: "chart", nosort: true },
      { key: "drift", label: "Drift (L\u221e)", cmp: true },
      { key: "examples", label: "Examples", cls: "examples", nosort: true }
    ]
  };
  var PERCENT = { missing: true, zeros: true };
  var TITLES = { numeric: "Numeric features", string: "Categorical features" };

  var state = {
    query: "",
    onlyAnomalies: false,
    pageSize: 50,
    tables: {}
  };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function num(x) {
    if (x === null || x === undefined) return NaN;
    if (typeof x === "number") return x;
    if (x === "inf") return Infinity;
    if (x === "-inf") return -Infinity;
    return NaN;
  }

  function group(n) {
    var s = String(Math.abs(n));
    var out = "";
    while (s.length > 3) {
      out = "," + s.slice(-3) + out;
      s = s.slice(0, -3);
    }
    return (n < 0 ? "-" : "") + s + out;
  }

  function fmt(x, percent) {
    if (x === null || x === undefined) return "";
    if (typeof x === "string" && x !== "inf" && x !== "-inf" && x !== "NaN") return x;
    var v = num(x);
    if (isNaN(v)) return "NaN";
    if (v === Infinity) return "\u221e";
    if (v === -Infinity) return "-\u221e";
    if (percent) return (v * 100).toFixed(v > 0 && v < 0.001 ? 3 : 1) + "%";
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return group(v);
    var a = Math.abs(v);
    if (a >= 1e6 || a < 1e-3) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }

  function sideStat(f, i, key) {
    var s = f.stats[i];
    return s ? s[key] : undefined;
  }

  // The value a column sorts by: the first data set's, then the drift, then the anomaly.
  function sortValue(f, key) {
    if (key === "name") return f.name;
    if (key === "drift") return f.drift ? num(f.drift.value) : undefined;
    if (key === "top") return sideStat(f, 0, "top");
    var v = sideStat(f, 0, key);
    if (v === undefined && compare) v = sideStat(f, 1, key);
    return v === undefined ? undefined : num(v);
  }

  function compareFeatures(key, dir) {
    return function (a, b) {
      var x = sortValue(a, key), y = sortValue(b, key);
      var xm = x === undefined || (typeof x === "number" && isNaN(x));
      var ym = y === undefined || (typeof y === "number" && isNaN(y));
      // Missing values last, whichever way.
      if (xm || ym) return xm === ym ? a.name < b.name ? -1 : a.name > b.name ? 1 : 0 : xm ? 1 : -1;
      var c = typeof x === "string" ? (x < y ? -1 : x > y ? 1 : 0) : x - y;
      if (c === 0) c = a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
      return dir === "descending" ? -c : c;
    };
  }

  function cellValues(f, key) {
    var parts = [];
    for (var i = 0; i < sides; i++) {
      var v = sideStat(f, i, key);
      var text = v === undefined ? "" : fmt(v, PERCENT[key]);
      var cls = "v s" + i;
      if (key === "missing" && num(v) > 0) cls += " bad";
      if (key === "top") text = esc(text);
      parts.push('<span class="' + cls + '"' + (key === "top" ? ' title="' + esc(v || "") + '"' : "") + ">" + (key === "top" ? text : esc(text)) + "</span>");
    }
    return parts.join("");
  }

  function histogramSvg(f) {
    var hist = f.hist || [];
    var W = 160, H = 46, top = 2, bottom = 12;
    var buckets = 0, nans = false;
    hist.forEach(function (h) {
      if (h) {
        buckets = Math.max(buckets, h.counts.length);
        if (h.nan > 0) nans = true;
      }
    });
    if (!buckets) return '<span class="dim">no values</span>';
    var slots = buckets + (nans ? 1 : 0);
    var slot = W / slots, per = hist.length;
    var fracs = hist.map(function (h) {
      if (!h) return null;
      var total = h.nan;
      h.counts.forEach(function (c) { total += num(c); });
      return { counts: h.counts.map(function (c) { return total > 0 ? num(c) / total : 0; }), nan: total > 0 ? h.nan / total : 0 };
    });
    var max = 0;
    fracs.forEach(function (fr) {
      if (!fr) return;
      fr.counts.forEach(function (c) { max = Math.max(max, c); });
      max = Math.max(max, fr.nan);
    });
    if (!(max > 0)) max = 1;
    var out = ['<svg class="hist" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H + '" role="img">'];
    fracs.forEach(function (fr, i) {
      if (!fr) return;
      var h = hist[i];
      var bw = Math.max(1, slot / per - 1);
      fr.counts.forEach(function (c, b) {
        var bh = (H - top - bottom) * c / max;
        var x = b * slot + i * (slot / per);
        out.push('<rect class="s' + i + '" x="' + x.toFixed(1) + '" y="' + (H - bottom - bh).toFixed(1) + '" width="' + bw.toFixed(1) + '" height="' + bh.toFixed(1) + '"><title>' +
          esc(data.datasets[i].name + ": [" + fmt(h.edges[b]) + ", " + fmt(h.edges[b + 1]) + "): " + fmt(num(h.counts[b]))) + "</title></rect>");
      });
      if (nans) {
        var nh = (H - top - bottom) * fr.nan / max;
        out.push('<rect class="nan" x="' + (buckets * slot + i * (slot / per)).toFixed(1) + '" y="' + (H - bottom - nh).toFixed(1) + '" width="' + bw.toFixed(1) + '" height="' + nh.toFixed(1) + '"><title>' +
          esc(data.datasets[i].name + ": NaN: " + h.nan) + "</title></rect>");
      }
    });
    var first = hist.filter(function (h) { return h; })[0];
    out.push('<text x="0" y="' + (H - 1) + '">' + esc(fmt(first.edges[0])) + "</text>");
    out.push('<text x="' + (buckets * slot) + '" y="' + (H - 1) + '" text-anchor="end">' + esc(fmt(first.edges[first.edges.length - 1])) + "</text>");
    if (nans) out.push('<text x="' + W + '" y="' + (H - 1) + '" text-anchor="end">NaN</text>');
    out.push("</svg>");
    return out.join("");
  }

  function barsSvg(f) {
    var bars = f.bars || [];
    if (!bars.length) return '<span class="dim">no values</span>';
    // The figures at the right are each side's share, so a comparison's second side is read
    // as well as seen; the room they take is kept out of the bars' length.
    var figures = compare ? 84 : 42;
    var W = 148 + figures, row = compare ? 14 : 12, label = 70;
    var H = bars.length * row;
    var out = ['<svg class="bars" width="' + W + '" height="' + H + '" viewBox="0 0 ' + W + " " + H + '" role="img">'];
    bars.forEach(function (bar, r) {
      var y = r * row;
      var name = String(bar[0]);
      var short = name.length > 12 ? name.slice(0, 11) + "\u2026" : name;
      out.push('<text class="label" x="0" y="' + (y + 9) + '">' + esc(short) + "<title>" + esc(name) + "</title></text>");
      for (var i = 1; i < bar.length; i++) {
        var fr = num(bar[i]) || 0;
        var h = compare ? 5 : 9;
        var by = y + 1 + (i - 1) * 6;
        out.push('<rect class="s' + (i - 1) + '" x="' + label + '" y="' + by + '" width="' + Math.max(fr > 0 ? 1 : 0, fr * (W - label - figures)).toFixed(1) + '" height="' + h + '"><title>' +
          esc(data.datasets[i - 1].name + ": " + name + ": " + fmt(fr, true)) + "</title></rect>");
      }
      var shares = [];
      for (var j = 1; j < bar.length; j++) {
        shares.push('<tspan class="s' + (j - 1) + '">' + esc(fmt(num(bar[j]) || 0, true)) + "</tspan>");
      }
      out.push('<text class="share" x="' + W + '" y="' + (y + 9) + '" text-anchor="end">' + shares.join(" ") + "</text>");
    });
    out.push("</svg>");
    return out.join("");
  }

  function driftCell(f) {
    if (!f.drift) return '<span class="dim">\u2013</span>';
    var v = num(f.drift.value);
    var level = v >= 0.1 ? "high" : v >= 0.03 ? "mid" : "";
    var out = '<span class="drift" title="' + esc(f.drift.label) + '">' + esc(fmt(Number(v.toFixed(4)))) +
      '<span class="bar"><i class="' + level + '" style="width:' + Math.min(100, v * 100).toFixed(1) + '%"></i></span>';
    if (f.drift.at) out += '<span class="at" title="' + esc(f.drift.at) + '">at ' + esc(f.drift.at) + "</span>";
    return out + "</span>";
  }

  function examplesCell(f) {
    var out = [];
    for (var i = 0; i < sides; i++) {
      var parts = [];
      (f.images && f.images[i] || []).forEach(function (img) {
        var size = img.width ? img.width + "\u00d7" + img.height : "";
        if (img.uri && img.uri.indexOf("data:image/") === 0) {
          parts.push('<img alt="' + esc(img.format + " " + size) + '" title="' + esc(img.format + " " + size + ", " + img.bytes + " bytes") + '" src="' + esc(img.uri) + '"/>');
        } else {
          parts.push('<span class="big">' + esc(img.format + " " + size + " (" + fmt(img.bytes) + " bytes)") + "</span> ");
        }
      });
      // Image values show as thumbnails, not as their description.
      (parts.length ? [] : f.examples[i] || []).forEach(function (v) {
        parts.push('<code title="' + esc(v) + '">' + esc(v) + "</code>");
      });
      out.push('<span class="v s' + i + '">' + parts.join("") + "</span>");
    }
    return out.join("");
  }

  function rowHtml(f, kind) {
    var cells = [];
    var anomaly = f.anomaly;
    COLUMNS[kind].forEach(function (col) {
      if (col.cmp && !compare) return;
      var inner;
      if (col.key === "name") {
        inner = esc(f.name) + '<span class="type">' + esc(f.type || "") + "</span>";
        if (anomaly) {
          inner += '<span class="badge ' + esc(anomaly.severity) + '" title="' + esc(anomaly.description || anomaly.short) + '">' + esc(anomaly.short || "anomaly") + "</span>";
        }
      } else if (col.key === "chart") {
        inner = kind === "numeric" ? histogramSvg(f) : barsSvg(f);
      } else if (col.key === "drift") {
        inner = driftCell(f);
      } else if (col.key === "examples") {
        inner = examplesCell(f);
      } else {
        inner = cellValues(f, col.key);
      }
      cells.push('<td class="' + (col.cls || col.key) + '"' + (col.key === "name" ? ' title="' + esc(f.name) + '"' : "") + ">" + inner + "</td>");
    });
    var cls = "feature" + (anomaly ? " anomalous" + (anomaly.severity === "WARNING" ? " warning" : "") : "");
    return '<tr class="' + cls + '" data-name="' + esc(f.name) + '">' + cells.join("") + "</tr>";
  }

  function visible(kind) {
    var q = state.query.toLowerCase();
    var t = state.tables[kind];
    return t.features.filter(function (f) {
      if (state.onlyAnomalies && !f.anomaly) return false;
      return !q || f.name.toLowerCase().indexOf(q) >= 0;
    }).sort(compareFeatures(t.sortKey, t.sortDir));
  }

  function render(kind) {
    var t = state.tables[kind];
    var rows = visible(kind);
    var size = state.pageSize || rows.length || 1;
    var pages = Math.max(1, Math.ceil(rows.length / size));
    t.page = Math.min(t.page, pages - 1);
    var start = t.page * size;
    var shown = rows.slice(start, start + size);
    t.body.innerHTML = shown.map(function (f) { return rowHtml(f, kind); }).join("");
    t.count.textContent = "(" + rows.length + (rows.length !== t.features.length ? " of " + t.features.length : "") + ")";
    t.empty.hidden = rows.length > 0;
    t.info.textContent = rows.length ? "rows " + (start + 1) + "\u2013" + (start + shown.length) + " of " + rows.length : "";
    t.prev.disabled = t.page === 0;
    t.next.disabled = t.page >= pages - 1;
    t.pager.hidden = pages <= 1;
    Array.prototype.forEach.call(t.head.querySelectorAll("th"), function (th) {
      if (th.dataset.key === t.sortKey) th.setAttribute("aria-sort", t.sortDir);
      else th.removeAttribute("aria-sort");
    });
    return rows.length;
  }

  function renderAll() {
    var n = 0, all = 0;
    Object.keys(state.tables).forEach(function (kind) {
      n += render(kind);
      all += state.tables[kind].features.length;
    });
    document.getElementById("match-count").textContent = n === all ? all + " features" : n + " of " + all + " features match";
  }

  function buildTable(kind, features) {
    var section = document.getElementById(kind);
    if (!features.length) {
      section.hidden = true;
      return;
    }
    var heads = COLUMNS[kind].filter(function (c) { return !c.cmp || compare; }).map(function (c) {
      return '<th class="' + (c.cls || c.key) + (c.nosort ? " nosort" : "") + '" data-key="' + c.key + '"' + (c.nosort ? "" : ' title="sort by ' + esc(c.label.toLowerCase()) + '"') + ">" + esc(c.label) + "</th>";
    });
    section.innerHTML = "<h2>" + TITLES[kind] + ' <span class="count"></span></h2>' +
      '<table class="features' + (compare ? " cmp" : "") + '"><thead><tr>' + heads.join("") + "</tr></thead><tbody></tbody></table>" +
      '<p class="empty" hidden="hidden">No feature matches.</p>' +
      '<div class="pager"><button type="button" class="prev">\u2039 previous</button><span class="info"></span><button type="button" class="next">next \u203a</button></div>';
    var t = {
      features: features,
      sortKey: "name",
      sortDir: "ascending",
      page: 0,
      head: section.querySelector("thead"),
      body: section.querySelector("tbody"),
      count: section.querySelector("h2 .count"),
      empty: section.querySelector(".empty"),
      pager: section.querySelector(".pager"),
      info: section.querySelector(".pager .info"),
      prev: section.querySelector(".pager .prev"),
      next: section.querySelector(".pager .next")
    };
    state.tables[kind] = t;
    t.head.addEventListener("click", function (e) {
      var th = e.target.closest("th");
      if (!th || th.classList.contains("nosort")) return;
      var key = th.dataset.key;
      if (t.sortKey === key) t.sortDir = t.sortDir === "ascending" ? "descending" : "ascending";
      else {
        t.sortKey = key;
        // Names read A to Z; figures are most useful largest first.
        t.sortDir = key === "name" || key === "top" ? "ascending" : "descending";
      }
      t.page = 0;
      render(kind);
    });
    t.prev.addEventListener("click", function () { t.page = Math.max(0, t.page - 1); render(kind); });
    t.next.addEventListener("click", function () { t.page += 1; render(kind); });
  }

  function header() {
    document.getElementById("title").textContent = data.title;
    var ds = document.getElementById("datasets");
    ds.innerHTML = data.datasets.map(function (d, i) {
      var sampled = d.sampled ? " (example values from the first " + fmt(d.sampled) + ")" : "";
      return '<span class="s' + i + '"><span class="swatch"></span><b>' + esc(d.name) + "</b>: " + fmt(d.examples) + " examples" + esc(sampled) + "</span>";
    }).join("");
    if (data.datasetAnomaly) {
      var box = document.getElementById("dataset-anomaly");
      box.textContent = (data.datasetAnomaly.short || "Anomaly") + ": " + (data.datasetAnomaly.description || "");
      box.hidden = false;
    }
  }

  header();
  var numeric = [], strings = [];
  data.features.forEach(function (f) { (f.kind === "numeric" ? numeric : strings).push(f); });
  buildTable("numeric", numeric);
  buildTable("string", strings);

  var search = document.getElementById("search");
  search.addEventListener("input", function () {
    state.query = search.value;
    Object.keys(state.tables).forEach(function (k) { state.tables[k].page = 0; });
    renderAll();
  });
  document.getElementById("only-anomalies").addEventListener("change", function (e) {
    state.onlyAnomalies = e.target.checked;
    renderAll();
  });
  document.getElementById("page-size").addEventListener("change", function (e) {
    state.pageSize = e.target.value === "all" ? 0 : Number(e.target.value);
    Object.keys(state.tables).forEach(function (k) { state.tables[k].page = 0; });
    renderAll();
  });
  if (!data.features.some(function (f) { return f.anomaly; })) {
    document.getElementById("only-anomalies").parentNode.hidden = true;
  }
  renderAll();
  document.body.setAttribute("data-ready", "true");
})();
