//! The library for the browser viewer: a C-style interface over one open file, called by the
//! viewer's worker (`web/worker.js`), and the same operations as Rust functions for tests.
//!
//! The worker gives the module its reads: the import `host.read(offset, len, dst)` answers
//! from a `File` (`FileReaderSync`) or a URL (synchronous range requests), so the module never
//! holds more of a file than it reads. Results come back as JSON in an output buffer
//! (`asdf_out_ptr`/`asdf_out_len`), pictures as RGBA (`asdf_img_ptr`/`asdf_img_len`) with the
//! drawn values as `f32` (`asdf_vals_ptr`/`asdf_vals_len`).
//!
//! No `wasm-bindgen`: the interface is a dozen functions of integers, which the worker calls
//! directly; its JavaScript is the viewer's own (`web/`).

mod session;
mod source;
mod world;

pub use session::{Drawn, Session};
pub use source::{Fetch, HostSource};

use std::sync::Mutex;

/// The one open file and the last results.
#[derive(Default)]
struct State {
    session: Option<Session>,
    out: Vec<u8>,
    img: Vec<u8>,
    vals: Vec<f32>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    let mut g = STATE.lock().ok()?;
    Some(f(g.get_or_insert_with(State::default)))
}

/// JSON for the page: `{"ok": ...}` or `{"error": "..."}`.
fn answer(state: &mut State, result: Result<serde_json::Value, String>) -> usize {
    let v = match result {
        Ok(v) => serde_json::json!({ "ok": v }),
        Err(e) => serde_json::json!({ "error": e }),
    };
    state.out = serde_json::to_vec(&v).unwrap_or_default();
    state.out.len()
}

/// Opens a file of `size` bytes read through `fetch`; the description of the file.
///
/// # Errors
/// The library's message.
pub fn open_with(size: u64, fetch: Fetch) -> Result<serde_json::Value, String> {
    let session = Session::open(HostSource::new(size, fetch)).map_err(|e| e.to_string())?;
    let mut d = session.describe();
    let (bytes, requests) = session.host_stats();
    d["read"] = serde_json::json!({ "bytes": bytes, "requests": requests });
    with_state(|s| s.session = Some(session));
    Ok(d)
}

/// Draws what `request` (JSON) asks of the open file; with `"op": "world"` or `"grid"`, the
/// world coordinates of pixels or a coordinate grid (JSON only).
///
/// # Errors
/// A message: no file open, a bad request, the array's error.
pub fn draw_json(request: &[u8]) -> Result<Drawn, String> {
    let req: serde_json::Value = serde_json::from_slice(request).map_err(|e| format!("request: {e}"))?;
    with_state(|s| match &s.session {
        Some(session) => match req["op"].as_str() {
            // World coordinates: an answer without a picture.
            Some(op @ ("world" | "grid")) => {
                let header = if op == "world" {
                    world::world(session.file(), &req)
                } else {
                    world::grid(session.file(), &req)
                }?;
                Ok(Drawn {
                    header,
                    rgba: Vec::new(),
                    values: Vec::new(),
                })
            }
            _ => session.draw(&req),
        },
        None => Err("no file is open".to_owned()),
    })
    .unwrap_or_else(|| Err("the viewer's state was lost".to_owned()))
}

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "host")]
    unsafe extern "C" {
        /// Copies up to `len` bytes of the file at `offset` into `dst`; the count copied, or
        /// a negative number when the read failed (its message is then in the page's log).
        pub fn read(offset: f64, len: u32, dst: *mut u8) -> i32;
    }
}

/// Opens the file the host reads, `size` bytes long; the answer's length (JSON in the
/// output buffer).
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub extern "C" fn asdf_open(size: f64) -> usize {
    let fetch: Fetch = Box::new(|offset, buf| {
        let len = u32::try_from(buf.len()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: `buf` is a live, exclusive buffer of `len` bytes for the call; the host
        // writes at most `len` bytes into it and keeps no reference.
        let n = unsafe { host::read(offset as f64, len, buf.as_mut_ptr()) };
        usize::try_from(n).map_err(|_| std::io::Error::other("the page could not read the file"))
    });
    // A browser's sizes are whole numbers below 2^53; anything else is refused.
    let result = if size.is_finite() && size >= 0.0 && size.fract() == 0.0 && size < 9.007_199_254_740_992e15 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked above: a whole number below 2^53"
        )]
        let size = size as u64;
        open_with(size, fetch)
    } else {
        Err(format!("not a file size: {size}"))
    };
    with_state(|s| answer(s, result)).unwrap_or(0)
}

/// Draws the array the request (JSON, `len` bytes at `ptr`, written with [`asdf_alloc`])
/// names; the answer's length. The picture is then in the image buffer.
///
/// # Safety
/// `ptr` is null or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_draw(ptr: *const u8, len: usize) -> usize {
    let request = if ptr.is_null() {
        Vec::new()
    } else {
        // SAFETY: the page wrote `len` bytes at `ptr`, a buffer it took with `asdf_alloc`
        // and has not freed.
        unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()
    };
    let drawn = draw_json(&request);
    with_state(|s| match drawn {
        Ok(d) => {
            s.img = d.rgba;
            s.vals = d.values;
            answer(s, Ok(d.header))
        }
        Err(e) => answer(s, Err(e)),
    })
    .unwrap_or(0)
}

/// Closes the open file.
#[unsafe(no_mangle)]
pub extern "C" fn asdf_close() {
    with_state(|s| *s = State::default());
}

/// A buffer of `len` bytes for the page to write a request into.
#[unsafe(no_mangle)]
pub extern "C" fn asdf_alloc(len: usize) -> *mut u8 {
    let mut v = vec![0u8; len].into_boxed_slice();
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Frees a buffer [`asdf_alloc`] gave.
///
/// # Safety
/// `ptr` and `len` are those of one buffer [`asdf_alloc`] gave, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        // SAFETY: `ptr` and `len` are those of a boxed slice `asdf_alloc` leaked, freed once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
    }
}

/// The output buffer (JSON of the last answer).
#[unsafe(no_mangle)]
pub extern "C" fn asdf_out_ptr() -> *const u8 {
    with_state(|s| s.out.as_ptr()).unwrap_or(std::ptr::null())
}

/// The image buffer (RGBA of the last picture).
#[unsafe(no_mangle)]
pub extern "C" fn asdf_img_ptr() -> *const u8 {
    with_state(|s| s.img.as_ptr()).unwrap_or(std::ptr::null())
}

/// The values of the last image, one `f32` per pixel.
#[unsafe(no_mangle)]
pub extern "C" fn asdf_vals_ptr() -> *const f32 {
    with_state(|s| s.vals.as_ptr()).unwrap_or(std::ptr::null())
}

/// Bytes of the image buffer.
#[unsafe(no_mangle)]
pub extern "C" fn asdf_img_len() -> usize {
    with_state(|s| s.img.len()).unwrap_or(0)
}

/// Writes the viewer's folder: the page's files (from `page`, the repository's `web/`), the
/// module, and `inline.js`, which holds the worker's source and the module as base64 for a
/// page opened from the folder itself (`file://`, where a browser loads neither a worker
/// script nor a module by URL).
///
/// # Errors
/// The file system's.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_viewer(out: &std::path::Path, wasm: &[u8], page: &std::path::Path) -> std::io::Result<()> {
    use base64::Engine as _;
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("asdf_web.wasm"), wasm)?;
    for entry in std::fs::read_dir(page)? {
        let p = entry?.path();
        if let (true, Some(name)) = (p.is_file(), p.file_name()) {
            std::fs::copy(&p, out.join(name))?;
        }
    }
    let worker = std::fs::read_to_string(page.join("worker.js"))?;
    let inline = format!(
        "// Written by `cargo xtask web`: the worker and the module for a page opened as a file.\nwindow.ASDF_VIEWER_INLINE = {{ worker: {}, wasm: \"{}\" }};\n",
        serde_json::Value::from(worker),
        base64::engine::general_purpose::STANDARD.encode(wasm)
    );
    std::fs::write(out.join("inline.js"), inline)
}
