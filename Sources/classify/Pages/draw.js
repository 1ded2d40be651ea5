// The draw page: strokes from mouse, touch and pen (Pointer Events) or the keyboard, sent to POST /v1/shape after
// each stroke; the answer, the confidence of each class and the fitted outline shown and announced.
"use strict";
(() => {
  const pad = document.getElementById("pad");
  const context = pad.getContext("2d");
  const verdict = document.getElementById("verdict");
  const detail = document.getElementById("detail");
  const fitLine = document.getElementById("fit");
  const bars = document.getElementById("bars");
  let strokes = [];          // each stroke: [[x, y, t], ...] in CSS pixels of the pad, t in ms
  let current = null;        // the stroke being drawn
  let fitted = null;         // the last answer's fitted outline
  let started = performance.now();
  let keyboardPen = { x: 0, y: 0, down: false, shown: false };
  let request = 0;           // answers to older strokes are dropped
  let padWidth = 0;          // the pad's width the strokes were drawn at, in CSS pixels

  const style = () => getComputedStyle(document.documentElement);
  function size() {
    const ratio = window.devicePixelRatio || 1;
    const width = pad.clientWidth;
    pad.width = Math.round(width * ratio);
    pad.height = Math.round(width * ratio);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    // A new width (a phone turned, a window resized): the drawing keeps its place on the pad, so the next stroke
    // joins it at the same scale; the answer is asked again for the outline's new coordinates.
    const rescaled = padWidth > 0 && width > 0 && width !== padWidth;
    if (rescaled) {
      const k = width / padWidth;
      const scale = (stroke) => stroke.map(([x, y, t]) => [x * k, y * k, t]);
      strokes = strokes.map(scale);
      if (current) current = scale(current);
      keyboardPen = { ...keyboardPen, x: keyboardPen.x * k, y: keyboardPen.y * k };
      fitted = null;
    }
    if (width > 0) padWidth = width;
    if (!keyboardPen.shown) keyboardPen = { x: width / 2, y: width / 2, down: false, shown: false };
    redraw();
    if (rescaled && strokes.length) classify();
  }

  function redraw() {
    const width = pad.clientWidth;
    context.clearRect(0, 0, width, width);
    context.lineCap = "round";
    context.lineJoin = "round";
    context.strokeStyle = style().getPropertyValue("--ink").trim() || "black";
    context.lineWidth = 3;
    for (const stroke of strokes.concat(current ? [current] : [])) {
      context.beginPath();
      stroke.forEach(([x, y], i) => (i ? context.lineTo(x, y) : context.moveTo(x, y)));
      if (stroke.length === 1) context.lineTo(stroke[0][0] + 0.1, stroke[0][1]);
      context.stroke();
    }
    if (fitted) drawFitted(fitted);
    if (keyboardPen.shown) {
      context.beginPath();
      context.lineWidth = 2;
      context.strokeStyle = style().getPropertyValue("--accent").trim() || "blue";
      context.arc(keyboardPen.x, keyboardPen.y, keyboardPen.down ? 4 : 8, 0, 2 * Math.PI);
      context.stroke();
    }
  }

  function drawFitted(fit) {
    context.save();
    context.setLineDash([8, 6]);
    context.lineWidth = 2.5;
    context.strokeStyle = style().getPropertyValue("--fit").trim() || "crimson";
    context.beginPath();
    if (fit.shape === "ellipse") {
      context.ellipse(fit.centre[0], fit.centre[1], fit.radii[0], fit.radii[1], (fit.angle * Math.PI) / 180, 0, 2 * Math.PI);
    } else {
      const points = fit.corners || fit.points;
      points.forEach(([x, y], i) => (i ? context.lineTo(x, y) : context.moveTo(x, y)));
      context.closePath();
    }
    context.stroke();
    context.restore();
  }

  function point(event) {
    const box = pad.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top, Math.round(event.timeStamp - started)];
  }

  pad.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 && event.pointerType === "mouse") return;
    event.preventDefault();
    pad.setPointerCapture(event.pointerId);
    if (strokes.length === 0) started = event.timeStamp;
    current = [point(event)];
    redraw();
  });
  pad.addEventListener("pointermove", (event) => {
    if (!current) return;
    const events = event.getCoalescedEvents ? event.getCoalescedEvents() : [event];
    for (const each of events.length ? events : [event]) current.push(point(each));
    redraw();
  });
  const finish = () => {
    if (!current) return;
    strokes.push(current);
    current = null;
    classify();
  };
  pad.addEventListener("pointerup", finish);
  pad.addEventListener("pointercancel", finish);

  // The keyboard: arrows move the pen, Space or Enter puts it down or lifts it (lifting ends a stroke).
  pad.addEventListener("keydown", (event) => {
    const step = event.shiftKey ? 2 : 10;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    const width = pad.clientWidth;
    if (moves[event.key]) {
      event.preventDefault();
      keyboardPen.shown = true;
      keyboardPen.x = Math.min(width, Math.max(0, keyboardPen.x + moves[event.key][0]));
      keyboardPen.y = Math.min(width, Math.max(0, keyboardPen.y + moves[event.key][1]));
      if (keyboardPen.down) current.push([keyboardPen.x, keyboardPen.y, Math.round(performance.now() - started)]);
      redraw();
    } else if (event.key === " " || event.key === "Enter") {
      event.preventDefault();
      keyboardPen.shown = true;
      if (keyboardPen.down) {
        keyboardPen.down = false;
        finish();
      } else {
        keyboardPen.down = true;
        if (strokes.length === 0) started = performance.now();
        current = [[keyboardPen.x, keyboardPen.y, Math.round(performance.now() - started)]];
      }
      redraw();
    } else if (event.key === "Escape" && keyboardPen.down) {
      keyboardPen.down = false;
      finish();
    }
  });

  document.getElementById("clear").addEventListener("click", () => {
    strokes = [];
    current = null;
    fitted = null;
    request++;
    show(null);
    redraw();
  });
  document.getElementById("undo").addEventListener("click", () => {
    strokes.pop();
    fitted = null;
    if (strokes.length) classify();
    else show(null);
    redraw();
  });

  // Examples for those who cannot draw here: clean shapes, slightly turned, and a zigzag (none of the shapes).
  document.getElementById("draw-example").addEventListener("click", () => {
    const kind = document.getElementById("example").value;
    const width = pad.clientWidth, c = width / 2, r = width * 0.32;
    const around = (corners, turn) => {
      const points = [];
      for (let i = 0; i <= corners.length; i++) {
        const [a, b] = [corners[i % corners.length], corners[(i + 1) % corners.length]];
        if (i === corners.length) { points.push(a); break; }
        for (let k = 0; k < 12; k++) points.push([a[0] + ((b[0] - a[0]) * k) / 12, a[1] + ((b[1] - a[1]) * k) / 12]);
      }
      return points;
    };
    const polygon = (n, turn, step = 1) =>
      Array.from({ length: n }, (_, i) => {
        const angle = turn + (2 * Math.PI * i * step) / n;
        return [c + r * Math.cos(angle), c + r * Math.sin(angle)];
      });
    let points;
    if (kind === "circle") points = Array.from({ length: 65 }, (_, i) => [c + r * Math.cos(i / 10), c + r * Math.sin(i / 10)]);
    else if (kind === "triangle") points = around(polygon(3, -Math.PI / 2 + 0.1));
    else if (kind === "square") points = around(polygon(4, Math.PI / 4 + 0.15));
    else if (kind === "star") points = around(polygon(5, -Math.PI / 2, 2));
    else points = Array.from({ length: 7 }, (_, i) => [c - r + (i * 2 * r) / 6, c + (i % 2 ? -r / 3 : r / 3)]);
    strokes = [points.map(([x, y], i) => [x, y, i * 16])];
    current = null;
    classify();
  });

  async function classify() {
    const mine = ++request;
    const body = JSON.stringify({ strokes: strokes.filter((s) => s.length > 0) });
    try {
      const response = await fetch("/v1/shape", { method: "POST", headers: { "Content-Type": "application/json" }, body });
      const answer = await response.json();
      if (mine !== request) return;
      show(answer, response.ok);
    } catch (error) {
      if (mine !== request) return;
      show({ error: `the server did not answer: ${error}` }, false);
    }
  }

  const percent = (p) => `${(100 * p).toFixed(p >= 0.995 || p < 0.005 ? 0 : 1)}%`;

  function show(answer, ok) {
    bars.replaceChildren();
    fitLine.textContent = "";
    verdict.classList.remove("doubt");
    if (!answer) {
      fitted = null;
      verdict.textContent = "Draw something";
      detail.textContent = "The answer appears here after each stroke.";
      return;
    }
    if (!ok || answer.error) {
      fitted = null;
      verdict.textContent = "No answer";
      verdict.classList.add("doubt");
      detail.innerHTML = "";
      const error = document.createElement("span");
      error.className = "error";
      error.textContent = answer.error || "the server refused the drawing";
      detail.append(error);
      redraw();
      return;
    }
    fitted = answer.fitted || null;
    const neat = fitted ? `, ${percent(fitted.neatness)} neat` : "";
    if (answer.label === "unknown") {
      verdict.textContent = "unknown";
      verdict.classList.add("doubt");
      detail.textContent = `None of the shapes (nearest: ${answer.best}). Model ${answer.model}.`;
    } else if (answer.uncertain) {
      verdict.textContent = `not sure: ${answer.label}? ${percent(answer.confidence)}${neat}`;
      verdict.classList.add("doubt");
      detail.textContent = `${answer.reason || "the model is not sure"}. Model ${answer.model}.`;
    } else {
      verdict.textContent = `${answer.label} ${percent(answer.confidence)}${neat}`;
      detail.textContent = `Model ${answer.model}${answer.weights ? ` (${answer.weights})` : ""}.`;
    }
    if (fitted) fitLine.textContent = describe(fitted);
    const entries = Object.entries(answer.probabilities).sort((a, b) => b[1] - a[1]);
    for (const [label, probability] of entries) {
      const item = document.createElement("li");
      const chosen = label === answer.label || (answer.label === "unknown" && label === "other");
      if (chosen) item.className = "chosen";
      const name = document.createElement("span");
      name.textContent = label;
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.setAttribute("role", "presentation");
      const fill = document.createElement("span");
      fill.style.width = `${Math.max(0, Math.min(1, probability)) * 100}%`;
      bar.append(fill);
      const number = document.createElement("span");
      number.className = "num";
      number.textContent = percent(probability);
      item.append(name, bar, number);
      bars.append(item);
    }
    redraw();
  }

  function describe(fit) {
    const n = (v) => Math.round(v);
    if (fit.shape === "ellipse") {
      const circle = Math.abs(fit.radii[0] - fit.radii[1]) <= 0.05 * Math.max(...fit.radii);
      return circle
        ? `Fitted circle: centre (${n(fit.centre[0])}, ${n(fit.centre[1])}), radius ${n((fit.radii[0] + fit.radii[1]) / 2)}.`
        : `Fitted ellipse: centre (${n(fit.centre[0])}, ${n(fit.centre[1])}), radii ${n(fit.radii[0])} and ${n(fit.radii[1])}, turned ${n(fit.angle)}°.`;
    }
    if (fit.shape === "star") return `Fitted star: centre (${n(fit.centre[0])}, ${n(fit.centre[1])}), first tip at ${n(fit.angle)}°.`;
    const corners = fit.corners.map(([x, y]) => `(${n(x)}, ${n(y)})`).join(", ");
    return `Fitted ${fit.shape}: corners ${corners}${fit.shape === "rectangle" ? `, turned ${n(fit.angle)}°` : ""}.`;
  }

  // The served model's classes (GET /v1/models): a model trained on others asks for those.
  const list = (labels) => labels.length < 2 ? labels.join("") : `${labels.slice(0, -1).join(", ")} or ${labels[labels.length - 1]}`;
  fetch("/v1/models").then((response) => response.json()).then((models) => {
    const labels = models.shape.labels;
    if (labels.length > 0) document.getElementById("prompt").textContent = `Draw ${/^[aeiou]/i.test(labels[0]) ? "an" : "a"} ${list(labels)}`;
  }).catch(() => {});

  window.addEventListener("resize", size);
  size();
})();
