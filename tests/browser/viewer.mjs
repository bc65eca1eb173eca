// The web viewer in Debian's chromium, headless, driven by playwright-core.
//
// Usage: node viewer.mjs BASE DATA_DIR SHOT_DIR
//   BASE      http://127.0.0.1:PORT, the test's range server, serving the viewer and the files
//   DATA_DIR  the folder it serves (for the local-file input)
//   SHOT_DIR  where screenshots go
// Prints one line per check and a JSON summary last; exits 1 at the first failed check.
import { chromium } from "playwright-core";
import path from "node:path";

const [base, dataDir, shotDir] = process.argv.slice(2);
const summary = {};
let page;

function check(ok, what, detail) {
  if (!ok) {
    console.log(`FAIL: ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
    throw new Error(what);
  }
  console.log(`ok: ${what}`);
}

async function stats() {
  return (await fetch(`${base}/__stats__`)).json();
}

async function reset() {
  await fetch(`${base}/__reset__`);
}

// Waits until the viewer has opened a file (or shown an error), then until it drew.
async function opened() {
  await page.waitForFunction(() => window.viewer && (window.viewer.info || window.viewer.error), null, { timeout: 60000 });
  return page.evaluate(() => ({ info: window.viewer.info, error: window.viewer.error, opened: window.viewer.opened }));
}

async function drawn(pred) {
  await page.waitForFunction(pred || (() => window.viewer.drawn && !window.viewer.busy), null, { timeout: 60000 });
  return page.evaluate(() => window.viewer.drawn.header);
}

// The canvas's pixels, as drawn.
async function pixels() {
  return page.evaluate(() => {
    const c = document.getElementById("canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height);
    return { width: c.width, height: c.height, data: Array.from(d.data) };
  });
}

function at(p, x, y) {
  const i = (y * p.width + x) * 4;
  return p.data.slice(i, i + 3);
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));

  // 1. A JWST-like file by URL (?url=): the tree, the shapes, the first image drawn.
  await reset();
  const url = `${base}/jwst.asdf`;
  let t0 = Date.now();
  await page.goto(`${base}/index.html?url=${encodeURIComponent(url)}`);
  let o = await opened();
  check(!o.error, "the JWST-like file opens by URL", o.error);
  const h = await drawn();
  summary.jwst_open_ms = Date.now() - t0;
  const rows = await page.locator("#tree .row").allTextContents();
  check(rows.some((r) => r.includes("data") && r.includes("float32 [256 × 320]")), "the tree shows /data with its shape and datatype", rows.slice(0, 30));
  check(rows.some((r) => r.includes("dq") && r.includes("uint32 [256 × 320]")), "the tree shows /dq", rows.slice(0, 30));
  check(rows.some((r) => r.includes("instrument")), "the tree shows /meta/instrument");
  check(h.pointer === "/data" && h.width === 320 && h.height === 256, "the first image is drawn, one pixel per value", h);
  let p = await pixels();
  // The NaN box (rows 0..8, columns 0..16 of the array) is at the bottom left, in magenta.
  check(JSON.stringify(at(p, 3, 255)) === "[255,0,255]", "NaN drawn in its colour, the first row at the bottom", at(p, 3, 255));
  check(JSON.stringify(at(p, 3, 0)) !== "[255,0,255]", "the last row at the top is not NaN");
  const greys = new Set();
  for (let i = 0; i < p.data.length; i += 4 * 97) greys.add(p.data[i]);
  check(greys.size > 20, "the image has many levels (zscale)", greys.size);
  // The value under the cursor: the array's [100, 50] (drawn at row 255 - 100).
  const box = await page.locator("#canvas").boundingBox();
  await page.mouse.move(box.x + 50.5 * (box.width / 320), box.y + (255 - 100 + 0.5) * (box.height / 256));
  const pixel = await page.locator("#pixel").textContent();
  // (The pointer lands on a whole CSS pixel: a column either side is as good.)
  check(/^\[(99|100|101), (49|50|51)\] = \d+\.\d+$/.test(pixel), "the value under the cursor names its array index", pixel);
  summary.pixel = pixel;
  // The world coordinates under the cursor (the file's gwcs WCS, evaluated in the module).
  await page.waitForFunction(() => /→ lon -?\d/.test(document.getElementById("world").textContent), null, { timeout: 30000 });
  const world = await page.locator("#world").textContent();
  check(/^\[\d+,\d+\] → lon \d+\.\d{7} deg, lat -?\d+\.\d{7} deg$/.test(world), "the world coordinates under the cursor are shown", world);
  summary.world = await page.evaluate(() => ({ text: document.getElementById("world").textContent, world: window.viewer.world }));
  // The coordinate grid, drawn over the image.
  await page.check("#grid");
  await page.waitForFunction(() => window.viewer.gridDrawn > 0, null, { timeout: 30000 });
  summary.grid_lines = await page.evaluate(() => window.viewer.gridDrawn);
  check(summary.grid_lines >= 4, "a coordinate grid is drawn", summary.grid_lines);
  await page.mouse.move(box.x + 50.5 * (box.width / 320), box.y + (255 - 100 + 0.5) * (box.height / 256));
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(shotDir, "viewer-wcs.png") });
  await page.uncheck("#grid");
  await drawn(() => window.viewer.drawn && !window.viewer.busy);
  // Stretch and colour map.
  await page.selectOption("#cmap", "viridis");
  await drawn(() => window.viewer.drawn && !window.viewer.busy && document.getElementById("array-title").textContent.startsWith("/data"));
  await page.waitForTimeout(300);
  p = await pixels();
  const c = at(p, 200, 100);
  check(!(c[0] === c[1] && c[1] === c[2]), "a colour map draws in colour", c);
  await page.screenshot({ path: path.join(shotDir, "viewer-jwst.png") });
  // A search finds a key.
  await page.fill("#search", "NIRCAM");
  const hits = await page.locator("#search-results").textContent();
  check(hits.includes("/meta/instrument/name"), "the search finds a value", hits);
  // A spectrum: a plot.
  await page.locator('#tree .row[data-pointer="/spectrum"]').click();
  const sp = await drawn(() => window.viewer.drawn && window.viewer.drawn.header.kind === "plot");
  check(sp.pointer === "/spectrum", "a 1-D array is drawn as a plot", sp);
  // A cube: its planes with the slider.
  await page.locator('#tree .row[data-pointer="/cube"]').click();
  await drawn(() => window.viewer.drawn && window.viewer.drawn.header.pointer === "/cube");
  await page.locator("#plane").evaluate((e) => { e.value = 2; e.dispatchEvent(new Event("input")); });
  const cube = await drawn(() => window.viewer.drawn && window.viewer.drawn.header.region === "2, :, :");
  check(cube.width === 160 && cube.height === 120, "a cube's plane is drawn with the slider", cube);
  // The blocks table.
  await page.click('button[data-tab="blocks"]');
  const blocks = await page.locator("#blocks tr").count();
  check(blocks === 6, "the block table lists the five blocks", blocks);
  summary.jwst_bytes_read = (await stats()).bytes;

  // 2. An invalid file from the local-file input: its violations with pointer and line:column.
  await page.goto(`${base}/index.html`);
  await page.setInputFiles("#file", path.join(dataDir, "invalid.asdf"));
  o = await opened();
  check(!o.error, "the invalid file opens", o.error);
  check(o.info.validation.valid === false, "it is reported invalid", o.info.validation);
  await page.click("#validation-tab");
  const v = await page.locator("#validation").textContent();
  check(v.includes("/asdf_library/name") && /line \d+:\d+/.test(v), "the violation is shown with its pointer and line:column", v);
  await page.screenshot({ path: path.join(shotDir, "viewer-invalid.png") });

  // 2b. The viewer opened from its folder as a file (file://, no server): a local file.
  await page.goto(`file://${path.resolve(dataDir, "index.html")}`);
  await page.setInputFiles("#file", path.join(dataDir, "jwst.asdf"));
  o = await opened();
  check(!o.error && o.info.images.includes("/data"), "the viewer works opened as a file (file://)", o.error);
  await drawn();

  // 3. A file that is not ASDF, and a hostile one: a message, and the page still answers.
  await page.goto(`${base}/index.html`);
  await page.setInputFiles("#file", path.join(dataDir, "hostile.asdf"));
  o = await opened();
  check(!!o.error, "a hostile file gives a message", o);
  summary.hostile_message = o.error;
  const t = Date.now();
  await page.evaluate(() => 1 + 1);
  check(Date.now() - t < 1000, "the page answers after it");

  // 4. A 1 GiB file by URL: only its head, tree and block index are read.
  await reset();
  await page.goto(`${base}/index.html?url=${encodeURIComponent(base + "/big.asdf")}`);
  o = await opened();
  check(!o.error, "the 1 GiB file opens", o.error);
  // Stop before the first picture reads the array: the counter was read at the open.
  summary.gib_read_by_viewer = o.info.read;
  check(o.info.read.bytes < 1 << 20, "opening the 1 GiB file read less than 1 MiB", o.info.read);
  // What the server sent of the file itself (the page's own files left out).
  const log = (await stats()).log.filter((e) => e[1] === "/big.asdf");
  summary.gib_served = { bytes: log.reduce((n, e) => n + (e[3] - e[2]), 0), requests: log.length };
  check(summary.gib_served.bytes < 1 << 20, "the server sent less than 1 MiB of the 1 GiB file", summary.gib_served);

  // 5. A 100 MB file: the time from the page's start to its tree shown.
  t0 = Date.now();
  await page.goto(`${base}/index.html?url=${encodeURIComponent(base + "/hundred.asdf")}`);
  await page.waitForFunction(() => window.viewer.info && document.querySelectorAll("#tree .row").length > 3, null, { timeout: 60000 });
  summary.hundred_mb_tree_ms = Date.now() - t0;
  summary.hundred_mb_open_ms_in_worker = await page.evaluate(() => window.viewer.opened.ms);
  check(pageErrors.length === 0, "no error in the page", pageErrors);
} finally {
  await browser.close();
}
console.log(JSON.stringify(summary));
