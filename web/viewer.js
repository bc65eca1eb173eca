// The viewer's page: the tree, blocks and validation of the file the worker opened, and the
// picture of the array selected. Everything heavy runs in the worker (worker.js).
"use strict";

const $ = (id) => document.getElementById(id);
// The worker: worker.js beside the page; for a page opened as a file (file://, where a
// browser loads neither a worker script nor a module by URL) its source and the module come
// from inline.js, which `cargo xtask web` writes.
function loadInline() {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = "inline.js";
    s.onload = () => resolve(window.ASDF_VIEWER_INLINE);
    s.onerror = () => reject(new Error("inline.js is missing: build the viewer with `cargo xtask web`"));
    document.head.append(s);
  });
}

function makeWorker() {
  if (location.protocol !== "file:") {
    const w = new Worker("worker.js");
    w.postMessage({ type: "init" });
    return w;
  }
  const pending = [];
  let real = null;
  const proxy = {
    onmessage: null,
    onerror: null,
    postMessage: (m, t) => (real ? real.postMessage(m, t) : pending.push([m, t])),
  };
  loadInline().then((inline) => {
    real = new Worker(URL.createObjectURL(new Blob([inline.worker], { type: "text/javascript" })));
    real.onmessage = (e) => proxy.onmessage && proxy.onmessage(e);
    real.onerror = (e) => proxy.onerror && proxy.onerror(e);
    const bin = Uint8Array.from(atob(inline.wasm), (c) => c.charCodeAt(0));
    real.postMessage({ type: "init", wasm: bin.buffer }, [bin.buffer]);
    for (const [m, t] of pending) real.postMessage(m, t);
  }, (err) => showError(String(err.message || err)));
  return proxy;
}

const worker = makeWorker();
// What the page shows, for tests and for the console.
const state = { info: null, drawn: null, opened: null, error: null, notice: null, busy: false, zoom: 1, selected: null };
window.viewer = state;

function setStatus(text) {
  $("status").textContent = text;
}

function showError(text) {
  state.error = text;
  $("message").textContent = text;
  $("message").hidden = false;
}

function clearError() {
  state.error = null;
  $("message").hidden = true;
}

// A notice about how the file was read (not an error), or none.
function showNotice(text) {
  state.notice = text || null;
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- Opening ----

function openFile(file) {
  clearError();
  showNotice(null);
  state.busy = true;
  setStatus(`opening ${file.name}…`);
  worker.postMessage({ type: "open-file", file });
}

function openUrl(url) {
  clearError();
  showNotice(null);
  state.busy = true;
  setStatus(`opening ${url}…`);
  worker.postMessage({ type: "open-url", url });
}

$("file").addEventListener("change", (e) => e.target.files[0] && openFile(e.target.files[0]));
document.addEventListener("dragover", (e) => e.preventDefault());
document.addEventListener("drop", (e) => {
  e.preventDefault();
  const f = e.dataTransfer.files[0];
  if (f) openFile(f);
});
$("url-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const url = $("url").value.trim();
  if (!url) return;
  history.replaceState(null, "", `?url=${encodeURIComponent(url)}`);
  openUrl(url);
});

worker.onmessage = (e) => {
  const m = e.data;
  if (m.type === "world" || m.type === "grid") {
    (m.type === "world" ? showWorld : drawGrid)(m);
    return;
  }
  state.busy = false;
  if (m.type === "error") {
    showError(m.message);
    setStatus("");
  } else if (m.type === "opened") {
    state.info = m.info;
    state.opened = { name: m.name, size: m.size, ms: m.ms, read: m.info.read };
    showNotice(m.notice);
    const mb = (m.size / 1e6).toFixed(1);
    setStatus(`${m.name}: ${mb} MB, ASDF Standard ${m.info.standard}; opened in ${m.ms.toFixed(0)} ms, ${m.info.read.bytes} bytes read in ${m.info.read.requests} reads`);
    showFile(m.info);
  } else if (m.type === "drawn") {
    showPicture(m);
  }
};
worker.onerror = (e) => showError(`the viewer's worker failed: ${e.message}`);

// ---- The tree ----

function arrayText(a) {
  if (a.error) return `(${a.error})`;
  let t = `${a.datatype} [${a.shape.join(" × ")}]`;
  if (a.compression && a.compression !== "none" && a.compression !== "\u0000\u0000\u0000\u0000") t += ` ${a.compression}`;
  if (a.masked) t += " masked";
  return t;
}

function drawable(node) {
  return node.a && !node.a.error && node.a.shape.length >= 1 && !/^(ascii|ucs4)|\[|\{/.test(node.a.datatype);
}

function rowFor(node) {
  const row = el("div", "row");
  row.dataset.pointer = node.p;
  const twisty = el("span", "twisty", node.c ? "▸" : "");
  row.append(twisty);
  row.append(el("span", "key", node.k === undefined ? "root" : node.k));
  if (node.t) row.append(el("span", "tag", node.t));
  if (node.a) row.append(el("span", "arr", arrayText(node.a)));
  else if (node.v !== undefined) row.append(el("span", "val", node.v));
  else if (node.n !== undefined) row.append(el("span", "val", node.y === "seq" ? `[${node.n}]` : `{${node.n}}`));
  if (node.more) row.append(el("span", "line", `(${node.more} more not listed)`));
  row.append(el("span", "line", node.l));
  if (drawable(node)) {
    row.classList.add("selectable");
    row.addEventListener("click", () => select(node));
  }
  return [row, twisty];
}

function build(node, into, depth) {
  const wrap = el("div", "node");
  const [row, twisty] = rowFor(node);
  wrap.append(row);
  into.append(wrap);
  if (!node.c) return;
  let kids = null;
  const toggle = () => {
    if (!kids) {
      kids = el("div");
      for (const c of node.c) build(c, kids, depth + 1);
      wrap.append(kids);
    } else {
      kids.hidden = !kids.hidden;
    }
    twisty.textContent = kids.hidden ? "▸" : "▾";
  };
  twisty.addEventListener("click", (e) => {
    e.stopPropagation();
    toggle();
  });
  // Arrays' own keys stay folded; everything else opens two levels down.
  if (depth < 2 && !node.a) toggle();
}

function flatten(node, out) {
  out.push(node);
  for (const c of node.c || []) flatten(c, out);
  return out;
}

function showFile(info) {
  const tree = $("tree");
  tree.textContent = "";
  $("search-results").textContent = "";
  if (info.tree.error) {
    showError(info.tree.error);
  } else {
    build(info.tree, tree, 0);
  }
  showBlocks(info.blocks);
  showValidation(info.validation, info.warnings);
  const first = info.images && info.images[0];
  const nodes = info.tree.error ? [] : flatten(info.tree, []);
  state.nodes = nodes;
  const target = nodes.find((n) => n.p === first) || nodes.find(drawable);
  if (target) select(target, true);
}

// Bytes of an array's values (shape × the datatype's size).
function arrayBytes(a) {
  const bits = Number((/(\d+)$/.exec(a.datatype) || [0, 8])[1]);
  return a.shape.reduce((x, y) => x * y, 1) * Math.max(1, bits / 8);
}

// Arrays larger than this are drawn when asked, not when the file opens (a picture reads the
// whole plane).
const AUTO_DRAW_BYTES = 256 * 1024 * 1024;

$("search").addEventListener("input", () => {
  const q = $("search").value.trim().toLowerCase();
  const out = $("search-results");
  out.textContent = "";
  if (!q || !state.nodes) return;
  const hits = state.nodes.filter((n) => [n.k, n.t, n.v, n.p].some((s) => s !== undefined && String(s).toLowerCase().includes(q)));
  out.append(el("div", "line", `${hits.length} found`));
  for (const n of hits.slice(0, 200)) {
    const d = el("div", "hit", `${n.p || "/"}${n.t ? "  " + n.t : ""}${n.v !== undefined ? "  " + n.v : ""}`);
    if (drawable(n)) d.addEventListener("click", () => select(n));
    out.append(d);
  }
});

// ---- Blocks and validation ----

function showBlocks(blocks) {
  const t = $("blocks");
  t.textContent = "";
  const head = el("tr");
  for (const h of ["#", "offset", "compression", "stored bytes"]) head.append(el("th", "", h));
  t.append(head);
  for (const b of blocks) {
    const r = el("tr");
    for (const v of [b.index, b.offset, b.compression, b.data_len]) r.append(el("td", "", v === null ? "?" : String(v).replace(/\u0000/g, "")));
    t.append(r);
  }
}

function showValidation(v, warnings) {
  const box = $("validation");
  box.textContent = "";
  const tab = $("validation-tab");
  if (v.error) {
    box.append(el("div", "violation", v.error));
    tab.textContent = "Validation (error)";
    return;
  }
  tab.textContent = v.valid ? "Validation ✓" : `Validation (${v.violations.length})`;
  if (v.valid) box.append(el("div", "ok", "Valid against the schemas of the ASDF Standard."));
  for (const x of v.violations) {
    const d = el("div", "violation");
    d.append(el("div", "where", `${x.pointer}  (line ${x.line}:${x.column})`));
    d.append(el("div", "", x.message));
    d.append(el("div", "line", x.schema));
    box.append(d);
  }
  for (const w of (warnings || []).concat(v.warnings || [])) box.append(el("div", "line", w));
}

document.querySelectorAll(".tabs button").forEach((b) =>
  b.addEventListener("click", () => {
    document.querySelectorAll(".tabs button").forEach((x) => x.classList.toggle("on", x === b));
    for (const t of ["tree", "blocks", "validation"]) $(`tab-${t}`).hidden = t !== b.dataset.tab;
  })
);

// ---- Pictures ----

function select(node, automatic) {
  state.selected = node;
  document.querySelectorAll(".row.selected").forEach((r) => r.classList.remove("selected"));
  const row = document.querySelector(`.row[data-pointer="${CSS.escape(node.p)}"]`);
  if (row) row.classList.add("selected");
  const shape = node.a.shape;
  const box = $("plane-box");
  box.hidden = shape.length < 3;
  if (shape.length >= 3) {
    $("plane").max = shape[0] - 1;
    $("plane").value = 0;
  }
  $("slice").value = "";
  $("lo").value = "";
  $("hi").value = "";
  const size = arrayBytes(node.a);
  if (automatic && size > AUTO_DRAW_BYTES) {
    $("array-title").textContent = `${node.p}: ${(size / 1e9).toFixed(2)} GB; choose a slice, or `;
    const b = el("button", "", "draw it all");
    b.type = "button";
    b.addEventListener("click", request);
    $("array-title").append(b);
    return;
  }
  request();
}

function sliceFor(shape) {
  const typed = $("slice").value.trim();
  if (typed) return typed;
  if (shape.length < 3) return "";
  const axes = [String($("plane").value)];
  for (let i = 1; i < shape.length - 2; i++) axes.push("0");
  return axes.concat([":", ":"]).join(", ");
}

function request() {
  const node = state.selected;
  if (!node) return;
  const box = $("canvas-box");
  const req = {
    pointer: node.p,
    slice: sliceFor(node.a.shape),
    stretch: $("stretch").value,
    cmap: $("cmap").value,
    max: 2048,
    plot: [Math.max(400, box.clientWidth - 20), Math.max(240, box.clientHeight - 20)],
  };
  const lo = parseFloat($("lo").value), hi = parseFloat($("hi").value);
  if (Number.isFinite(lo)) req.lo = lo;
  if (Number.isFinite(hi)) req.hi = hi;
  state.busy = true;
  $("plane-value").textContent = node.a.shape.length >= 3 ? ` ${$("plane").value} / ${node.a.shape[0] - 1}` : "";
  worker.postMessage({ type: "draw", request: req });
}

for (const id of ["stretch", "cmap"]) $(id).addEventListener("change", () => { $("lo").value = ""; $("hi").value = ""; request(); });
for (const id of ["lo", "hi", "slice"]) $(id).addEventListener("change", request);
$("plane").addEventListener("input", request);

function applyZoom() {
  const d = state.drawn;
  if (!d) return;
  const c = $("canvas");
  c.style.width = `${d.header.width * state.zoom}px`;
  c.style.height = `${d.header.height * state.zoom}px`;
  $("zoom-value").textContent = state.zoom >= 1 ? String(state.zoom) : state.zoom.toFixed(2);
}
$("zoom-in").addEventListener("click", () => { state.zoom = Math.min(32, state.zoom * 2); applyZoom(); });
$("zoom-out").addEventListener("click", () => { state.zoom = Math.max(1 / 16, state.zoom / 2); applyZoom(); });
$("zoom-fit").addEventListener("click", () => {
  const d = state.drawn;
  if (!d) return;
  state.zoom = fitZoom(d.header.width, d.header.height);
  applyZoom();
});

// The zoom that fits a picture in the panel: whole steps up to 8 for small pictures, a
// fraction for large ones.
function fitZoom(w, h) {
  const box = $("canvas-box");
  const z = Math.min(box.clientWidth / w, box.clientHeight / h);
  return z >= 1 ? Math.min(8, Math.floor(z)) : z;
}

function showPicture(m) {
  clearError();
  const fresh = !state.drawn || state.drawn.header.pointer !== m.header.pointer;
  state.drawn = m;
  if (fresh && m.header.kind === "image") state.zoom = fitZoom(m.header.width, m.header.height);
  const h = m.header;
  const c = $("canvas");
  c.width = h.width;
  c.height = h.height;
  c.getContext("2d").putImageData(new ImageData(m.rgba, h.width, h.height), 0, 0);
  const what = h.kind === "image" && (h.full[0] !== h.width) ? ` (reduced from ${h.full[0]} × ${h.full[1]})` : "";
  $("array-title").textContent = `${h.pointer} [${h.region}]${what}`;
  if (h.kind === "image") {
    $("lo").placeholder = h.lo.toPrecision(6);
    $("hi").placeholder = h.hi.toPrecision(6);
    drawHistogram(h);
  } else {
    $("histogram").getContext("2d").clearRect(0, 0, 256, 60);
  }
  if (h.kind === "plot") state.zoom = 1;
  applyZoom();
  // A coordinate grid, when the file has a WCS for this array and it is asked for.
  const evaluable = (state.info && state.info.wcs || []).some((w) => !w.error);
  $("grid-box").hidden = !(h.kind === "image" && evaluable);
  $("world").textContent = "";
  if (h.kind === "image" && evaluable && $("grid").checked) {
    worker.postMessage({ type: "grid", request: { op: "grid", pointer: h.pointer, slice: h.region, width: h.full[0], height: h.full[1] } });
  }
  setStatus(`${state.opened ? state.opened.name + ": " : ""}${h.pointer} drawn in ${m.ms.toFixed(0)} ms`);
}

function drawHistogram(h) {
  const g = $("histogram").getContext("2d");
  g.clearRect(0, 0, 256, 60);
  const counts = h.histogram;
  const top = Math.log1p(Math.max(...counts, 1));
  g.fillStyle = "#1f77b4";
  counts.forEach((n, i) => {
    const y = (Math.log1p(n) / top) * 58;
    g.fillRect(i * 2, 60 - y, 2, y);
  });
  // The display limits.
  g.fillStyle = "#d62728";
  for (const v of [h.lo, h.hi]) {
    const x = h.max > h.min ? ((v - h.min) / (h.max - h.min)) * 256 : 128;
    g.fillRect(Math.max(0, Math.min(255, x)), 0, 1, 60);
  }
}

$("canvas").addEventListener("mousemove", (e) => {
  const d = state.drawn;
  if (!d || d.header.kind !== "image") return;
  const r = e.target.getBoundingClientRect();
  const x = Math.floor(((e.clientX - r.left) / r.width) * d.header.width);
  const y = Math.floor(((e.clientY - r.top) / r.height) * d.header.height);
  if (x < 0 || y < 0 || x >= d.header.width || y >= d.header.height) return;
  const v = d.values[y * d.header.width + x];
  // Array indices: the first row is drawn at the bottom; reduced pictures cover f x f values.
  const f = d.header.full[0] / d.header.width;
  const row = Math.floor((d.header.height - 1 - y) * f), col = Math.floor(x * f);
  $("pixel").textContent = `[${row}, ${col}]${f > 1 ? " (mean of " + Math.ceil(f) + "×" + Math.ceil(f) + ")" : ""} = ${Number.isNaN(v) ? "NaN / masked" : v.toPrecision(7)}`;
  // The world coordinates of that pixel, when the file has a WCS (one request at a time).
  if ((state.info && state.info.wcs || []).some((w) => !w.error)) {
    const req = { op: "world", pointer: d.header.pointer, slice: d.header.region, points: [[col, row]], id: `${row},${col}` };
    if (state.worldBusy) state.worldNext = req;
    else {
      state.worldBusy = true;
      worker.postMessage({ type: "world", request: req });
    }
  }
});

function showWorld(m) {
  state.worldBusy = false;
  if (state.worldNext) {
    const next = state.worldNext;
    state.worldNext = null;
    state.worldBusy = true;
    worker.postMessage({ type: "world", request: next });
  }
  if (m.answer.error) {
    $("world").textContent = `world: ${m.answer.error}`;
    return;
  }
  const a = m.answer.ok;
  state.world = a;
  const parts = a.axes.map((ax, i) => {
    const v = a.world[i][0];
    return `${ax.name || "axis " + i} ${v === null ? "NaN (outside)" : v.toFixed(ax.unit === "deg" ? 7 : 6)}${ax.unit ? " " + ax.unit : ""}`;
  });
  $("world").textContent = `[${m.id}] → ${parts.join(", ")}`;
}

// Lines of constant world coordinate over the image, in the picture's pixels (the first row
// drawn at the bottom; a reduced picture covers f × f values).
function drawGrid(m) {
  const d = state.drawn;
  if (!d || m.answer.error || !$("grid").checked) return;
  const g = $("canvas").getContext("2d");
  const f = d.header.full[0] / d.header.width;
  const H = d.header.height;
  const colours = ["#4fc3f7", "#ffb74d"];
  g.lineWidth = 1;
  g.font = "11px sans-serif";
  for (const line of m.answer.ok.lines) {
    g.strokeStyle = colours[line.axis % 2];
    g.fillStyle = colours[line.axis % 2];
    g.beginPath();
    for (const [c0, r0, c1, r1] of line.segments) {
      g.moveTo(c0 / f + 0.5, H - r0 / f - 0.5);
      g.lineTo(c1 / f + 0.5, H - r1 / f - 0.5);
    }
    g.stroke();
    const [c, r] = line.segments[Math.floor(line.segments.length / 2)];
    const ax = m.answer.ok.axes[line.axis];
    g.fillText(`${ax.name || "axis " + line.axis} ${formatWorld(line.value, ax.unit)}`, c / f + 3, H - r / f - 3);
  }
  state.gridDrawn = m.answer.ok.lines.length;
}

// An angle in degrees as d°m's" (other units as numbers).
function formatWorld(v, unit) {
  if (unit !== "deg") return `${+v.toPrecision(6)}${unit ? " " + unit : ""}`;
  const sign = v < 0 ? "-" : "";
  let s = Math.round(Math.abs(v) * 3600);
  const d = Math.floor(s / 3600);
  s -= d * 3600;
  const mm = Math.floor(s / 60);
  s -= mm * 60;
  return `${sign}${d}°${String(mm).padStart(2, "0")}'${String(s).padStart(2, "0")}"`;
}

$("grid").addEventListener("change", request);

// ---- A URL in the address (?url=...) opens at once ----

const given = new URLSearchParams(location.search).get("url");
if (given) {
  $("url").value = given;
  openUrl(given);
}
