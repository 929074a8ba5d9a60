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
        axes: [{}, { label: unit, size: 60 }],
        series: [{}].concat(names.map(function (n, i) {
          return { label: n, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: false };
        }))
      };
      charts[id] = { key: key, plot: new uPlot(opts, data, el) };
    }
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
