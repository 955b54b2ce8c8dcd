/* trainlint curves: one uPlot chart per judged series, grouped by log (run), with each finding drawn where it is
   (the windows it compared, its marked points — the value, the minimum, the spike, the NaN — and resume seams).
   Shared by `trainlint report` (inlined into one HTML file) and the VS Code curves view / event-file editor.
   Data: the JSON of trainlint/curves.py. No network: uPlot is inlined or bundled beside this file. */
(function (global) {
  "use strict";
  var LEVEL = { FAIL: "--tl-fail", WARN: "--tl-warn", INFO: "--tl-info" };
  var PALETTE = ["--tl-c1", "--tl-c2", "--tl-c3", "--tl-c4", "--tl-c5", "--tl-c6"];
  var BASIS = { step: "step", "progress-bar": "progress-bar step", epoch: "epoch", index: "log entry" };
  var state = { log: false, charts: [], opts: {}, docs: [] };

  function css(name, fallback) {
    var v = getComputedStyle(document.body).getPropertyValue(name).trim();
    return v || fallback;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    return (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toExponential(3) : String(+v.toPrecision(5));
  }
  function fmtAxis(v) {
    var a = Math.abs(v);
    return (a !== 0 && (a < 1e-3 || a >= 1e5)) ? v.toExponential(1).replace("e+", "e") : String(+v.toPrecision(4));
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function where(line, record) {
    if (line) return "line " + line;
    if (record !== null && record !== undefined) return "record " + record;
    return "";
  }
  function jump(path, line, record) {
    if (state.opts.onPoint && (line || record !== null)) state.opts.onPoint({ path: path, line: line, record: record });
  }

  function chart(box, doc, s, n, findings) {
    var basis = BASIS[s.basis] || s.basis || "step";
    var xs = s.steps, ys = s.values.slice();
    if (state.log) ys = ys.map(function (v) { return v !== null && v > 0 ? v : null; });
    var mine = findings.filter(function (f) { return f.series === s.key; });
    var markers = [];
    var card = el("div", "tl-chart");
    card.dataset.series = s.label;
    card.dataset.points = String(xs.length);
    var head = el("div", "tl-chart-head");
    head.appendChild(el("span", "tl-chart-title", s.label));
    head.appendChild(el("span", "tl-chart-meta", s.role + " · " + basis + " · " + s.points + " points" +
      (s.nonfinite.length ? " · " + s.nonfinite.length + " non-finite shown" : "")));
    card.appendChild(head);
    var plot = el("div", "tl-plot");
    card.appendChild(plot);
    var tip = el("div", "tl-tip");
    card.appendChild(tip);
    box.appendChild(card);
    var fg = css("--tl-fg", "#222"), grid = css("--tl-grid", "rgba(128,128,128,0.25)");
    var color = css(PALETTE[n % PALETTE.length], "#3572c6");

    function draw(u) {
      var ctx = u.ctx, b = u.bbox, dpr = devicePixelRatio || 1;
      markers.length = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(b.left, b.top, b.width, b.height); ctx.clip();
      mine.forEach(function (f) {
        var c = css(LEVEL[f.level] || "--tl-info", "#c33");
        f.windows.forEach(function (w) {
          var x0 = u.valToPos(w.from, "x", true), x1 = u.valToPos(w.to, "x", true);
          ctx.fillStyle = c; ctx.globalAlpha = 0.13;
          ctx.fillRect(Math.min(x0, x1) - 2 * dpr, b.top, Math.abs(x1 - x0) + 4 * dpr, b.height);
          ctx.globalAlpha = 0.9; ctx.fillStyle = c; ctx.font = (10 * dpr) + "px sans-serif";
          ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
          ctx.fillText(w.name, Math.min(x0, x1) + 2 * dpr, b.top + 11 * dpr);
        });
      });
      ctx.globalAlpha = 1;
      (doc.seams || []).forEach(function (sm) {
        var x = u.valToPos(sm.step, "x", true);
        ctx.strokeStyle = fg; ctx.setLineDash([4 * dpr, 3 * dpr]); ctx.lineWidth = dpr;
        ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
        ctx.setLineDash([]);
        markers.push({ id: sm.kind, level: "seam", role: "seam", step: sm.step, line: sm.line, record: null,
                       px: x / dpr, py: (b.top + 6 * dpr) / dpr });
      });
      s.nonfinite.forEach(function (nf) {
        var x = u.valToPos(xs[nf.at], "x", true), y = b.top + 3 * dpr;
        ctx.fillStyle = css("--tl-fail", "#c33");
        ctx.beginPath(); ctx.moveTo(x - 5 * dpr, y); ctx.lineTo(x + 5 * dpr, y); ctx.lineTo(x, y + 8 * dpr);
        ctx.closePath(); ctx.fill();
      });
      mine.forEach(function (f) {
        var c = css(LEVEL[f.level] || "--tl-info", "#c33");
        f.marks.forEach(function (m) {
          var x = u.valToPos(m.step, "x", true), y;
          var v = m.value;
          if (v === null || (state.log && v <= 0)) y = b.top + 6 * dpr; else y = u.valToPos(v, "y", true);
          ctx.beginPath(); ctx.arc(x, y, (m.role === "value" ? 6 : 4.5) * dpr, 0, 2 * Math.PI);
          ctx.lineWidth = 2 * dpr; ctx.strokeStyle = c; ctx.stroke();
          if (m.role === "value") { ctx.fillStyle = c; ctx.globalAlpha = 0.35; ctx.fill(); ctx.globalAlpha = 1; }
          markers.push({ id: f.id, level: f.level, role: m.role, step: m.step, value: m.value,
                         nonfinite: m.nonfinite, line: m.line, record: m.record, px: x / dpr, py: y / dpr });
        });
      });
      ctx.restore();
      card.dataset.markers = String(markers.length);
    }

    function near(u, e) {
      var r = u.over.getBoundingClientRect(), bx = u.bbox.left / (devicePixelRatio || 1),
          by = u.bbox.top / (devicePixelRatio || 1);
      var mx = e.clientX - r.left + bx, my = e.clientY - r.top + by, best = null, bd = 10;
      markers.forEach(function (m) {
        var d = Math.hypot(m.px - mx, m.py - my);
        if (d <= bd) { bd = d; best = m; }
      });
      return best;
    }

    var width = Math.max(280, Math.floor(box.clientWidth / (box.clientWidth > 900 ? 2 : 1)) - 24);
    var u = new global.uPlot({
      width: width, height: 220,
      // 2 % of room either side: a finding at the first or last point is drawn (and clickable) whole
      scales: { x: { time: false, range: function (u, lo, hi) { var p = (hi - lo) * 0.02 || 1; return [lo - p, hi + p]; } },
                y: state.log ? { distr: 3, log: 10 } : {} },
      legend: { show: false },
      cursor: { points: { size: 7 }, drag: { x: true, y: false } },
      axes: [
        { label: basis, stroke: fg, grid: { stroke: grid }, ticks: { stroke: grid }, size: 36, labelSize: 16 },
        { stroke: fg, grid: { stroke: grid }, ticks: { stroke: grid }, size: 70,
          values: function (u, vals) { return vals.map(function (v) { return v === null ? "" : fmtAxis(v); }); } },
      ],
      series: [{ label: basis }, { label: s.label, stroke: color, width: 1.5, points: { show: xs.length < 60 } }],
      hooks: {
        draw: [draw],
        setCursor: [function (u) {
          var i = u.cursor.idx;
          if (i === null || i === undefined) { tip.style.display = "none"; return; }
          var nf = s.nonfinite.filter(function (q) { return q.at === i; })[0];
          tip.textContent = basis + " " + fmt(xs[i]) + " · " + s.label + " " + (nf ? nf.value : fmt(s.values[i])) +
            (where(s.lines[i], s.records ? s.records[i] : null) ? " · " + where(s.lines[i], s.records ? s.records[i] : null) : "");
          tip.style.display = "block";
        }],
      },
    }, [xs, ys], plot);
    u.over.addEventListener("click", function (e) {
      var m = near(u, e);
      if (m) { jump(s.path, m.line, m.record); return; }
      var i = u.cursor.idx;
      if (i !== null && i !== undefined) jump(s.path, s.lines[i], s.records ? s.records[i] : null);
    });
    u.over.addEventListener("mousemove", function (e) {
      var m = near(u, e);
      u.over.style.cursor = m ? "pointer" : "crosshair";
      if (m) tip.textContent = m.id + " " + m.role + " · " + basis + " " + fmt(m.step) + " · " +
        (m.nonfinite || fmt(m.value)) + (where(m.line, m.record) ? " · " + where(m.line, m.record) : "");
    });
    state.charts.push({ log: doc.path, series: s.label, key: s.key, points: xs.length, uplot: u, markers: markers,
                        card: card });
  }

  function render(root, docs, opts) {
    state.opts = opts || state.opts;
    state.docs = docs;
    state.charts.forEach(function (c) { c.uplot.destroy(); });
    state.charts = [];
    root.textContent = "";
    var bar = el("div", "tl-toolbar");
    var lab = el("label", "tl-toggle");
    var box = el("input");
    box.type = "checkbox"; box.checked = state.log; box.id = "tl-log-scale";
    box.addEventListener("change", function () { state.log = box.checked; render(root, state.docs); });
    lab.appendChild(box); lab.appendChild(document.createTextNode(" log scale"));
    bar.appendChild(lab);
    (state.opts.buttons || []).forEach(function (b) {
      var btn = el("button", "tl-button", b.label);
      btn.id = b.id || "";
      btn.addEventListener("click", b.run);
      bar.appendChild(btn);
    });
    root.appendChild(bar);
    docs.forEach(function (doc) {
      var sec = el("section", "tl-run");
      var h = el("h2", "tl-run-head");
      h.appendChild(el("span", "tl-verdict tl-" + doc.verdict, doc.verdict));
      h.appendChild(el("span", "tl-path", " " + doc.path));
      sec.appendChild(h);
      if (doc.error) sec.appendChild(el("p", "tl-error", doc.error));
      if (doc.findings.length) {
        var ul = el("ul", "tl-findings");
        doc.findings.forEach(function (f) {
          var li = el("li", "tl-finding tl-" + f.level);
          li.appendChild(el("span", "tl-level", f.level));
          li.appendChild(el("code", "tl-id", f.id));
          var w = where(f.line, f.record);
          if (w) {
            var a = el("a", "tl-where", w);
            a.href = "#";
            a.addEventListener("click", function (e) { e.preventDefault(); jump(f.path, f.line, f.record); });
            li.appendChild(a);
          }
          li.appendChild(el("span", "tl-evidence", f.evidence));
          var d = el("details", "tl-why");
          d.appendChild(el("summary", "", "interpretation"));
          d.appendChild(el("p", "", f.message));
          li.appendChild(d);
          ul.appendChild(li);
        });
        sec.appendChild(ul);
      }
      var grid = el("div", "tl-grid");
      sec.appendChild(grid);
      root.appendChild(sec);
      if (!doc.series.length) grid.appendChild(el("p", "tl-empty", "no series was read from this log"));
      doc.series.forEach(function (s, n) { chart(grid, doc, s, n, doc.findings); });
    });
    global.__trainlint = { charts: state.charts.map(function (c) {
      return { log: c.log, series: c.series, key: c.key, points: c.points, markers: c.markers, card: c.card };
    }) };
  }

  global.TrainlintCurves = { render: render, state: state };
})(window);
