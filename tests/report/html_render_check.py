#!/usr/bin/env python3
"""`mtperf report` looked at: each kind of document rendered by headless Chromium.

For a run (rr and a 2-flow stream), a compare, a flows sweep (the real binary's output on
loopback), a suite (tests/fixtures/report/suite_trimmed.json: a real suite's document, its
reports trimmed to the fields the report reads) and a fleet of 1,024 ranks (big_fleet_doc.py:
its heatmap a raster image), this renders `mtperf report` to a PNG and checks:

- Chromium parsed the SVG: the DOM it dumps holds as many <svg>, <rect>, <polyline>, <circle>
  and <image> elements as the page mtperf wrote (and at least the ones each kind needs);
- the screenshot is not blank: enough non-white pixels, many colours, and the charts' own
  colours (the palette's fills and strokes; the fleet's slow rank in the heatmap's red) drawn.

The pages and screenshots stay in OUT_DIR (default: ./html_render) to be looked at.
Without chromium it says why and exits 77, which ctest reports as skipped.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from big_fleet_doc import big_fleet_doc

SKIP = 77
# The palette of report/charts.cpp: light fills and their strokes.
PALETTE = [(0xA6, 0xCE, 0xE3), (0x1F, 0x78, 0xB4), (0xFD, 0xBF, 0x6F), (0xE6, 0x61, 0x01),
           (0xB2, 0xDF, 0x8A), (0x33, 0xA0, 0x2C), (0xCA, 0xB2, 0xD6), (0x6A, 0x3D, 0x9A),
           (0xD9, 0xD9, 0xD9), (0x73, 0x73, 0x73), (0xFB, 0x9A, 0x99)]
# Pages whose charts are drawn in other colours: the fleet heatmap's red (half the best pair or
# worse: the slow rank's pairs).
COLOURS = {"fleet_1024": [(0xD7, 0x30, 0x27)]}


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: PNG depth {depth} colour type {colour}, expected 8-bit RGB(A)")
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, rows, at = bytearray(stride), [], 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def look_at(png, colours=PALETTE):
    """Problems with the screenshot; empty when it shows charts (some of `colours` drawn)."""
    width, height, rows = png_pixels(png)
    counts = {}
    for row in rows[::2]:  # every other row is plenty
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    white = counts.get((255, 255, 255), 0)
    problems = []
    if total - white < total * 0.01:
        problems.append(f"{png}: blank ({total - white} of {total} pixels not white)")
    if len(counts) < 16:
        problems.append(f"{png}: only {len(counts)} colours")
    drawn = [c for c in colours if counts.get(c, 0) >= 20]
    if not drawn:
        problems.append(f"{png}: none of the charts' colours drawn")
    print(f"  {png}: {width}x{height}, {100 * (total - white) / total:.1f}% not white, "
          f"{len(counts)} colours, {len(drawn)} palette colours")
    return problems


def elements(markup):
    return {tag: len(re.findall(rf"<{tag}[\s>/]", markup))
            for tag in ("svg", "rect", "polyline", "circle", "image")}


def chromium(browser, profile, *args):
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def documents(mtperf, fixtures, work):
    """name -> (path, the least of each element the page must hold)."""
    runs = {
        "run_rr": ["run", "-w", "rr", "-l", "0.3", "--warmup", "0.1"],
        "run_stream": ["run", "-w", "stream", "-P", "2", "-l", "0.3", "--warmup", "0.1"],
        "compare": ["compare", "-T", "socket,socket", "-w", "stream,rr", "-i", "2", "-l", "0.2"],
        "sweep_flows": ["sweep", "--flows", "1,2", "-w", "rr", "-l", "0.2"],
    }
    needs = {
        "run_rr": {"svg": 3, "polyline": 2, "rect": 3, "circle": 6},
        "run_stream": {"svg": 2, "rect": 4},
        "compare": {"svg": 2, "rect": 4},
        "sweep_flows": {"svg": 1, "polyline": 3},
        "suite": {"svg": 2, "rect": 8},
    }
    out = {}
    for name, args in runs.items():
        path = os.path.join(work, name + ".json")
        # This check is about the pages, not the measurement (the run, compare and sweep tests
        # check those): a run that fails is reported here with its errors and tried once more.
        for attempt in (1, 2):
            with open(path, "w") as f:
                r = subprocess.run([mtperf, *args, "--format", "json"], stdout=f,
                                   stderr=subprocess.PIPE, text=True, timeout=120)
            if r.returncode == 0:
                break
            failure = f"mtperf {' '.join(args)}: exit {r.returncode}: {r.stderr}"
            if attempt == 2:
                raise RuntimeError(failure)
            print(f"html_render_check: {failure}; once more", file=sys.stderr)
        out[name] = (path, needs[name])
    out["suite"] = (os.path.join(fixtures, "suite_trimmed.json"), needs["suite"])
    # A fleet of 1,024 ranks in 32 groups: the heatmap one raster <image> (report/html_fleet.cpp),
    # its slow rank's row and column in the heatmap's red, which must survive the page's scaling.
    fleet = os.path.join(work, "fleet_1024.json")
    with open(fleet, "w") as f:
        json.dump(big_fleet_doc(1024, 32), f)
    out["fleet_1024"] = (fleet, {"svg": 2, "image": 1})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mtperf", required=True)
    ap.add_argument("--fixtures", required=True, help="tests/fixtures/report")
    ap.add_argument("--out", default="html_render")
    a = ap.parse_args()
    browser = shutil.which("chromium")
    if browser is None:
        print("SKIPPED: chromium is not installed (Debian: apt-get install chromium)")
        return SKIP
    os.makedirs(a.out, exist_ok=True)
    problems = []
    with tempfile.TemporaryDirectory(prefix="mtperf-html-") as work:
        profile = os.path.join(work, "profile")
        for name, (doc, need) in documents(a.mtperf, a.fixtures, work).items():
            page = os.path.abspath(os.path.join(a.out, name + ".html"))
            png = os.path.abspath(os.path.join(a.out, name + ".png"))
            r = subprocess.run([a.mtperf, "report", doc, "-o", page], capture_output=True,
                               text=True, timeout=60)
            if r.returncode != 0:
                problems.append(f"mtperf report {doc}: exit {r.returncode}: {r.stderr}")
                continue
            written = elements(open(page, encoding="utf-8").read())
            dom = chromium(browser, profile, "--dump-dom", "file://" + page)
            parsed = elements(dom.stdout)
            print(f"{name}: written {written}, parsed by chromium {parsed}")
            if parsed != written:
                problems.append(f"{name}: chromium parsed {parsed}, the page has {written}")
            for tag, least in need.items():
                if parsed[tag] < least:
                    problems.append(f"{name}: {parsed[tag]} <{tag}> elements, expected {least}+")
            if os.path.exists(png):
                os.remove(png)
            shot = chromium(browser, profile, f"--screenshot={png}", "--window-size=1100,1800",
                            "file://" + page)
            if not os.path.exists(png):
                problems.append(f"{name}: no screenshot (chromium exit {shot.returncode}): "
                                f"{shot.stderr[-500:]}")
                continue
            problems += look_at(png, COLOURS.get(name, PALETTE))
    for p in problems:
        print("FAILED:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
