#!/usr/bin/env python3
"""The pages of `classify serve` in a real browser: Debian's headless Chromium, driven by Playwright.

Starts `classify serve --port 0`, then on the draw page draws a star and a zigzag with the mouse (Chromium turns
it into pointer events, as from a person) and reads "star" and "unknown" from the page; draws a square with the
keyboard alone; checks the page at 200% text size has nothing cut off at the side; on the motion page opens a
recording that walks and then stands still and reads both states, in that order, from the timeline; serves models
trained on other classes and states (--weights) and reads their classes in the draw page's prompt and the motion
page's legend; on a phone (375 x 667) keeps the answer in sight, a drawing whole across a turn of the phone, and
the motion page without sideways scrolling. Screenshots of
both pages go to --screenshots (the README's are taken this way: --screenshots docs/images).

Run alone: make browser-test (it installs chromium and a venv with playwright in .build-browser when missing), or
  .build-browser/venv/bin/python scripts/browser_test.py --classify .build/debug/classify
Exit 0 when every check holds, 1 otherwise (each failed check is printed).
"""
import argparse
import contextlib
import math
import os
import time
import re
import subprocess
import sys
import tempfile

from playwright.sync_api import expect, sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


def start_server(classify, *options):
    server = subprocess.Popen(
        [classify, "serve", "--port", "0", *options], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    match = re.search(r"(https?://[^/ ]+)/", line)
    if not match:
        server.kill()
        sys.exit(f"classify serve did not start: {line!r} {server.stderr.read()}")
    return server, match.group(1)


def relabelled(dataset, names, out, drawings=None):
    """`dataset` (a path under the repository) written to `out` with its labels renamed by `names`; with
    `drawings`, only the rows of its first that many drawings or sessions."""
    with open(os.path.join(ROOT, dataset)) as source, open(out, "w") as written:
        header = source.readline()
        written.write(header)
        label = header.strip().split(",").index("label")
        seen = set()
        for line in source:
            fields = line.rstrip("\n").split(",")
            seen.add(fields[0])
            if drawings is not None and len(seen) > drawings:
                break
            fields[label] = names.get(fields[label], fields[label])
            written.write(",".join(fields) + "\n")
    return out


@contextlib.contextmanager
def served_model(classify, task, data, prefix):
    """A `task` model trained on `data` for two epochs (at `prefix`), served with --weights: the server's address."""
    subprocess.run([classify, "train", task, "--data", data, "--epochs", "2", "--out", prefix], cwd=ROOT, check=True, capture_output=True)
    server, base = start_server(classify, "--weights", prefix + ".f32.weights")
    try:
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)


def check_other_classes(classify, browser, folder):
    """A model trained on other classes (the bundled test drawings relabelled ring, wedge, box, spark) served with
    --weights: the draw page asks for its classes."""
    data = relabelled("Datasets/shapes/test.csv", {"circle": "ring", "triangle": "wedge", "square": "box", "star": "spark"},
                      os.path.join(folder, "relabelled.csv"), drawings=300)
    with served_model(classify, "shape", data, os.path.join(folder, "other-classes")) as base:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(base + "/")
        labels = page.evaluate("fetch('/v1/models').then(r => r.json()).then(m => m.shape.labels)")
        check(sorted(labels) == ["box", "ring", "spark", "wedge"], f"/v1/models: {labels}")
        wanted = "Draw a " + ", ".join(labels[:-1]) + " or " + labels[-1]
        expect(page.locator("#prompt")).to_have_text(wanted, timeout=10000)
        page.close()

    # A motion model of other states (the bundled test sessions relabelled strolling, sprinting, resting): the
    # legend lists them, each in a colour of its own.
    data = relabelled("Datasets/motion/test.csv", {"walking": "strolling", "running": "sprinting", "still": "resting"},
                      os.path.join(folder, "relabelled-motion.csv"))
    with served_model(classify, "motion", data, os.path.join(folder, "other-states")) as base:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(base + "/motion")
        page.set_input_files("#file", walking_then_still(folder))
        expect(page.locator("#verdict")).not_to_have_text("", timeout=20000)
        expect(page.locator("#legend span")).to_have_count(3, timeout=20000)
        legend = page.locator("#legend span").all_inner_texts()
        check(sorted(legend) == ["resting", "sprinting", "strolling"], f"another model's legend: {legend}")
        colours = page.locator("#legend span i").evaluate_all("nodes => nodes.map(n => n.style.background)")
        check(len(set(colours)) == 3 and "rgb(127, 127, 127)" not in colours, f"another model's colours: {colours}")
        page.close()


def check_phone(browser, base, folder):
    """A phone, 375 x 667: the answer is in sight while drawing; a circle drawn as two halves, the phone turned in
    between, stays one neat circle (the first half keeps its place on the resized pad); the motion page has nothing
    to scroll sideways."""
    page = browser.new_page(viewport={"width": 375, "height": 667}, has_touch=True, is_mobile=True)
    page.goto(base + "/")
    verdict = page.locator("#verdict")

    def half(size, first):
        c, r = size / 2, size * 0.35
        angles = [math.pi * (i / 16 + (0 if first else 1)) for i in range(17)]
        return [[(c + r * math.cos(a), c + r * math.sin(a)) for a in angles]]

    size = page.locator("#pad").bounding_box()["width"]
    draw(page, half(size, True))
    expect(verdict).not_to_have_text("Draw something", timeout=10000)
    box = verdict.bounding_box()
    check(box["y"] + box["height"] <= 667, f"on a phone the answer is at y {box['y']:.0f}–{box['y'] + box['height']:.0f} of 667")
    page.set_viewport_size({"width": 667, "height": 375})
    turned = page.locator("#pad").bounding_box()["width"]
    page.wait_for_timeout(300)
    draw(page, half(turned, False))
    expect(verdict).to_contain_text("circle", timeout=10000)
    neat = re.search(r"([\d.]+)% neat", verdict.inner_text())
    check(turned != size and neat is not None and float(neat.group(1)) >= 80,
          f"a circle in two halves, the phone turned between them (pad {size:.0f} → {turned:.0f} px): {verdict.inner_text()!r}")
    page.goto(base + "/motion")
    page.set_viewport_size({"width": 375, "height": 667})
    page.set_input_files("#file", walking_then_still(folder))
    expect(page.locator("#verdict")).to_contain_text("→", timeout=20000)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    check(overflow <= 0, f"the motion page on a phone is {overflow} px wider than the screen")
    page.close()


def draw(page, strokes):
    """Each stroke as one press, moves and a release of the mouse, in the pad's own coordinates."""
    box = page.locator("#pad").bounding_box()
    for stroke in strokes:
        x, y = stroke[0]
        page.mouse.move(box["x"] + x, box["y"] + y)
        page.mouse.down()
        for x, y in stroke[1:]:
            page.mouse.move(box["x"] + x, box["y"] + y, steps=2)
        page.mouse.up()


def star(size):
    c, r = size / 2, size * 0.38
    tips = [(c + r * math.cos(-math.pi / 2 + 2 * math.pi * k * 2 / 5), c + r * math.sin(-math.pi / 2 + 2 * math.pi * k * 2 / 5))
            for k in range(6)]
    points = []
    for (ax, ay), (bx, by) in zip(tips, tips[1:]):
        # A little wobble, as a hand draws.
        points += [(ax + (bx - ax) * t / 10 + (1.5 if t % 2 else -1.5), ay + (by - ay) * t / 10) for t in range(10)]
    return [points + [tips[-1]]]


def zigzag(size):
    return [[(size * (0.12 + 0.76 * i / 7), size * (0.4 if i % 2 else 0.6)) for i in range(8)]]


def alternating(folder, times):
    """walking.csv and still.csv one after the other, `times` times each: a recording of 2 × times stretches."""
    rows, last = [], -0.02
    for name in ["walking", "still"] * times:
        with open(os.path.join(ROOT, f"Datasets/examples/{name}.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0]
        start = last + 0.02
        for row in lines[1:]:
            last = start + float(row.split(",")[0])
            rows.append(f"{last:.3f}," + row.split(",", 1)[1])
    path = os.path.join(folder, f"alternating-{times}.csv")
    with open(path, "w") as f:
        f.write("\n".join([header] + rows) + "\n")
    return path


def check_motion_words(classify, browser, base, folder):
    """The motion page's words: how many windows said what; a headline of at most six states however often they
    change; a file over --max-body refused before it is sent."""
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    page.goto(base + "/motion")
    page.set_input_files("#file", walking_then_still(folder))
    expect(page.locator("#verdict")).to_contain_text("→", timeout=20000)
    detail = page.locator("#detail").inner_text()
    check(re.match(r"walking-then-still\.csv: walking \d+, still \d+.* of \d+ windows", detail) is not None, f"the tally: {detail!r}")
    page.set_input_files("#file", alternating(folder, 4))
    expect(page.locator("#verdict")).to_contain_text("changes", timeout=20000)
    headline = page.locator("#verdict").inner_text()
    check(headline == "walking → still → walking → … → walking → still, 7 changes", f"eight stretches: {headline!r}")
    page.close()
    server, small = start_server(classify, "--max-body", "100000")
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(small + "/motion")
        page.wait_for_timeout(300)
        page.set_input_files("#file", walking_then_still(folder))
        expect(page.locator("#detail")).to_contain_text("this server reads at most 0.1 MB", timeout=5000)
        page.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def walking_then_still(folder):
    """Datasets/examples/walking.csv, then still.csv with its timestamps moved to follow on."""
    with open(os.path.join(ROOT, "Datasets/examples/walking.csv")) as f:
        walking = f.read().splitlines()
    with open(os.path.join(ROOT, "Datasets/examples/still.csv")) as f:
        still = f.read().splitlines()
    assert walking[0] == still[0], "the two examples have different columns"
    last = float(walking[-1].split(",")[0])
    moved = [f"{last + 0.02 + float(row.split(',')[0]):.3f}," + row.split(",", 1)[1] for row in still[1:]]
    path = os.path.join(folder, "walking-then-still.csv")
    with open(path, "w") as f:
        f.write("\n".join(walking + moved) + "\n")
    return path


# The lowest contrast ratio (WCAG 2 relative luminance) of any visible text's colour against white, the pages'
# background, and that text.
CONTRAST = """() => {
  const luminance = (rgb) => {
    const [r, g, b] = rgb.match(/[0-9.]+/g).slice(0, 3).map(Number).map(v => v / 255)
      .map(c => c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  let worst = [21, ""];
  for (const node of document.querySelectorAll("body *")) {
    const own = [...node.childNodes].some(child => child.nodeType === 3 && child.textContent.trim());
    if (!own || !node.offsetParent || node.closest(".visually-hidden")) continue;
    const ratio = 1.05 / (luminance(getComputedStyle(node).color) + 0.05);
    if (ratio < worst[0]) worst = [ratio, node.textContent.trim().slice(0, 40)];
  }
  return worst;
}"""


# Plays samples to the page as devicemotion events, one every 20 ms; resolves when all are sent.
PLAY_MOTION = """samples => new Promise(done => {
  let i = 0;
  const timer = setInterval(() => {
    if (i >= samples.length) { clearInterval(timer); done(); return; }
    const [ax, ay, az, alpha, beta, gamma] = samples[i++];
    window.dispatchEvent(new DeviceMotionEvent("devicemotion", {
      accelerationIncludingGravity: { x: ax, y: ay, z: az }, rotationRate: { alpha, beta, gamma }, interval: 20 }));
  }, 20);
})"""


# Ten minutes through the live session, on Playwright's clock: an interval of the page's own (mocked) timers
# dispatches one sample every 20 ms, and the test moves the clock on two seconds at a time, waiting for each update.
FEED_MOTION = """samples => {
  let i = 0;
  const timer = setInterval(() => {
    if (i >= samples.length) { clearInterval(timer); return; }
    const [ax, ay, az, alpha, beta, gamma] = samples[i++];
    window.dispatchEvent(new DeviceMotionEvent("devicemotion", {
      accelerationIncludingGravity: { x: ax, y: ay, z: az }, rotationRate: { alpha, beta, gamma }, interval: 20 }));
  }, 20);
}"""


def walking_samples(seconds, name="walking"):
    """The first `seconds` of Datasets/examples/NAME.csv as a browser reports motion: acceleration with gravity
    in m/s² (gravity + userAcceleration, in g, times 9.80665) and the rotation rate in deg/s (alpha about z, beta
    about x, gamma about y)."""
    with open(os.path.join(ROOT, f"Datasets/examples/{name}.csv")) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    column = {name: i for i, name in enumerate(header)}
    samples = []
    for line in lines[1:]:
        v = [float(x) for x in line.split(",")]
        if v[column["timestamp"]] > seconds:
            break
        acc = [9.80665 * (v[column[f"gravity.{a}"]] + v[column[f"userAcceleration.{a}"]]) for a in "xyz"]
        rate = [math.degrees(v[column[f"rotationRate.{a}"]]) for a in "zxy"]
        samples.append(acc + rate)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classify", default=os.path.join(ROOT, ".build/debug/classify"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--screenshots", default=os.path.join(ROOT, ".build-browser/screenshots"))
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    server, base = start_server(args.classify)
    try:
        with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1100, "height": 760})
            page.goto(base + "/")
            verdict = page.locator("#verdict")
            size = page.locator("#pad").bounding_box()["width"]

            draw(page, star(size))
            expect(verdict).not_to_have_text("Draw something", timeout=10000)
            check(verdict.inner_text().startswith("star "), f"a star drawn with the mouse reads {verdict.inner_text()!r}")
            check("neat" in verdict.inner_text(), "the star's answer says how neat it is")
            check(page.locator("#bars li").count() == 5, f"{page.locator('#bars li').count()} confidence bars (5 classes)")
            check(page.locator("#fit").inner_text().startswith("Fitted star"), f"fitted: {page.locator('#fit').inner_text()!r}")
            check(page.locator("#live").get_attribute("aria-live") == "polite", "the answer is in a polite live region")
            check("shape-classifier" in page.locator("#detail").inner_text(), f"model named: {page.locator('#detail').inner_text()!r}")
            page.screenshot(path=os.path.join(args.screenshots, "draw-page.png"))

            page.click("#clear")
            expect(verdict).to_have_text("Draw something")
            draw(page, zigzag(size))
            expect(verdict).not_to_have_text("Draw something", timeout=10000)
            check(verdict.inner_text() == "unknown", f"a zigzag reads {verdict.inner_text()!r}")
            check(page.locator("#fit").inner_text() == "", "no fitted shape for unknown")

            # The keyboard alone: Tab to the pad, arrows move the pen, Space puts it down and lifts it.
            page.click("#clear")
            page.locator("#pad").focus()
            page.keyboard.press("Space")
            for key in ["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp"]:
                for _ in range(14):
                    page.keyboard.press(key)
            page.keyboard.press("Space")
            expect(verdict).not_to_have_text("Draw something", timeout=10000)
            check(verdict.inner_text().startswith("square "), f"a square drawn with the arrow keys reads {verdict.inner_text()!r}")
            prompt = page.locator("#prompt").inner_text()
            check(prompt == "Draw a circle, triangle, square or star", f"the shipped model's prompt: {prompt!r}")
            check_other_classes(args.classify, browser, folder)
            check_phone(browser, base, folder)
            check_motion_words(args.classify, browser, base, folder)

            # Every piece of text against the page: at least 4.5:1 (WCAG AA for body text), here and with the
            # reader's "more contrast" setting.
            for contrast in ("no-preference", "more"):
                page.emulate_media(contrast=contrast)
                worst = page.evaluate(CONTRAST)
                check(worst[0] >= 4.5, f"lowest text contrast ({contrast}): {worst[0]:.1f}:1 for {worst[1]!r}")
            page.emulate_media(contrast="no-preference")

            # 200% text: nothing wider than the window.
            page.evaluate("document.documentElement.style.fontSize = '200%'")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            check(overflow <= 0, f"at 200% text the page is {overflow} px wider than the window")
            page.evaluate("document.documentElement.style.fontSize = ''")

            page.goto(base + "/motion")
            page.set_input_files("#file", walking_then_still(folder))
            expect(page.locator("#verdict")).to_contain_text("→", timeout=20000)
            states = page.locator("#segments tbody tr td:first-child").all_inner_texts()
            check(states[:1] == ["walking"] and "still" in states, f"the timeline's states: {states}")
            bands = page.locator("#chart rect[data-state]").evaluate_all("nodes => nodes.map(n => n.dataset.state)")
            check(bands[:1] == ["walking"] and bands[-1:] == ["still"], f"the chart's bands: {bands}")
            legend = page.locator("#legend span").all_inner_texts()
            check(legend == ["walking", "running", "still"], f"the legend: {legend}")
            page.screenshot(path=os.path.join(args.screenshots, "motion-page.png"), full_page=True)

            # Live: 9 s of the walking example played to the page as devicemotion events at 50 Hz (as a phone's
            # sensors would send them: m/s² with gravity, deg/s), then Stop and Save CSV; the saved file is read back
            # by classify motion.
            page.goto(base + "/motion")
            page.click("#start")
            page.evaluate(PLAY_MOTION, walking_samples(9.0))
            expect(page.locator("#verdict")).to_have_text("walking", timeout=20000)
            live = page.locator("#detail").inner_text()
            check(live.startswith("this phone: now walking"), f"live samples on the timeline: {live!r}")
            page.click("#stop")
            with page.expect_download() as download:
                page.click("#save")
            saved = os.path.join(folder, "saved.csv")
            download.value.save_as(saved)
            with open(saved) as f:
                rows = f.read().splitlines()
            check(rows[0] == "timestamp,acc.x,acc.y,acc.z,gyro.x,gyro.y,gyro.z" and len(rows) > 400,
                  f"Save CSV wrote {len(rows) - 1} samples under {rows[0]!r}")
            read = subprocess.run([args.classify, "motion", saved], cwd=ROOT, capture_output=True, text=True)
            check(read.returncode == 0 and read.stdout.startswith("walking"),
                  f"classify motion reads the saved CSV: {read.stdout.splitlines()[:1]} {read.stderr.strip()[:200]}")

            # Ten minutes live: five of walking, then five still (the examples over and over), on the page's mocked
            # clock; every two seconds an update of only the new samples, each waited for; then Stop.
            page = browser.new_page()
            page.clock.install()
            page.goto(base + "/motion")
            page.click("#start")
            walk, still = walking_samples(1e9), walking_samples(1e9, "still")
            ten = (walk * 20)[:15000] + (still * 20)[:15000]
            page.evaluate(FEED_MOTION, ten)
            started = time.time()
            for tick in range(1, 302):
                page.clock.run_for(2000)
                # Each update sends what arrived since the last: all but the last tick's samples are sent by now (the
                # page drops a sample whose time does not come after the last one's: a few, on the mocked clock).
                due = min(len(ten), 100 * (tick - 1)) - 30
                deadline = time.time() + 20
                while page.evaluate("() => Number(document.body.dataset.liveSent || 0)") < due:
                    if time.time() >= deadline:
                        check(False, f"ten minutes live: {due} samples sent within 20 s of tick {tick}; the page says "
                              f"{page.locator('#detail').inner_text()!r}")
                        break
                    time.sleep(0.005)
            page.click("#stop")
            expect(page.locator("#verdict")).to_contain_text("→", timeout=20000)
            states = page.locator("#segments tbody tr td:first-child").all_inner_texts()
            check(states[:1] == ["walking"] and states[-1:] == ["still"], f"ten minutes live: the timeline's states {states}")
            detail = page.locator("#detail").inner_text()
            windows = int(re.search(r"(\d+) windows", detail).group(1)) if re.search(r"(\d+) windows", detail) else 0
            sent = int(re.search(r"(\d+) samples sent", detail).group(1)) if re.search(r"(\d+) samples sent", detail) else 0
            check(430 <= windows <= 470 and sent >= len(ten) - 30, f"ten minutes live: {detail!r}")
            bands = page.locator("#chart rect[data-state]").evaluate_all("nodes => nodes.map(n => n.dataset.state)")
            check(bands[:1] == ["walking"] and bands[-1:] == ["still"], f"ten minutes live: the chart's bands {bands}")
            print(f"ten minutes of samples through the live page in {time.time() - started:.1f} s: {detail}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print(f"every check held; screenshots in {args.screenshots}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
