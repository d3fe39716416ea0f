extension StatusPage {
    /// The page's style: system fonts, a light and a dark scheme, nothing loaded.
    static let style = """
    :root{color-scheme:light dark;--fg:#1d232a;--bg:#f6f7f9;--card:#fff;--line:#d5dae0;--ok:#1b7f3b;--bad:#b3261e;--accent:#2563eb}
    @media (prefers-color-scheme:dark){:root{--fg:#e6e9ec;--bg:#15181c;--card:#1e2227;--line:#343a42;--ok:#4ade80;--bad:#f87171;--accent:#60a5fa}}
    body{margin:0;font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
    header{display:flex;gap:1.5em;align-items:baseline;padding:.8em 1.5em;background:var(--card);border-bottom:1px solid var(--line)}
    h1{font-size:1.3em;margin:0}h2{font-size:1.05em;margin:0 0 .5em}
    main{padding:1em 1.5em;display:grid;gap:1em}
    section{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.8em 1em;overflow-x:auto}
    #health{font-weight:600;margin:0}#health.ok{color:var(--ok)}#health.bad{color:var(--bad)}#updated{margin:0;opacity:.7}
    svg{width:100%;max-width:900px;height:auto;display:block}
    .axis{stroke:var(--line)}.line{fill:none;stroke:var(--accent);stroke-width:1.5}.point{fill:var(--accent)}
    .label{fill:currentColor;font-size:11px;opacity:.7}
    dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1.5em;margin:0}dt{opacity:.75}dd{margin:0;font-variant-numeric:tabular-nums}
    table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3em .6em;border-bottom:1px solid var(--line);vertical-align:top}
    td{white-space:pre-line;font-variant-numeric:tabular-nums}#findings td:nth-child(2){font-weight:600;color:var(--bad)}
    """

    /// The page's script: every 5 s it fetches `/status.json` and rebuilds the chart (SVG elements) and
    /// the tables (`textContent` only: a name or a reason is never parsed as HTML), as ``StatusPage``
    /// renders the first view. Nothing else is fetched; it changes nothing on the service.
    static let script = """
    (function () {
      "use strict";
      var SVG = "http://www.w3.org/2000/svg";
      function byId(id) { return document.getElementById(id); }
      function num(v) { return typeof v === "number" ? (Number.isInteger(v) ? String(v) : String(v)) : "?"; }
      function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
      function fillRows(tbody, rows) {
        clear(tbody);
        rows.forEach(function (cells) {
          var tr = document.createElement("tr");
          cells.forEach(function (text) { var td = document.createElement("td"); td.textContent = text; tr.appendChild(td); });
          tbody.appendChild(tr);
        });
      }
      function upstreamRows(upstreams) {
        return (upstreams || []).map(function (u) {
          var f = u.failuresByReason || {};
          var reasons = Object.keys(f).sort().map(function (k) { return k + " " + num(f[k]); }).join(", ");
          return [String(u.upstream), u.route == null ? "all names" : String(u.route), String(u.detail),
                  num(u.queries), num(u.failures) + (reasons ? " (" + reasons + ")" : ""),
                  typeof u.meanRoundTripMilliseconds === "number" ? u.meanRoundTripMilliseconds + " ms" : "\\u2013"];
        });
      }
      function findingRows(findings) {
        return ((findings && findings.items) || []).map(function (f) {
          var trusted = Array.isArray(f.trusted) ? f.trusted.join(", ") : String(f.trusted);
          var reasons = (f.reasons || []).map(function (r) { return r.code + ": " + r.detail; }).join("\\n");
          return [String(f.foundAt), String(f.name), String(f.type), (f.local || []).join(", "), trusted, reasons];
        });
      }
      function summary(s) {
        var items = [];
        if (s.cache) {
          items.push(["Cache hit rate", typeof s.cache.hitRate === "number" ? Math.round(s.cache.hitRate * 1000) / 10 + " %" : "\\u2013"]);
          items.push(["Cache entries", num(s.cache.entries)]);
        }
        if (s.dnssec) {
          var v = function (k) { return typeof s.dnssec[k] === "number" ? num(s.dnssec[k]) : "not counted"; };
          items.push(["DNSSEC secure / insecure / bogus", v("secure") + " / " + v("insecure") + " / " + v("bogus")]);
        }
        if (s.dns) { items.push(["DNS queries", num(s.dns.queries)]); }
        if (s.proxy) { items.push(["Proxy requests", num(s.proxy.requests)]); items.push(["Proxy refusals (403)", num(s.proxy.refusals)]); }
        if (s.watch) {
          items.push(["Watch: compared / hijacked / inconclusive", num(s.watch.compared) + " / " + num(s.watch.hijacked) + " / " + num(s.watch.inconclusive)]);
        }
        return items;
      }
      function fmt(v) { return String(Math.round(v * 10) / 10); }
      function chart(answers) {
        var svg = byId("chart");
        clear(svg);
        var points = (answers && answers.points) || [];
        var win = answers && answers.windowSeconds > 0 ? answers.windowSeconds : 3600;
        var top = Math.max(1, Math.max.apply(null, points.map(function (p) { return p.perSecond; }).concat([1])));
        var axis = document.createElementNS(SVG, "line");
        [["class", "axis"], ["x1", "20"], ["y1", "185"], ["x2", "700"], ["y2", "185"]].forEach(function (a) { axis.setAttribute(a[0], a[1]); });
        svg.appendChild(axis);
        [[fmt(top) + " /s", "22", "14", "start"], ["1 hour ago", "20", "198", "start"], ["now", "700", "198", "end"]].forEach(function (t) {
          var label = document.createElementNS(SVG, "text");
          label.setAttribute("class", "label"); label.setAttribute("x", t[1]); label.setAttribute("y", t[2]);
          label.setAttribute("text-anchor", t[3]);
          label.textContent = t[0];
          svg.appendChild(label);
        });
        var placed = points.map(function (p) {
          return [fmt(700 - Math.min(p.secondsAgo, win) / win * 680), fmt(185 - p.perSecond / top * 165)];
        });
        var line = document.createElementNS(SVG, "polyline");
        line.setAttribute("class", "line");
        line.setAttribute("points", placed.map(function (p) { return p[0] + "," + p[1]; }).join(" "));
        svg.appendChild(line);
        placed.forEach(function (p) {
          var c = document.createElementNS(SVG, "circle");
          c.setAttribute("class", "point"); c.setAttribute("r", "2.5"); c.setAttribute("cx", p[0]); c.setAttribute("cy", p[1]);
          svg.appendChild(c);
        });
      }
      function render(s) {
        var health = byId("health");
        health.textContent = s.health ? String(s.health.reason) : "unknown";
        health.className = s.health && s.health.healthy ? "ok" : "bad";
        byId("updated").textContent = "as of " + s.generatedAt + ", up " + num(s.uptimeSeconds) + " s";
        chart(s.answers);
        var a = s.answers || {};
        byId("answers-summary").textContent = num(a.total) + (a.source === "dns" ? " DNS answers" : " cache lookups") +
          " in all; one point per " + num(a.slotSeconds) + " s.";
        var dl = byId("summary");
        clear(dl);
        summary(s).forEach(function (item) {
          var dt = document.createElement("dt"); dt.textContent = item[0];
          var dd = document.createElement("dd"); dd.textContent = item[1];
          dl.appendChild(dt); dl.appendChild(dd);
        });
        fillRows(byId("upstreams").tBodies[0], upstreamRows(s.upstreams));
        byId("findings-summary").textContent = s.findings ? num(s.findings.total) + " found; the newest " + num(s.findings.limit) +
          " are kept, newest first." : "The service does not watch the local resolver.";
        fillRows(byId("findings").tBodies[0], findingRows(s.findings));
        document.body.setAttribute("data-refreshed", s.generatedAt);
      }
      function refresh() {
        fetch("/status.json", { cache: "no-store" }).then(function (r) { return r.json(); }).then(render)
          .catch(function () { var h = byId("health"); h.textContent = "the service did not answer"; h.className = "bad"; });
      }
      refresh();
      setInterval(refresh, 5000);
    })();
    """
}
