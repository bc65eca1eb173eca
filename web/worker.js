// The viewer's worker: the asdf-rs library (asdf_web.wasm) and the file's reads, off the
// page's thread. A File is read by slices (FileReaderSync), a URL by synchronous HTTP range
// requests, each only when the library asks: opening a file reads its header, tree and block
// index, not its arrays. A server that ignores range requests (`python3 -m http.server`) has
// its whole answer used when the file is within WHOLE_LIMIT, with a notice in the page.
"use strict";

let wasm = null;
let read = null;
let readError = null;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The module: given by the page (a page opened as a file, where it cannot be fetched), or
// fetched beside this script.
let init;
const given = new Promise((resolve) => (init = resolve));

const imports = {
  host: {
    read: (offset, len, dst) => {
      try {
        // Never more than asked: a server that sends a longer body must not write past the
        // module's buffer.
        const got = read(offset, len).subarray(0, len);
        new Uint8Array(wasm.memory.buffer, dst, got.byteLength).set(got);
        return got.byteLength;
      } catch (e) {
        readError = e;
        return -1;
      }
    },
  },
};

let compiled = null;

async function instantiate() {
  wasm = (await WebAssembly.instantiate(compiled, imports)).exports;
}

const ready = (async () => {
  const first = await given;
  const bytes = first.wasm || (await (await fetch("asdf_web.wasm")).arrayBuffer());
  compiled = await WebAssembly.compile(bytes);
  await instantiate();
})();

function output(len) {
  const text = decoder.decode(new Uint8Array(wasm.memory.buffer, wasm.asdf_out_ptr(), len));
  return JSON.parse(text);
}

function fileReader(file) {
  const reader = new FileReaderSync();
  return [file.size, (offset, len) => new Uint8Array(reader.readAsArrayBuffer(file.slice(offset, offset + len)))];
}

function rangeRequest(url, start, end) {
  const x = new XMLHttpRequest();
  x.open("GET", url, false);
  x.responseType = "arraybuffer";
  x.setRequestHeader("Range", `bytes=${start}-${end}`);
  x.send();
  if (x.status !== 206) {
    throw new Error(
      x.status === 200
        ? `${url}: the server does not answer range requests (it sent the whole file)`
        : `${url}: HTTP ${x.status} ${x.statusText}`
    );
  }
  return x;
}

// The largest file read whole from a server that ignores range requests (asdf-remote's
// default whole_limit is the same): such a server sends the whole file for every request, so
// the file is read once, into memory, and every read is answered from there.
const WHOLE_LIMIT = 256 * 1024 * 1024;

// A reader of the URL: [size, read(offset, len), notice or null].
async function urlReader(url) {
  // The first request by fetch (asynchronous: a whole answer can be measured as it comes and
  // dropped past the limit); the size from its Content-Range (bytes 0-0/SIZE).
  const first = await fetch(url, { headers: { Range: "bytes=0-0" } });
  if (first.status === 200) return wholeReader(url, first);
  if (first.status !== 206) {
    throw new Error(`${url}: HTTP ${first.status} ${first.statusText}`);
  }
  await first.arrayBuffer();
  const range = first.headers.get("Content-Range") || "";
  const size = Number(range.split("/")[1]);
  if (!Number.isSafeInteger(size)) {
    throw new Error(`${url}: no size in Content-Range ("${range}"); a server on another origin must expose it (Access-Control-Expose-Headers: Content-Range)`);
  }
  return [size, (offset, len) => {
    const end = Math.min(offset + len, size) - 1;
    if (end < offset) return new Uint8Array(0);
    return new Uint8Array(rangeRequest(url, offset, end).response);
  }, null];
}

// The whole answer of a server that ignored the range asked for, when it fits WHOLE_LIMIT;
// refused (and no more of it read) when it does not.
async function wholeReader(url, answer) {
  const over = (what) => new Error(
    `${url}: the server does not answer range requests (it sent the whole file), and the file (${what}) is over the viewer's limit of ${WHOLE_LIMIT} bytes for a file read whole; serve it with range requests`
  );
  const claimed = Number(answer.headers.get("Content-Length"));
  if (!answer.headers.get("Content-Encoding") && Number.isSafeInteger(claimed) && claimed > WHOLE_LIMIT) {
    if (answer.body) await answer.body.cancel();
    throw over(`${claimed} bytes`);
  }
  const parts = [];
  let got = 0;
  const reader = answer.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    got += value.byteLength;
    if (got > WHOLE_LIMIT) {
      await reader.cancel();
      throw over(`more than ${WHOLE_LIMIT} bytes`);
    }
    parts.push(value);
  }
  const whole = new Uint8Array(got);
  let at = 0;
  for (const p of parts) {
    whole.set(p, at);
    at += p.byteLength;
  }
  const notice = `The server does not answer range requests (it sent the whole file): the file's ${got} bytes were read whole into memory (the viewer does so up to ${WHOLE_LIMIT} bytes).`;
  return [got, (offset, len) => whole.subarray(offset, Math.min(offset + len, got)), notice];
}

function open(size, reader, name, notice) {
  wasm.asdf_close();
  read = reader;
  readError = null;
  const t0 = performance.now();
  const answer = output(wasm.asdf_open(size));
  const ms = performance.now() - t0;
  if (answer.error) {
    const why = readError ? `${answer.error} (${readError.message || readError})` : answer.error;
    postMessage({ type: "error", message: `${name}: ${why}` });
  } else {
    postMessage({ type: "opened", name, size, ms, info: answer.ok, notice: notice || null });
  }
}

function draw(request) {
  const bytes = encoder.encode(JSON.stringify(request));
  const ptr = wasm.asdf_alloc(bytes.length);
  new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
  readError = null;
  const t0 = performance.now();
  const answer = output(wasm.asdf_draw(ptr, bytes.length));
  wasm.asdf_free(ptr, bytes.length);
  if (answer.error) {
    const why = readError ? `${answer.error} (${readError.message || readError})` : answer.error;
    postMessage({ type: "error", message: `${request.pointer}: ${why}` });
    return;
  }
  const header = answer.ok;
  const rgba = new Uint8ClampedArray(wasm.memory.buffer, wasm.asdf_img_ptr(), wasm.asdf_img_len()).slice();
  let values = null;
  if (header.kind === "image") {
    values = new Float32Array(wasm.memory.buffer, wasm.asdf_vals_ptr(), header.width * header.height).slice();
  }
  postMessage({ type: "drawn", header, ms: performance.now() - t0, rgba, values }, [rgba.buffer].concat(values ? [values.buffer] : []));
}

// World coordinates of pixels, or a coordinate grid (answers without a picture).
function world(type, request) {
  const bytes = encoder.encode(JSON.stringify(request));
  const ptr = wasm.asdf_alloc(bytes.length);
  new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
  const answer = output(wasm.asdf_draw(ptr, bytes.length));
  wasm.asdf_free(ptr, bytes.length);
  postMessage({ type, answer, id: request.id });
}

onmessage = async (e) => {
  const m = e.data;
  if (m.type === "init") {
    init(m);
    return;
  }
  try {
    await ready;
    if (m.type === "open-file") {
      const [size, reader] = fileReader(m.file);
      open(size, reader, m.file.name);
    } else if (m.type === "open-url") {
      const [size, reader, notice] = await urlReader(m.url);
      open(size, reader, m.url, notice);
    } else if (m.type === "draw") {
      draw(m.request);
    } else if (m.type === "world" || m.type === "grid") {
      world(m.type, m.request);
    }
  } catch (err) {
    let message = String(err && err.message ? err.message : err);
    if (err instanceof WebAssembly.RuntimeError) {
      // The module stopped (out of memory, say): a fresh instance, with no file open.
      message = `the library stopped (${message}); open the file again`;
      await instantiate();
    }
    postMessage({ type: "error", message });
  }
};
