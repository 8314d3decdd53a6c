#!/usr/bin/env python3
"""Plot cost-sweep.sh's TSV as an SVG: instructions against NCPU, stock vs series.

One column per kind (VMID, ASID); rows: the rollover (log2 x, log10 y: a
linear cost has slope 1 at large NCPU), the fast path (log2 x, linear y)
and the series/stock ratios of both (a dashed line at 1.0). The SVG is
written by hand (no matplotlib needed).

Usage: cost-plot.py SWEEP.tsv OUT.svg
Input columns: size kind variant fastpath_ir rollover_ir [...], variant
stock|series. Exit 1 on a missing column, a non-positive count or no data.
"""
import csv
import math
import sys

COLORS = {"stock": "#c0392b", "series": "#1f5fa8"}
MARKERS = {"stock": "square", "series": "circle"}
PW, PH = 380, 230           # plot area of one panel
ML, MR, MT, MB = 78, 20, 34, 46  # panel margins
TITLE_H, LEGEND_H = 40, 30


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    t = math.floor(lo / step) * step
    out = []
    while t <= hi + step * 1e-9:
        out.append(round(t, 10))
        t += step
    return out


def fmt(v):
    if v >= 1e6:
        return "%gM" % (v / 1e6)
    if v >= 1e4:
        return "%gk" % (v / 1e3)
    return "%g" % v


class Panel:
    def __init__(self, x0, y0, title, xs, ylabel, logy=False, ylo=None, yhi=None):
        self.x0, self.y0, self.title, self.ylabel, self.logy = x0, y0, title, ylabel, logy
        self.xlo, self.xhi = math.log2(min(xs)) - 0.3, math.log2(max(xs)) + 0.3
        self.xs = xs
        self.ylo, self.yhi = ylo, yhi
        self.out = []

    def px(self, x):
        return self.x0 + ML + (math.log2(x) - self.xlo) / (self.xhi - self.xlo) * PW

    def py(self, y):
        if self.logy:
            y, lo, hi = math.log10(y), math.log10(self.ylo), math.log10(self.yhi)
        else:
            lo, hi = self.ylo, self.yhi
        return self.y0 + MT + PH - (y - lo) / (hi - lo) * PH

    def frame(self):
        o, x0, y0 = self.out, self.x0 + ML, self.y0 + MT
        o.append('<text x="%g" y="%g" font-size="13" font-weight="bold">%s</text>'
                 % (x0, self.y0 + 20, esc(self.title)))
        if self.logy:
            ticks = [10 ** e * m for e in range(int(math.floor(math.log10(self.ylo))),
                                                 int(math.ceil(math.log10(self.yhi))) + 1)
                     for m in (1, 2, 5) if self.ylo <= 10 ** e * m <= self.yhi]
        else:
            ticks = [t for t in nice_ticks(self.ylo, self.yhi) if self.ylo <= t <= self.yhi]
        for t in ticks:
            y = self.py(t)
            o.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>' % (x0, y, x0 + PW, y))
            o.append('<text x="%g" y="%.1f" font-size="10" text-anchor="end">%s</text>'
                     % (x0 - 5, y + 3.5, fmt(t)))
        for x in self.xs:
            X = self.px(x)
            o.append('<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/>' % (X, y0, X, y0 + PH))
            o.append('<text x="%.1f" y="%g" font-size="10" text-anchor="middle">%d</text>'
                     % (X, y0 + PH + 14, x))
        o.append('<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>'
                 % (x0, y0, PW, PH))
        o.append('<text x="%g" y="%g" font-size="11" text-anchor="middle">NCPU (possible CPUs, log2)</text>'
                 % (x0 + PW / 2, y0 + PH + 32))
        o.append('<text x="%g" y="%g" font-size="11" text-anchor="middle" '
                 'transform="rotate(-90 %g %g)">%s</text>'
                 % (self.x0 + 16, y0 + PH / 2, self.x0 + 16, y0 + PH / 2, esc(self.ylabel)))

    def hline(self, y, label):
        Y = self.py(y)
        self.out.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#000" '
                        'stroke-dasharray="5,4"/>' % (self.x0 + ML, Y, self.x0 + ML + PW, Y))
        self.out.append('<text x="%g" y="%.1f" font-size="9">%s</text>'
                        % (self.x0 + ML + PW - 22, Y - 3, esc(label)))

    def series(self, pts, color, marker, dash=None):
        pts = sorted(pts)
        path = " ".join("%.1f,%.1f" % (self.px(x), self.py(y)) for x, y in pts)
        self.out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>'
                        % (path, color, ' stroke-dasharray="%s"' % dash if dash else ""))
        for x, y in pts:
            X, Y = self.px(x), self.py(y)
            if marker == "square":
                self.out.append('<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>'
                                % (X - 3.5, Y - 3.5, color))
            elif marker == "triangle":
                self.out.append('<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>'
                                % (X, Y - 4.5, X - 4, Y + 3, X + 4, Y + 3, color))
            else:
                self.out.append('<circle cx="%.1f" cy="%.1f" r="3.8" fill="%s"/>' % (X, Y, color))


def load(path):
    data = {}
    with open(path, newline="") as f:
        rd = csv.DictReader(f, delimiter="\t")
        need = {"size", "kind", "variant", "fastpath_ir", "rollover_ir"}
        if not rd.fieldnames or not need <= set(rd.fieldnames):
            raise ValueError("%s: columns %s needed, have %s" % (path, sorted(need), rd.fieldnames))
        for row in rd:
            n, fp, ro = int(row["size"]), float(row["fastpath_ir"]), float(row["rollover_ir"])
            if n <= 0 or fp <= 0 or ro <= 0:
                raise ValueError("%s: non-positive value in %s" % (path, row))
            data.setdefault(row["kind"], {}).setdefault(row["variant"], {})[n] = (fp, ro)
    if not data:
        raise ValueError("%s: no rows" % path)
    return data


def main():
    if len(sys.argv) != 3:
        print(__doc__[__doc__.index("Usage:"):].split("\n")[0], file=sys.stderr)
        return 1
    try:
        data = load(sys.argv[1])
    except (OSError, ValueError, KeyError) as e:
        print("E: cost-plot: %s" % e, file=sys.stderr)
        return 1
    kinds = [k for k in ("vmid", "asid") if k in data] + sorted(set(data) - {"vmid", "asid"})
    cw, rh = ML + PW + MR, MT + PH + MB
    width, height = cw * len(kinds) + 10, TITLE_H + 3 * rh + LEGEND_H
    body = []
    for ci, k in enumerate(kinds):
        vs = data[k]
        xs = sorted({n for v in vs.values() for n in v})
        x0 = 5 + ci * cw
        ro = [r for v in vs.values() for _, r in v.values()]
        p = Panel(x0, TITLE_H, "%s rollover (instructions per rollover)" % k.upper(), xs,
                  "Ir per rollover (log10)", logy=True,
                  ylo=10 ** math.floor(math.log10(min(ro))), yhi=10 ** math.ceil(math.log10(max(ro))))
        p.frame()
        for v in ("stock", "series"):
            if v in vs:
                p.series([(n, vs[v][n][1]) for n in vs[v]], COLORS[v], MARKERS[v])
        body += p.out
        fp = [f for v in vs.values() for f, _ in v.values()]
        p = Panel(x0, TITLE_H + rh, "%s fast path (instructions per call)" % k.upper(), xs,
                  "Ir per call", ylo=0, yhi=max(fp) * 1.25)
        p.frame()
        for v in ("stock", "series"):
            if v in vs:
                p.series([(n, vs[v][n][0]) for n in vs[v]], COLORS[v], MARKERS[v])
        body += p.out
        if "stock" in vs and "series" in vs:
            common = sorted(set(vs["stock"]) & set(vs["series"]))
            rr = [(n, vs["series"][n][1] / vs["stock"][n][1]) for n in common]
            fr = [(n, vs["series"][n][0] / vs["stock"][n][0]) for n in common]
            ys = [y for _, y in rr + fr] + [1.0]
            pad = max((max(ys) - min(ys)) * 0.15, 0.05)
            p = Panel(x0, TITLE_H + 2 * rh, "%s series / stock" % k.upper(), xs,
                      "ratio (below 1: series cheaper)", ylo=max(0, min(ys) - pad),
                      yhi=max(ys) + pad)
            p.frame()
            p.hline(1.0, "1.0")
            p.series(rr, "#6c3483", "triangle")
            p.series(fr, "#117a65", "circle", dash="6,3")
            body += p.out
    legend = []
    lx, ly = 15, height - LEGEND_H + 12
    for label, color, marker, dash in (("stock", COLORS["stock"], "square", None),
                                       ("series", COLORS["series"], "circle", None),
                                       ("rollover series/stock", "#6c3483", "triangle", None),
                                       ("fast path series/stock", "#117a65", "circle", "6,3")):
        legend.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                      % (lx, ly, lx + 26, ly, color, ' stroke-dasharray="%s"' % dash if dash else ""))
        legend.append('<text x="%d" y="%d" font-size="11">%s</text>' % (lx + 32, ly + 4, esc(label)))
        lx += 60 + 7 * len(label)
    svg = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="15" font-weight="bold" text-anchor="middle">'
           'Allocator instructions against NCPU: stock vs series (callgrind, x86-64 Ir of '
           'the shimmed C)</text>' % (width // 2)] + body + legend + ["</svg>"]
    try:
        with open(sys.argv[2], "w") as f:
            f.write("\n".join(svg) + "\n")
    except OSError as e:
        print("E: cost-plot: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
