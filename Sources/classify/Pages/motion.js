// The motion page: a recording file sent to POST /v1/motion, or the phone's own motion sensors streamed to a live
// session (POST /v1/motion/live: every two seconds, only the samples since the last update); the timeline of states
// and each window's confidence drawn as a chart and listed as a table.
"use strict";
(() => {
  // Each state's colour: the shipped model's three, then a palette for a model trained on other states (its
  // labels from GET /v1/models), in the order the model gives them.
  const colours = { walking: "#1f77b4", running: "#d62728", still: "#2ca02c", unknown: "#7f7f7f" };
  let states = ["walking", "running", "still"];
  let maxBody = Infinity;    // the largest body the server reads (--max-body), from GET /v1/models
  fetch("/v1/models").then((response) => response.json()).then((models) => {
    if (models.maxBody) maxBody = models.maxBody;
    const palette = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#17becf"];
    states = models.motion.labels;
    states.filter((label) => !(label in colours)).forEach((label, index) => { colours[label] = palette[index % palette.length]; });
  }).catch(() => {});
  const verdict = document.getElementById("verdict");
  const detail = document.getElementById("detail");
  const chart = document.getElementById("chart");
  const table = document.getElementById("segments");
  const legend = document.getElementById("legend");
  const note = document.getElementById("sensor-note");
  const [start, stop, save] = ["start", "stop", "save"].map((id) => document.getElementById(id));
  const svg = "http://www.w3.org/2000/svg";
  const standardGravity = 9.80665;
  let samples = [];   // [t (s), acc.x, acc.y, acc.z (g), gyro.x, gyro.y, gyro.z (rad/s)], all of them, for Save CSV
  let origin = null, timer = null, request = 0;
  // The live session: its id, how many samples it has taken, whether an update is on its way, and what its answers
  // said (each window, and the changes, pauses and resumptions `classify motion --follow` prints).
  let live = { session: null, sent: 0, busy: false, endWanted: false, windows: [], events: [], state: null, updates: 0 };

  document.getElementById("file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    if (file.size > maxBody) {
      // Said at once, rather than after the upload: the server would refuse it (413).
      const mb = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;
      show({ error: `${file.name} is ${mb(file.size)}; this server reads at most ${mb(maxBody)} (classify serve --max-body). ` +
        `classify motion ${file.name} reads it on this machine, or restart the server with a larger --max-body.` }, false, file.name);
      return;
    }
    verdict.textContent = `Reading ${file.name}…`;
    post(await file.text(), "text/csv", file.name);
  });

  async function post(body, type, name) {
    const mine = ++request;
    try {
      // The file's name, so that an error names it as `classify motion FILE` would.
      const query = name ? `?name=${encodeURIComponent(name)}` : "";
      const response = await fetch("/v1/motion" + query, { method: "POST", headers: { "Content-Type": type }, body });
      const answer = await response.json();
      if (mine === request) show(answer, response.ok, name);
    } catch (error) {
      if (mine === request) show({ error: `the server did not answer: ${error}` }, false, name);
    }
  }

  const percent = (p) => `${(100 * p).toFixed(0)}%`;
  const seconds = (s) => `${s.toFixed(1)} s`;

  function show(answer, ok, name) {
    chart.querySelectorAll(":scope > :not(title)").forEach((node) => node.remove());
    table.tBodies[0].replaceChildren();
    if (!ok || answer.error) {
      table.hidden = true;
      verdict.textContent = "No timeline";
      detail.textContent = "";
      const error = document.createElement("span");
      error.className = "error";
      error.textContent = answer.error || "the server refused the recording";
      detail.append(error);
      return;
    }
    const segments = answer.segments || [];
    verdict.textContent = headline(segments, answer.label);
    // How many windows said what: "walking 24, still 20, running 10 and 8 uncertain of 62 windows".
    const counts = new Map();
    let uncertain = 0;
    for (const window of answer.windows) {
      if (window.uncertain) uncertain += 1;
      else counts.set(window.label, (counts.get(window.label) || 0) + 1);
    }
    const tally = [...counts].sort((a, b) => b[1] - a[1]).map(([label, count]) => `${label} ${count}`).join(", ");
    detail.textContent =
      `${name}: ${tally}${uncertain ? `${tally ? " and " : ""}${uncertain} uncertain` : ""} of ${answer.windows.length} windows` +
      (answer.uncertain ? ` (uncertain: ${answer.reason})` : "") + `; model ${answer.model}.`;
    draw(answer);
    for (const segment of segments) {
      const row = table.tBodies[0].insertRow();
      [segment.label, seconds(segment.start), seconds(segment.end), String(segment.windows), percent(segment.confidence)].forEach((text) => {
        row.insertCell().textContent = text;
      });
    }
    table.hidden = segments.length === 0;
  }

  // The states in order, "walking → still": the stretches of two windows or more (a one-window blip is in the
  // table and the chart, not here), and at most six of them ("walking → still → … → running, 14 changes").
  function headline(segments, label) {
    const labels = [];
    for (const segment of segments.filter((s) => s.windows >= 2)) {
      if (labels[labels.length - 1] !== segment.label) labels.push(segment.label);
    }
    if (labels.length < 2) return labels[0] || label;
    if (labels.length <= 6) return labels.join(" → ");
    return `${labels.slice(0, 3).join(" → ")} → … → ${labels.slice(-2).join(" → ")}, ${labels.length - 1} changes`;
  }

  function element(name, attributes, text) {
    const node = document.createElementNS(svg, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    chart.append(node);
    return node;
  }

  // Top band: each segment's state; below: each window's confidence (0–100%) at its middle.
  function draw(answer) {
    const width = 800, left = 40, right = 10, bandTop = 10, bandHeight = 40, plotTop = 70, plotHeight = 120;
    const end = Math.max(1e-6, ...answer.windows.map((w) => w.end));
    const x = (t) => left + ((width - left - right) * t) / end;
    for (const segment of answer.segments) {
      const rect = element("rect", {
        x: x(segment.start), y: bandTop, width: Math.max(1, x(segment.end) - x(segment.start)), height: bandHeight,
        fill: colours[segment.label] || colours.unknown, "data-state": segment.label,
      });
      const tip = document.createElementNS(svg, "title");
      tip.textContent = `${segment.label} ${seconds(segment.start)}–${seconds(segment.end)}`;
      rect.append(tip);
      if (x(segment.end) - x(segment.start) > 60) {
        element("text", { x: x(segment.start) + 6, y: bandTop + 26, fill: "white", "font-size": 16, "font-weight": "bold" }, segment.label);
      }
    }
    element("line", { x1: left, y1: plotTop + plotHeight, x2: width - right, y2: plotTop + plotHeight, stroke: "currentColor" });
    element("line", { x1: left, y1: plotTop, x2: left, y2: plotTop + plotHeight, stroke: "currentColor" });
    element("text", { x: 2, y: plotTop + 10, "font-size": 12 }, "100%");
    element("text", { x: 2, y: plotTop + plotHeight, "font-size": 12 }, "0%");
    element("text", { x: width - right - 60, y: plotTop + plotHeight + 24, "font-size": 12 }, seconds(end));
    for (const window of answer.windows) {
      const middle = (window.start + window.end) / 2;
      const dot = element("circle", {
        cx: x(middle), cy: plotTop + plotHeight * (1 - window.confidence), r: window.uncertain ? 5 : 3.5,
        fill: window.uncertain ? "white" : colours[window.label] || colours.unknown,
        stroke: colours[window.label] || colours.unknown, "stroke-width": 2,
      });
      // Each window says what it is; an uncertain one (hollow) says why, a gap's at 99% too.
      const tip = document.createElementNS(svg, "title");
      tip.textContent = `${window.label} ${percent(window.confidence)}, ${seconds(window.start)}–${seconds(window.end)}` +
        (window.uncertain ? `: uncertain${window.reason ? `, ${window.reason}` : ""}` : "");
      dot.append(tip);
    }
    legend.replaceChildren(
      ...states.map((label) => [label, colours[label] || colours.unknown]).map(([label, colour]) => {
        const item = document.createElement("span");
        const swatch = document.createElement("i");
        swatch.style.background = colour;
        item.append(swatch, label);
        return item;
      }));
  }

  // Live: the phone's accelerometer (gravity included, in g) and gyroscope (rad/s), as `classify motion` reads them.
  // Times come from performance.now(), the clock of the events' own timeStamp (and one a test can drive).
  function onMotion(event) {
    const a = event.accelerationIncludingGravity, r = event.rotationRate;
    if (!a || a.x === null) return;
    const now = performance.now();
    if (origin === null) origin = now;
    const t = (now - origin) / 1000;
    if (samples.length && t <= samples[samples.length - 1][0]) return;
    const radians = (degrees) => ((degrees || 0) * Math.PI) / 180;
    samples.push([t, a.x / standardGravity, a.y / standardGravity, a.z / standardGravity, radians(r && r.beta), radians(r && r.gamma), radians(r && r.alpha)]);
  }

  // The recording as CSV: all of it, or its newest samples whose text fits in `budget` bytes.
  function csv(budget = Infinity) {
    const header = "timestamp,acc.x,acc.y,acc.z,gyro.x,gyro.y,gyro.z";
    const rows = [];
    let size = header.length + 1;
    for (let i = samples.length - 1; i >= 0; i--) {
      const s = samples[i];
      const row = [s[0].toFixed(4)].concat(s.slice(1).map((v) => v.toFixed(5))).join(",");
      if (size + row.length + 1 > budget) break;
      rows.push(row);
      size += row.length + 1;
    }
    rows.reverse();
    return [header].concat(rows).join("\n") + "\n";
  }

  // The samples since the last update to the live session (which is opened by the first), and, with `end`, the
  // session's end. One update at a time: a tick while one is on its way waits for the next.
  async function update(end = false) {
    if (live.busy) {
      if (end) live.endWanted = true;
      return;
    }
    live.busy = true;
    let again = false;
    const batch = samples.slice(live.sent);
    const rows = batch.map((s) => {
      const row = { timestamp: Number(s[0].toFixed(4)) };
      ["acc.x", "acc.y", "acc.z", "gyro.x", "gyro.y", "gyro.z"].forEach((key, i) => { row[key] = Number(s[i + 1].toFixed(5)); });
      return row;
    });
    const query = live.session ? `?session=${live.session}${end ? "&end=1" : ""}` : "";
    try {
      const response = await fetch("/v1/motion/live" + query, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ samples: rows }) });
      const answer = await response.json();
      if (!response.ok) {
        // The session is gone (ended after an error, or idle too long): the next update opens a new one.
        live.session = null;
        show({ error: answer.error || `the server answered ${response.status}` }, false, "this phone");
        return;
      }
      live.session = end ? null : answer.session;
      live.sent += batch.length;
      live.windows.push(...answer.windows);
      live.events.push(...answer.events);
      live.state = answer.state;
      live.updates += 1;
      showLive();
      // Opened by this update: end it too.
      if (end && query === "") {
        live.session = answer.session;
        again = true;
      }
    } catch (error) {
      show({ error: `the server did not answer: ${error}` }, false, "this phone");
    } finally {
      live.busy = false;
    }
    // Stop was pressed while this update was on its way: the end follows it.
    if (again || (live.endWanted && !end)) {
      live.endWanted = false;
      await update(true);
    }
  }

  // The live session's timeline: a segment from each change (or resumption) to the next, or to a pause.
  function showLive() {
    document.body.dataset.liveSent = String(live.sent);
    const last = live.windows.length ? live.windows[live.windows.length - 1].end : 0;
    const segments = [];
    const close = (time) => { if (segments.length && segments[segments.length - 1].end === null) segments[segments.length - 1].end = time; };
    for (const event of live.events) {
      if (event.event === "paused") close(event.time);
      else {
        close(event.event === "resumed" ? event.pausedAt : event.since);
        segments.push({ label: event.to, start: event.since, end: null, confidence: event.confidence });
      }
    }
    close(last);
    for (const segment of segments) {
      segment.windows = live.windows.filter((w) => (w.start + w.end) / 2 >= segment.start && (w.start + w.end) / 2 < segment.end).length;
    }
    if (!live.windows.length) {
      verdict.textContent = "Recording…";
      detail.textContent = `this phone: ${samples.length} samples; the first window needs 5.12 s`;
      return;
    }
    show({ segments, windows: live.windows, label: live.state || "not sure yet", model: "" }, true, "this phone");
    detail.textContent = `this phone: now ${live.state || "not sure yet"}; ${live.windows.length} windows, ` +
      `${live.events.length} changes; ${live.sent} samples sent in ${live.updates} updates.`;
  }

  start.addEventListener("click", async () => {
    if (!window.isSecureContext || typeof DeviceMotionEvent === "undefined") {
      note.innerHTML = "";
      note.append(
        "Motion sensors are given only to secure pages. Start the server with --tls-cert and --tls-key and open it as https, " +
        "or reach it as http://localhost (Android: adb reverse tcp:8080 tcp:8080). docs/serve.md has the steps.");
      note.className = "error";
      return;
    }
    if (typeof DeviceMotionEvent.requestPermission === "function") {
      const answer = await DeviceMotionEvent.requestPermission().catch(() => "denied");
      if (answer !== "granted") {
        note.textContent = "Motion sensors were not allowed for this page.";
        return;
      }
    }
    samples = [];
    origin = null;
    live = { session: null, sent: 0, busy: false, endWanted: false, windows: [], events: [], state: null, updates: 0 };
    window.addEventListener("devicemotion", onMotion);
    start.disabled = true;
    stop.disabled = false;
    save.disabled = true;
    verdict.textContent = "Recording…";
    timer = setInterval(() => {
      const span = samples.length ? samples[samples.length - 1][0] : 0;
      if (samples.length === 0 && span === 0) detail.textContent = "No motion events yet: this device may have no motion sensors.";
      if (samples.length > live.sent) update();
    }, 2000);
  });

  stop.addEventListener("click", () => {
    window.removeEventListener("devicemotion", onMotion);
    clearInterval(timer);
    start.disabled = false;
    stop.disabled = true;
    save.disabled = samples.length === 0;
    if (samples.length) update(true);
  });

  save.addEventListener("click", () => {
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
    link.download = `motion-${new Date().toISOString().replace(/[:.]/g, "-")}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
  });
})();
