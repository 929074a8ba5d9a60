// Headroom's live usage dashboard: reads /usage/stream (server-sent events, one JSON document a
// second) and draws it with uPlot. Text from the gateway is only ever set as textContent.
(function () {
  "use strict";

  var charts = {};
  var updates = 0;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf"];

  function byId(id) { return document.getElementById(id); }

  function width(el) { return Math.max(300, el.clientWidth || 460); }

  var AXIS_FONT = "12px system-ui, sans-serif";
  var measure = document.createElement("canvas").getContext("2d");

  function two(n) { return (n < 10 ? "0" : "") + n; }

  // An instant (epoch seconds) as the local time of day, hh:mm:ss: the window is two minutes, so
  // the date would only repeat itself on every tick.
  function clock(s) {
    var d = new Date(s * 1000);
    return two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
  }

  // The time axis's labels: uPlot places ticks at least `space` pixels apart, wider than a label,
  // so labels never overlap. The narrowest gap between ticks and the widest label are kept on the
  // chart's element (data-x-gap, data-x-label) for the browser test to compare.
  function timeLabels(u, splits) {
    var labels = splits.map(clock);
    measure.font = AXIS_FONT;
    var gap = Infinity;
    var label = 0;
    for (var i = 0; i < splits.length; i++) {
      label = Math.max(label, measure.measureText(labels[i]).width);
      if (i > 0) { gap = Math.min(gap, u.valToPos(splits[i], "x") - u.valToPos(splits[i - 1], "x")); }
    }
    var el = u.root.parentNode;
    if (el) {
      el.dataset.xGap = isFinite(gap) ? String(Math.round(gap)) : "";
      el.dataset.xLabel = String(Math.ceil(label));
    }
    return labels;
  }

  // The value axis is as wide as its widest label, plus room for its unit's label beside it.
  function valueAxisSize(u, values) {
    measure.font = AXIS_FONT;
    var w = 0;
    (values || []).forEach(function (v) { w = Math.max(w, measure.measureText(String(v)).width); });
    return Math.max(50, Math.ceil(w) + 36);
  }

  // The legend shows the values under the cursor; with no cursor over the chart (uPlot would show
  // "--") it shows the latest second's values instead.
  function latest(u) {
    var n = u.data[0].length;
    if (u.cursor.idx == null && n > 0) {
      u.setLegend({ idx: n - 1 }, false);
    }
  }

  // (Re)draws the chart in element `id` with x values `t` and named series; the chart is rebuilt
  // only when the set of series changes, otherwise its data is replaced.
  function draw(id, t, series, unit) {
    var el = byId(id);
    var names = Object.keys(series);
    var key = names.join("\u0000");
    var data = [t].concat(names.map(function (n) { return series[n]; }));
    var c = charts[id];
    if (c && c.key === key) {
      c.plot.setData(data);
    } else {
      if (c) { c.plot.destroy(); }
      var opts = {
        width: width(el), height: 220,
        scales: { x: { time: true } },
        axes: [
          { font: AXIS_FONT, space: 90, values: timeLabels },
          { font: AXIS_FONT, label: unit, size: valueAxisSize }
        ],
        padding: [null, 32, null, null],   // room for the last time label, centred on the last tick
        legend: { live: true },
        hooks: { ready: [latest], draw: [latest], setCursor: [latest] },
        series: [{ label: "Time", value: function (u, v) { return v == null ? "--" : clock(v); } }]
          .concat(names.map(function (n, i) {
            return { label: n, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: false };
          }))
      };
      charts[id] = { key: key, plot: new uPlot(opts, data, el) };
    }
    latest(charts[id].plot);
    el.dataset.points = String(t.length);
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    tr.appendChild(td);
    return td;
  }

  function fill(id, rows) {
    var body = byId(id).querySelector("tbody");
    while (body.firstChild) { body.removeChild(body.firstChild); }
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function hitterRows(list) {
    return list.map(function (h) {
      var tr = document.createElement("tr");
      tr.dataset.pk = h.pk;
      tr.dataset.policy = h.policy;
      cell(tr, h.policy);
      cell(tr, h.pk, "pk");
      cell(tr, String(h.count), "num");
      cell(tr, String(h.error), "num");
      return tr;
    });
  }

  function render(u) {
    byId("service").textContent = u.service;
    document.title = u.service + ": live usage";
    byId("window").textContent = String(u.seconds);
    var decisions = {};
    Object.keys(u.decisions).forEach(function (policy) {
      Object.keys(u.decisions[policy]).forEach(function (outcome) {
        decisions[policy + " " + outcome] = u.decisions[policy][outcome];
      });
    });
    draw("chart-decisions", u.t, decisions, "per second");
    draw("chart-refusals", u.t, u.refusalsByType, "per second");
    draw("chart-latency", u.t, u.latencyMicros, "\u00b5s");
    // shown only when a policy has a queue (policies.NAME.queue)
    if (u.queue && Object.keys(u.queue).length > 0) {
      byId("queue").hidden = false;
      draw("chart-queue", u.t, u.queue, "requests");
    }

    fill("top-refused", hitterRows(u.topRefused));
    fill("top-used", hitterRows(u.topUsed));
    var totals = [];
    Object.keys(u.totals).forEach(function (policy) {
      Object.keys(u.totals[policy]).forEach(function (outcome) {
        var tr = document.createElement("tr");
        cell(tr, policy);
        cell(tr, outcome);
        cell(tr, String(u.totals[policy][outcome]), "num");
        totals.push(tr);
      });
    });
    fill("totals", totals);
    fill("capacity", Object.keys(u.capacity).map(function (p) {
      var tr = document.createElement("tr");
      cell(tr, p);
      cell(tr, String(u.capacity[p]), "num");
      return tr;
    }));
    byId("store-type").textContent = "Kind: " + u.store.type;
    fill("store", Object.keys(u.store.meters).map(function (m) {
      var tr = document.createElement("tr");
      cell(tr, m);
      cell(tr, String(u.store.meters[m]), "num");
      return tr;
    }));
    updates += 1;
    document.body.dataset.updates = String(updates);
    var status = byId("status");
    status.className = "";
    status.textContent = "Live: updated " + new Date(u.time).toLocaleTimeString() + " (" + updates + " updates)";
  }

  function connect() {
    var source = new EventSource("/usage/stream");
    source.addEventListener("usage", function (e) { render(JSON.parse(e.data)); });
    source.onerror = function () {
      var status = byId("status");
      status.className = "down";
      status.textContent = "The stream from the gateway was interrupted; reconnecting\u2026";
    };
  }

  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (id) {
      charts[id].plot.setSize({ width: width(byId(id)), height: 220 });
    });
  });
  connect();
})();
