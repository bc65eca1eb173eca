// The viewer's worker: the asdf-rs library (asdf_web.wasm) and the file's reads, off the
// page's thread. A File is read by slices (FileReaderSync), a URL by synchronous HTTP range
// requests, each only when the library asks: opening a file reads its header, tree and block
// index, not its arrays.
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

function urlReader(url) {
  // The size from the first range's Content-Range (bytes 0-0/SIZE).
  const first = rangeRequest(url, 0, 0);
  const range = first.getResponseHeader("Content-Range") || "";
  const size = Number(range.split("/")[1]);
  if (!Number.isSafeInteger(size)) {
    throw new Error(`${url}: no size in Content-Range ("${range}"); a server on another origin must expose it (Access-Control-Expose-Headers: Content-Range)`);
  }
  return [size, (offset, len) => {
    const end = Math.min(offset + len, size) - 1;
    if (end < offset) return new Uint8Array(0);
    return new Uint8Array(rangeRequest(url, offset, end).response);
  }];
}

function open(size, reader, name) {
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
    postMessage({ type: "opened", name, size, ms, info: answer.ok });
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
      const [size, reader] = urlReader(m.url);
      open(size, reader, m.url);
    } else if (m.type === "draw") {
      draw(m.request);
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
