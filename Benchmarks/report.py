#!/usr/bin/env python3
"""Benchmarks/report.py RUN_DIR OUT_DIR: results.tsv + meta.env + notes.txt -> RESULTS.md, results.svg.
Benchmarks/report.py scaling TSV_DIR OUT_SVG: every TSV_DIR/*.tsv -> the scaling chart (see scaling()).

results.tsv holds one measurement per line: round, id, value. Each table row takes the median over the
rounds of the HostPin side and of the peer side (measured in the same rounds), shows the spread
(min-max over rounds) of both, and their ratio, oriented so that > 1 means HostPin is better.
meta.env's `items` names the items the run measured; a partial run reports those alone and says so.
"""
import math
import os
import statistics
import subprocess
import sys
from collections import defaultdict



def scaling(tsv_dir, out_svg):
    """How cost grows: one panel per metric, x (a count) on a log axis, one series per side.

    Every `*.tsv` in tsv_dir has the header `metric side x value unit` (tab-separated) and one measurement
    a line; several lines for the same metric, side and x (rounds) are drawn as their median. Each helper
    writes its own file (cache.tsv, proxy.tsv, bulk.tsv, ...); this draws whatever is there.
    """
    import glob
    points = defaultdict(list)  # (metric, side, x) -> values
    units = {}
    for path in sorted(glob.glob(os.path.join(tsv_dir, "*.tsv"))):
        with open(path) as f:
            header = f.readline().rstrip("\n").split("\t")
            if header != ["metric", "side", "x", "value", "unit"]:
                sys.exit(f"{path}: header is not 'metric side x value unit'")
            for number, line in enumerate(f, 2):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 5:
                    if line.strip():
                        sys.exit(f"{path}:{number}: want 5 tab-separated fields")
                    continue
                metric, side, x, value, unit = parts
                try:
                    points[(metric, side, float(x))].append(float(value))
                except ValueError:
                    sys.exit(f"{path}:{number}: x and value must be numbers")
                units[metric] = unit
    metrics = sorted(units)
    if not metrics:
        sys.exit(f"no measurements in {tsv_dir}/*.tsv")
    import tempfile
    work = tempfile.mkdtemp(prefix="hostpin-scaling-")
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    gp = [f"set terminal svg size {420 * columns},{330 * rows} dynamic enhanced font 'sans,10' background rgb 'white'",
          f"set output '{out_svg}'",
          "set logscale x", "set grid", "set key top left font ',9'", "set format x '10^{%L}'",
          f"set multiplot layout {rows},{columns} title 'How cost grows (medians; one panel per metric)'"]
    for index, metric in enumerate(metrics):
        sides = sorted({side for (m, side, _) in points if m == metric}, key=lambda s: (s != "HostPin", s))
        plots = []
        for side in sides:
            dat = os.path.join(work, f"{index}-{len(plots)}.dat")
            with open(dat, "w") as f:
                for x in sorted(x for (m, s, x) in points if m == metric and s == side):
                    f.write(f"{x:g}\t{statistics.median(points[(metric, side, x)]):.6g}\n")
            plots.append(f"'{dat}' using 1:2 with linespoints lw 2 pt 7 title '{side}'")
        gp += [f"set title '{metric}'", f"set ylabel '{units[metric]}'", "set xlabel 'count'",
               "set yrange [0:*]", "plot " + ", ".join(plots)]
    gp.append("unset multiplot")
    script = os.path.join(work, "scaling.gp")
    with open(script, "w") as f:
        f.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", script], check=True)
    import shutil
    shutil.rmtree(work)
    print(out_svg)


if len(sys.argv) == 4 and sys.argv[1] == "scaling":
    scaling(sys.argv[2], sys.argv[3])
    sys.exit(0)

run_dir, out_dir = sys.argv[1], sys.argv[2]

values = defaultdict(list)
with open(os.path.join(run_dir, "results.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 3:
            continue
        try:
            v = float(parts[2])
        except ValueError:
            continue
        if not math.isnan(v):
            values[parts[1]].append(v)

meta = {}
with open(os.path.join(run_dir, "meta.env")) as f:
    for line in f:
        k, _, v = line.rstrip("\n").partition("=")
        meta[k] = v
notes_path = os.path.join(run_dir, "notes.txt")
notes = [l.strip() for l in open(notes_path)] if os.path.exists(notes_path) else []
notes = [n for n in notes if n]
all_items = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]
items = meta.get("items", " ".join(all_items)).split()
partial = items != all_items


def med(key):
    v = values.get(key)
    return statistics.median(v) if v else None


def spread(key, fmt):
    v = values.get(key)
    if not v:
        return "—"
    return f"{fmt(min(v))}–{fmt(max(v))}" if len(v) > 1 else fmt(v[0])


def ns(x):
    return f"{x:,.0f} ns" if x < 10_000 else f"{x / 1000:,.1f} µs"


def us(x):
    return f"{x:,.1f} µs"


def qps(x):
    return f"{x:,.0f}/s"


def mibs(x):
    return f"{x:,.0f} MiB/s"


def mib(x):
    return f"{x:,.1f} MiB"


def count(x):
    return f"{x:,.0f}"


rows = []    # table rows
chart = []   # (label, ratio, goal, met)


def row(section, label, hp_key, peer_key, fmt, lower_is_better, goal_ratio=None, goal_abs=None,
        peer_label="", chart_label=None, goal_text=None, with_ratio=True, first_bar=None):
    """goal_ratio: HostPin must be at least this many times better than the peer.
    first_bar: a lower ratio that is a first step towards goal_ratio ("first bar only" when met alone).
    goal_abs: (limit, unit_fmt) HostPin's own value must be <= limit (lower_is_better) or >= limit.
    with_ratio: False for counts shown side by side, where a ratio would mean nothing.
    A row of an item the run did not measure is left out."""
    if section not in items:
        return
    hp, peer = med(hp_key), med(peer_key) if peer_key else None
    ratio = None
    if with_ratio and hp is not None and peer is not None and hp > 0 and peer > 0:
        ratio = peer / hp if lower_is_better else hp / peer
    met_parts = []
    if goal_ratio is not None:
        met_parts.append(ratio is not None and ratio >= goal_ratio)
        if chart_label and ratio is not None:
            chart.append((chart_label, ratio, goal_ratio, ratio >= goal_ratio))
    if goal_abs is not None:
        limit = goal_abs
        ok = hp is not None and (hp <= limit if lower_is_better else hp >= limit)
        met_parts.append(ok)
        if chart_label and hp is not None:
            headroom = limit / hp if lower_is_better else hp / limit
            chart.append((chart_label.replace(" /Unbound", "") + (" limit/x" if "1 " in chart_label[:2] else ""), headroom, 1.0, ok))
    if not met_parts:
        met = "—"
    elif hp is not None and goal_abs is not None and goal_ratio is not None and ratio is None:
        # A partial run without the peer (Benchmarks/run cache): the limit alone.
        met = ("**yes**" if met_parts[-1] else "**NO**") + " (limit; ratio not measured)"
    elif hp is None or (goal_ratio is not None and ratio is None):
        met = "not measured"
    elif all(met_parts):
        met = "**yes**"
    elif first_bar is not None and ratio is not None and ratio >= first_bar:
        met = f"first bar only (≥ {first_bar:g}×)"
    else:
        met = "**NO**"
    spread_text = f"{spread(hp_key, fmt)}"
    if peer_key:
        spread_text += f" / {spread(peer_key, fmt)}"
    rows.append((section, label,
                 fmt(hp) if hp is not None else "not measured",
                 (f"{fmt(peer)} ({peer_label})" if peer is not None else ("—" if not peer_key else "not measured")),
                 spread_text,
                 f"{ratio:,.2f}×" if ratio is not None else "—",
                 goal_text or "—", met))


# 1. cache hits vs one Unbound query
# Issue 32: the hit read in place (`cachedAddresses`, no `Resolution` built), hot ≤ 60 ns on one thread.
for api, api_text in (("sync", "`ResolutionCache.lookup`"), ("async", "`CachingResolver.resolve`"),
                      ("view", "`CachingResolver.cachedAddresses` (read in place)")):
    for keys in ("hot", "random"):
        for t in (1, 2):
            key = f"cache.{api}.{keys}.t{t}"
            keys_text = "16 hot keys" if keys == "hot" else "random keys of 100 000"
            # Issue 18: hot ≤ 100 ns on one thread, two threads ≤ 1.2× that thread's time, random ≤ 400 ns.
            one_thread = med(f"cache.{api}.hot.t1")
            if keys == "random":
                limit, limit_text = 400, "≤ 400 ns"
            elif t == 1:
                hot_limit = 60 if api == "view" else 100
                limit, limit_text = hot_limit, f"≤ {hot_limit} ns"
            else:
                limit = 1.2 * one_thread if one_thread is not None else None
                limit_text = "≤ 1.2× one thread" + (f" ({ns(limit)})" if limit is not None else "")
            row("1", f"cache hit, {api_text}, {keys_text}, {t} thread{'s' if t > 1 else ''}", key, "unbound.p50", ns,
                True, goal_ratio=100, goal_abs=limit, peer_label="Unbound query p50",
                chart_label=f"1 {api} {keys} {t}T /Unbound", goal_text=f"{limit_text} and ≥ 100×")
row("1", "`HostName.parse`, ASCII (lower-case, trailing dot)", "parse.ascii", "unbound.p50", ns, True,
    peer_label="Unbound query p50")
row("1", "`HostName.parse`, Unicode → A-labels (libidn2)", "parse.idna", "unbound.p50", ns, True,
    peer_label="Unbound query p50")

# 2. cold resolution, best N of the sweep
sweep = [int(n) for n in meta.get("sweep", "").split()]
best_n = None
best = None
for n in sweep:
    m = med(f"lookup.c{n}.qps")
    if m is not None and (best is None or m > best):
        best, best_n = m, n
if best_n is not None:
    values["lookup.best.qps"] = values[f"lookup.c{best_n}.qps"]
row("2", f"cold resolution of 10 000 names, `hostpin lookup --batch --concurrency {best_n or 'N'} --family 4 --json` "
    "(whole process, start-up included)", "lookup.best.qps", "dnsperf.qps", qps, False, goal_ratio=0.8,
    peer_label="dnsperf -q 50", chart_label=f"2 lookup c{best_n} /dnsperf", goal_text="≥ 0.8×")
bulk_n = meta.get("bulk_n", "64")
for key, peer in (("adnshost.pipe", "`adnshost -a -f`, the whole file on its standard input"),
                  ("adnshost.window", f"`adnshost -a -f` fed {bulk_n} names at a time"),
                  ("aiodns", f"Python asyncio + aiodns, {bulk_n} in flight")):
    row("2", f"cold resolution of 10 000 names, hostpin (best N) vs {peer} (reference: answered names/s, "
        "whole process)", "lookup.best.qps", f"{key}.qps", qps, False, peer_label=key.split(".")[0])

row("2", f"CPU per name (user + system ÷ names), cold bulk of 10 000 names, {bulk_n} in flight: `hostpin lookup "
    "--batch` vs `bulk/ares-loop.c`, a C loop on c-ares alone (ares_send + ares_process_fd)", "cpu.hostpin.us",
    "cpu.aresloop.us", us, True, goal_ratio=0.5, peer_label="C loop on c-ares", chart_label="2 CPU/name /c-ares",
    goal_text="≤ 2× (ratio ≥ 0.5×)")

# 3. interceptor
row("3", "interceptor, http, 8 in flight: pinned URLSession → name vs plain URLSession → IP", "http.pinned.rps",
    "http.plain.rps", qps, False, goal_ratio=0.9, peer_label="plain URLSession", chart_label="3 http /plain",
    goal_text="≥ 0.9×")
row("3", "interceptor, http, 8 in flight: pinned with plainHTTP: .libcurl → name vs plain URLSession → IP",
    "http.pinnedcurl.rps", "http.plain.rps", qps, False, goal_ratio=0.9, peer_label="plain URLSession",
    chart_label="3 http curl /plain", goal_text="≥ 0.9×")
row("3", "interceptor, http, 8 in flight: pinned with an observer vs pinned without (no cost when none is set)",
    "http.observed.rps", "http.pinned.rps", qps, False, goal_ratio=0.9, peer_label="pinned, no observer",
    chart_label="3 http observer /none", goal_text="≥ 0.9×")
row("3", "interceptor, https, 8 in flight: pinned (libcurl, extraCAFile) vs plain URLSession → https://localhost",
    "https.pinned.rps", "https.plain.rps", qps, False, goal_ratio=0.9, peer_label="plain URLSession",
    chart_label="3 https /plain", goal_text="≥ 0.9×")

# 4. proxy
row("4", "proxy, wrk -t2 -c50 keep-alive: hostpin proxy vs the nginx relay (proxy_pass, upstream keep-alive, 1 worker)",
    "wrk.hostpin.rps", "wrk.relay.rps", qps, False, goal_ratio=1.0, peer_label="nginx relay",
    chart_label="4 proxy /nginx relay", goal_text="≥ 1.0×")
row("4", "proxy, wrk -t2 -c50 keep-alive: hostpin proxy vs tinyproxy", "wrk.hostpin.rps", "wrk.tinyproxy.rps", qps,
    False, goal_ratio=1.5, peer_label="tinyproxy", chart_label="4 proxy /tinyproxy", goal_text="≥ 1.5×")
row("4", "proxy, wrk -t2 -c50 keep-alive: hostpin proxy vs direct to nginx", "wrk.hostpin.rps", "wrk.direct.rps", qps,
    False, goal_ratio=0.7, peer_label="direct", chart_label="4 proxy /direct", goal_text="≥ 0.7×")
row("4", "256 MiB download through a CONNECT tunnel (hostpin proxy) vs direct", "dl.hostpin.mibs", "dl.direct.mibs",
    mibs, False, goal_ratio=0.8, peer_label="direct", chart_label="4 CONNECT /direct", goal_text="≥ 0.8×")
row("4", "256 MiB download through a CONNECT tunnel: tinyproxy vs direct (peer, for reference)", "dl.tinyproxy.mibs",
    "dl.direct.mibs", mibs, False, peer_label="direct")

# 5. memory
for k in ("memory.rss.kib", "memory.rss.before.kib", "memory.hwm.kib"):
    if k in values:
        values[k.replace(".kib", ".mib")] = [v / 1024 for v in values[k]]
row("5", "resident size (VmRSS) of a process holding 100 000 cached names", "memory.rss.mib", None, mib, True,
    goal_abs=48, chart_label="5 48MiB/RSS", goal_text="≤ 48 MiB")

# 6. cold bulk through encrypted upstreams, each run against a freshly started Unbound
enc_n = meta.get("enc_concurrency", "N")
for t, text in (("doh", "DoH"), ("dot", "DoT")):
    row("6", f"cold bulk via {text} (10 000 names, fresh Unbound): `hostpin lookup --batch --concurrency {enc_n}` "
        f"(whole process) vs `dnsperf -m {t} -q {enc_n} -c 1`", f"enc.hostpin.{t}.qps", f"enc.dnsperf.{t}.qps", qps,
        False, goal_ratio=0.5, peer_label=f"dnsperf -m {t}", chart_label=f"6 {text} /dnsperf", goal_text="≥ 0.5×")
row("6", "cold bulk via plain UDP to the same Unbound: hostpin vs dnsperf (reference)", "enc.hostpin.udp.qps",
    "enc.dnsperf.udp.qps", qps, False, peer_label="dnsperf")
for t, text in (("doh", "DoH"), ("dot", "DoT")):
    row("6", f"HostPin via {text} vs HostPin via plain UDP (what {text} costs, same Unbound, cold)",
        f"enc.hostpin.{t}.qps", "enc.hostpin.udp.qps", qps, False, peer_label="HostPin plain UDP")
for t, text in (("doh", "DoH"), ("dot", "DoT")):
    row("6", f"TLS handshakes for the 10 000 names via {text} (connections opened, counted with strace)",
        f"enc.hostpin.{t}.handshakes", f"enc.dnsperf.{t}.handshakes", count, True, peer_label=f"dnsperf -m {t}",
        with_ratio=False)

# 7. the DNS stub: hostpin serve vs Unbound, warm; cold vs the NSD itself
stub_q, stub_s = meta.get("stub_q", "100"), meta.get("stub_seconds", "?")
us_ = lambda x: f"{x:,.0f} µs"
row("7", f"DNS stub, warm cache: `hostpin serve` vs Unbound, queries/s (`dnsperf -q {stub_q}`, the 10 000 names "
    f"over and over for {stub_s} s)", "stub.warm.hostpin.qps", "stub.warm.unbound.qps", qps, False, goal_ratio=1.0,
    first_bar=0.5, peer_label="Unbound, warm", chart_label="7 stub warm /Unbound", goal_text="≥ 1.0× (first bar 0.5×)")
row("7", f"DNS stub, warm cache: `hostpin serve` vs Unbound with `num-threads: 2` (both cores), queries/s "
    f"(`dnsperf -q {stub_q}`, {stub_s} s)", "stub.warm.hostpin.qps", "stub.warm.unbound2.qps", qps, False, goal_ratio=1.0,
    peer_label="Unbound, 2 threads, warm", chart_label="7 stub warm /Unbound×2", goal_text="≥ 1.0×")
for p in ("50", "99"):
    row("7", f"DNS stub, warm cache: p{p} latency, `hostpin serve` vs Unbound", f"stub.warm.hostpin.p{p}us",
        f"stub.warm.unbound.p{p}us", us_, True, peer_label="Unbound, warm")
row("7", f"DNS stub, cold (fresh process, each of the 10 000 names once: every one a miss): `hostpin serve` vs "
    f"dnsperf straight at the NSD, queries/s (`-q {stub_q}`)", "stub.cold.hostpin.qps", "stub.nsd.qps", qps, False,
    peer_label="the NSD itself")
row("7", "DNS stub, cold: `hostpin serve` vs Unbound (fresh process, same names; reference)", "stub.cold.hostpin.qps",
    "stub.cold.unbound.qps", qps, False, peer_label="Unbound, cold")

# 8. waits on the network with and without refresh-ahead (both sides HostPin: a count, no ratio)
r_names = f'{int(meta.get("refresh_names", "1000")):,}'
r_seconds = meta.get("refresh_seconds", "10")
row("8", f"lookups that waited on the network after warm-up ({r_names} names with TTL 1 s asked in a loop for "
    f"{r_seconds} s by 8 tasks): refresh-ahead on (0.8) vs off", "refresh.on.waits", "refresh.off.waits", count, True,
    goal_abs=0, peer_label="refresh-ahead off", goal_text="0 with refresh-ahead", with_ratio=False)
row("8", "the same, from one TTL (1 s) into the loop", "refresh.on.waits.late", "refresh.off.waits.late", count, True,
    peer_label="refresh-ahead off", with_ratio=False)
row("8", "the same: lookups per second, all 8 tasks", "refresh.on.lookups.per.s", "refresh.off.lookups.per.s", qps,
    False, peer_label="refresh-ahead off")

# 9. DNSSEC: the signed sbench.test (the 10 000 names of bench.test), HostPin validating vs a validating
# Unbound (cold) and vs HostPin --dnssec off (cold and warm)
row("9", f"cold bulk of the 10 000 names signed (`sbench.test`), validating: `hostpin lookup --batch --concurrency "
    f"{enc_n}` (whole process) vs dnsperf `-q {enc_n}` through a fresh Unbound validating from the same anchor",
    "dnssec.lookup.validate.qps", "dnssec.unbound.qps", qps, False, goal_ratio=1.0,
    peer_label="validating Unbound, cold", chart_label="9 validating cold /Unbound", goal_text="≥ 1.0×")
row("9", f"what validation costs, cold: `hostpin lookup --batch --concurrency {enc_n}` validating vs `--dnssec off`, "
    "the same names", "dnssec.lookup.validate.qps", "dnssec.lookup.off.qps", qps, False, peer_label="HostPin --dnssec off")
row("9", f"what validation costs, warm: `hostpin serve` validating vs `--dnssec off`, queries/s (`dnsperf -q {stub_q}`, "
    f"the names over and over for {stub_s} s; a hit costs nothing extra)", "dnssec.stub.warm.validate.qps",
    "dnssec.stub.warm.off.qps", qps, False, goal_ratio=0.9, peer_label="HostPin --dnssec off, warm",
    chart_label="9 validating warm /off", goal_text="≥ 0.9× (noise)")
row("9", "what validation costs, stub cold: `hostpin serve` validating vs `--dnssec off` (fresh process, each name "
    "once)", "dnssec.stub.cold.validate.qps", "dnssec.stub.cold.off.qps", qps, False,
    peer_label="HostPin --dnssec off, cold")

# ------------------------------------------------------------------ RESULTS.md

def m(key, fmt, default="—"):
    v = med(key)
    return fmt(v) if v is not None else default


us = lambda x: f"{x:,.0f} µs"
lines = []
lines.append("# HostPin benchmarks — results\n")
if partial:
    lines.append(f"**Partial run: item{'s' if len(items) > 1 else ''} {', '.join(items)} only** — this report stays "
                 "in `Benchmarks/.state/run/`; the committed results come from a whole run.\n")
lines.append(f"Written by `Benchmarks/run` on {meta.get('date')}; {meta.get('rounds')} rounds, every comparison's two "
             f"sides measured in the same round. Medians over the rounds; spread is min–max over the rounds "
             f"(HostPin / peer); ratio > 1 means HostPin is better (for times: peer ÷ HostPin, for rates: "
             f"HostPin ÷ peer). What each row measures and how: [README.md](README.md). Chart: "
             f"[results.svg](results.svg).\n")
lines.append("## Machine\n")
lines.append(f"- {meta.get('nproc')} CPUs: {meta.get('cpu')}; memory {meta.get('memory')}")
lines.append(f"- {meta.get('os')}, kernel {meta.get('kernel')}")
lines.append(f"- {meta.get('swift')}; HostPin at `{meta.get('commit')}` (release build)")
lines.append(f"- peers: {meta.get('versions')}")
lines.append(f"- load average (1/5/15 min): {meta.get('load')} — other work on the machine shares its CPUs; "
             "absolute figures move with it, the same-round ratios much less")
lines.append(f"- run time {int(meta.get('run_seconds', 0)) // 60} min {int(meta.get('run_seconds', 0)) % 60} s "
             f"(build {meta.get('build_seconds')} s of it)\n")
lines.append("## Table\n")
lines.append("| # | comparison | HostPin median | peer median | spread (HostPin / peer) | ratio | goal | met? |")
lines.append("|---|---|---|---|---|---|---|---|")
for r in rows:
    lines.append("| " + " | ".join(r) + " |")
lines.append("")

lines.append("## Details\n")
if "1" in items:
    lines.append("**1. Unbound, one query at a time** (blocking `recv` on a connected UDP socket, prebuilt query, "
                 f"5 000 queries per round after 200 warm-up): p50 {m('unbound.p50', ns)}, p90 {m('unbound.p90', ns)}, "
                 f"p99 {m('unbound.p99', ns)}.\n")
if "2" in items:
    lines.append("**2. Cold resolution sweep** (10 000 distinct names of `bench.test` on the benchmark's NSD, "
                 "`--family 4`: one A query per name; every run a fresh process, so a cold cache):\n")
    lines.append("| client | median | spread |")
    lines.append("|---|---|---|")
    lines.append(f"| dnsperf -q 50 -n 1, its own figure | {m('dnsperf.qps', qps)} | {spread('dnsperf.qps', qps)} |")
    lines.append(f"| dnsperf, whole process wall clock | {m('dnsperf.wallqps', qps)} | {spread('dnsperf.wallqps', qps)} |")
    for n in sweep:
        lines.append(f"| hostpin lookup --batch --concurrency {n}, whole process | {m(f'lookup.c{n}.qps', qps)} | "
                     f"{spread(f'lookup.c{n}.qps', qps)} |")
    st = med("hostpin.startup.ms")
    if st is not None and best is not None:
        wall = 10_000 / best
        net = wall - st / 1000
        lines.append(f"| hostpin, start-up ({st:.0f} ms for a one-name batch) subtracted, best N | "
                     f"{qps(10_000 / net) if net > 0 else '—'} | |")
    for key, text in (("adnshost.pipe", "adnshost -a -f, whole file on standard input"),
                      ("adnshost.window", f"adnshost -a -f, fed {bulk_n} at a time"),
                      ("aiodns", f"asyncio + aiodns, {bulk_n} in flight")):
        if values.get(f"{key}.qps"):
            lines.append(f"| {text}, answered names / whole process | {m(f'{key}.qps', qps)} | "
                         f"{spread(f'{key}.qps', qps)} (answered {spread(f'{key}.answered', count)}) |")
    lines.append("")
    scale = [int(n) for n in meta.get("scale", "").split()]
    if scale and any(values.get(f"scale.hostpin.{n}.seconds") for n in scale):
        lines.append(f"Growth (`Benchmarks/scaling/bulk.tsv`): wall time of the whole process, hostpin "
                     f"`--concurrency {bulk_n}` vs dnsperf `-q 50`:\n")
        lines.append("| names | hostpin | dnsperf | hostpin names/s | dnsperf names/s |")
        lines.append("|---|---|---|---|---|")
        for n in scale:
            h, d = med(f"scale.hostpin.{n}.seconds"), med(f"scale.dnsperf.{n}.seconds")
            cells = [f"{x:.3f} s" if x else "—" for x in (h, d)] + [qps(n / x) if x else "—" for x in (h, d)]
            lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
        lines.append("")
if "3" in items:
    lines.append("**3. Interceptor** (`HostPinBench http`: 8 tasks each awaiting `URLSession.data(for:)` back to back, "
                 f"1 s warm-up then {meta.get('http_seconds')} s; CPU = getrusage user+system of the client process "
                 "÷ requests):\n")
    lines.append("| side | req/s | p50 | p99 | CPU per request |")
    lines.append("|---|---|---|---|---|")
    for key, text in (("http.plain", "plain URLSession → http://127.0.0.10 (IP)"),
                      ("http.pinned", "pinned URLSession → http://www.example.test"),
                      ("http.observed", "pinned URLSession with an observer set → http://www.example.test"),
                      ("http.pinnedcurl", "pinned, plainHTTP: .libcurl → http://www.example.test"),
                      ("https.plain", "plain URLSession → https://localhost (lab CA via the system bundle path)"),
                      ("https.pinned", "pinned URLSession → https://www.example.test (libcurl, extraCAFile)")):
        lines.append(f"| {text} | {m(key + '.rps', qps)} | {m(key + '.p50us', us)} | {m(key + '.p99us', us)} | "
                     f"{m(key + '.cpuus', us)} |")
    lines.append("")
if "4" in items:
    lines.append(f"**4. Proxy** (`wrk -t2 -c50 -d{meta.get('wrk_seconds')}s --latency`, keep-alive, GET /whoami):\n")
    lines.append("| path | req/s | p50 | p99 | non-2xx | socket errors |")
    lines.append("|---|---|---|---|---|---|")
    for key, text in (("wrk.direct", "direct to nginx 127.0.0.10"),
                      ("wrk.hostpin", "through hostpin proxy (absolute-form, name resolved and pinned)"),
                      ("wrk.relay", "through the nginx relay (absolute-form, proxy_pass to 127.0.0.10, upstream keep-alive, 1 worker)"),
                      ("wrk.tinyproxy", "through tinyproxy (absolute-form, IP)")):
        lines.append(f"| {text} | {m(key + '.rps', qps)} | {m(key + '.p50us', us)} | {m(key + '.p99us', us)} | "
                     f"{m(key + '.non2xx', lambda x: f'{x:.0f}')} | {m(key + '.sockerr', lambda x: f'{x:.0f}')} |")
    lines.append("")
    lines.append(f"256 MiB download (curl, HTTP inside the tunnel): direct {m('dl.direct.mibs', mibs)}, "
                 f"CONNECT through hostpin proxy {m('dl.hostpin.mibs', mibs)}, through tinyproxy {m('dl.tinyproxy.mibs', mibs)}.\n")
if "5" in items:
    lines.append(f"**5. Memory**: VmRSS before filling {m('memory.rss.before.mib', mib)}, after 100 000 names "
                 f"{m('memory.rss.mib', mib)} (peak VmHWM {m('memory.hwm.mib', mib)}).\n")
if "6" in items:
    lines.append(f"**6. Cold bulk through plain DNS, DoH and DoT** (the 10 000 names of `bench.test`, each run "
                 f"against an Unbound started afresh: its cache cold for every name; {enc_n} queries in flight on both "
                 "sides, one connection each; HostPin verifies the certificate against the lab CA, dnsperf verifies "
                 "nothing; handshakes: connect(2) calls to the server's port in one further, untimed run):\n")
    lines.append("| client, transport | own figure | spread | whole process | TLS handshakes |")
    lines.append("|---|---|---|---|---|")
    for side, side_text in (("hostpin", f"hostpin lookup --batch --concurrency {enc_n}"),
                            ("dnsperf", f"dnsperf -q {enc_n} -c 1")):
        for t, text in (("udp", "plain UDP"), ("doh", "DoH (POST, HTTP/2)"), ("dot", "DoT")):
            key = f"enc.{side}.{t}"
            hs = m(key + ".handshakes", count) if t != "udp" else "—"
            lines.append(f"| {side_text}, {text} | {m(key + '.qps', qps)} | {spread(key + '.qps', qps)} | "
                         f"{m(key + '.wallqps', qps)} | {hs} |")
    lines.append("")
if "7" in items:
    lines.append(f"**7. The DNS stub** (`dnsperf -q {stub_q} -v`, every answer's latency read from its output; one "
                 "process per server, started afresh for the cold run, whose answers leave its cache warm for the "
                 f"warm run of {stub_s} s; server CPU = its user + system time during the run ÷ answers, all "
                 "threads):\n")
    lines.append("| server, cache | queries/s | spread | p50 | p99 | lost | server CPU per answer |")
    lines.append("|---|---|---|---|---|---|---|")
    for key, text in (("stub.warm.hostpin", "`hostpin serve`, warm"), ("stub.warm.unbound", "Unbound (1 thread), warm"),
                      ("stub.warm.unbound2", "Unbound (2 threads), warm"),
                      ("stub.cold.hostpin", "`hostpin serve`, cold"), ("stub.cold.unbound", "Unbound, cold"),
                      ("stub.nsd", "NSD (the upstream) itself")):
        lines.append(f"| {text} | {m(key + '.qps', qps)} | {spread(key + '.qps', qps)} | {m(key + '.p50us', us)} | "
                     f"{m(key + '.p99us', us)} | {m(key + '.lost', count)} | "
                     f"{m(key + '.cpuus', lambda x: f'{x:,.1f} µs')} |")
    lines.append("")
if "8" in items:
    lines.append(f"**8. Waits on the network** (`HostPinBench refresh`: {r_names} names `rNNNN.refresh.test` with TTL "
                 "1 s on the benchmark's NSD, resolved once (warm-up), then asked by 8 tasks in a loop for "
                 f"{r_seconds} s through one `CachingResolver` over a `TrustedResolver`, library defaults but "
                 "refresh-ahead; each lookup is `resolveDetailed` and counts as a wait when its answer came from "
                 "`upstream` — the caller waited for a resolution, its own or one it joined — or it failed; every "
                 "task yields every 64 lookups):\n")
    lines.append("| refresh-ahead | lookups | waits | waits after 1 s | stale | failures | refreshes | longest lookup |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for mode, text in (("on", "on (0.8 of the TTL)"), ("off", "off")):
        key = f"refresh.{mode}"
        lines.append(f"| {text} | {m(key + '.lookups', count)} | {m(key + '.waits', count)} | "
                     f"{m(key + '.waits.late', count)} | {m(key + '.stale', count)} | {m(key + '.failures', count)} | "
                     f"{m(key + '.refreshes', count)} | {m(key + '.longest.us', us)} |")
    lines.append("")
if "9" in items:
    lines.append(f"**9. DNSSEC validation** (`sbench.test`: the 10 000 names of `bench.test` in a zone signed with "
                 "ldns-signzone, ECDSA P-256, NSEC, on the benchmark's NSD; the trust anchor, for both sides, the DS of "
                 f"its key-signing key; cold runs: {enc_n} in flight, a fresh process or a fresh Unbound each; "
                 f"stub runs: `dnsperf -q {stub_q}` as item 7; validated answers: "
                 f"{m('dnssec.lookup.validate.secure', count)} of 10 000 secure):\n")
    lines.append("| client or server | queries/s | spread | p50 | server CPU per answer |")
    lines.append("|---|---|---|---|---|")
    for key, text in (("dnssec.lookup.validate", "hostpin lookup --batch, validating, cold"),
                      ("dnssec.lookup.off", "hostpin lookup --batch, --dnssec off, cold"),
                      ("dnssec.unbound", "dnsperf through Unbound (validator iterator), cold"),
                      ("dnssec.stub.cold.validate", "`hostpin serve`, validating, cold"),
                      ("dnssec.stub.cold.off", "`hostpin serve`, --dnssec off, cold"),
                      ("dnssec.stub.warm.validate", "`hostpin serve`, validating, warm"),
                      ("dnssec.stub.warm.off", "`hostpin serve`, --dnssec off, warm")):
        lines.append(f"| {text} | {m(key + '.qps', qps)} | {spread(key + '.qps', qps)} | {m(key + '.p50us', us)} | "
                     f"{m(key + '.cpuus', lambda x: f'{x:,.1f} µs')} |")
    lines.append("")
if notes:
    lines.append("## Notes from this run\n")
    for n in notes:
        lines.append(f"- {n}")
    lines.append("")
with open(os.path.join(out_dir, "RESULTS.md"), "w") as f:
    f.write("\n".join(lines))

# ------------------------------------------------------------------ chart

dat = os.path.join(run_dir, "results.dat")
with open(dat, "w") as f:
    for i, (label, ratio, goal, ok) in enumerate(chart):
        f.write(f'{i}\t"{label}"\t{ratio:.6g}\t{goal:.6g}\t{0x2ca02c if ok else 0xd62728}\n')
if chart:
    lo = min(min(r, g) for _, r, g, _ in chart)
    hi = max(max(r, g) for _, r, g, _ in chart)
    gp = f"""
set terminal svg size 1100,620 dynamic enhanced font 'sans,11' background rgb 'white'
set output '{os.path.join(out_dir, "results.svg")}'
set title "HostPin vs peers: measured ratio (bar; green = goal met, red = missed) and goal (black mark)\\n{meta.get('date')}, {meta.get('nproc')} CPUs, {meta.get('rounds')} rounds, medians"
set logscale y
set yrange [{10 ** math.floor(math.log10(lo * 0.5))}:{10 ** math.ceil(math.log10(hi * 2))}]
set ylabel "ratio (> 1: HostPin better; limit / value for limits)"
set xrange [-0.6:{len(chart) - 0.4}]
set xtics rotate by -40 left font ',9' nomirror
set grid ytics
set key top right
set boxwidth 0.6
set style fill solid 0.75 border -1
set bmargin 7
set rmargin 8
plot '{dat}' using 1:3:($5):xtic(2) with boxes lc rgb variable notitle, \\
     '' using 1:4 with points pt 9 ps 1.6 lc rgb 'black' title 'goal', \\
     '' using 1:3:(sprintf('%.3g', $3)) with labels offset 0,0.8 font ',8' notitle
"""
    gpf = os.path.join(run_dir, "results.gp")
    with open(gpf, "w") as f:
        f.write(gp)
    subprocess.run(["gnuplot", gpf], check=True)
print(os.path.join(out_dir, "RESULTS.md"))
