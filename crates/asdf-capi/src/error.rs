//! Errors as libasdf reports them: a code, a message and an errno on the file (and, for a
//! file that failed to open, on the calling thread: `asdf_error(NULL)`).

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};

use crate::file::File;
use crate::util::{bytes, guard};
use crate::value::Value;

/// libasdf's error codes (`asdf_error_code_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Code {
    None = 0,
    UnknownState,
    StreamInitFailed,
    StreamReadOnly,
    InvalidAsdfHeader,
    UnexpectedEof,
    InvalidBlockHeader,
    BlockMagicMismatch,
    YamlParserInitFailed,
    YamlParseFailed,
    OutOfMemory,
    System,
    InvalidArgument,
    UnknownCompression,
    CompressionFailed,
    ExtensionNotFound,
    OverLimit,
}

impl Code {
    fn from_raw(c: c_int) -> Code {
        const ALL: [Code; 17] = [
            Code::None,
            Code::UnknownState,
            Code::StreamInitFailed,
            Code::StreamReadOnly,
            Code::InvalidAsdfHeader,
            Code::UnexpectedEof,
            Code::InvalidBlockHeader,
            Code::BlockMagicMismatch,
            Code::YamlParserInitFailed,
            Code::YamlParseFailed,
            Code::OutOfMemory,
            Code::System,
            Code::InvalidArgument,
            Code::UnknownCompression,
            Code::CompressionFailed,
            Code::ExtensionNotFound,
            Code::OverLimit,
        ];
        usize::try_from(c)
            .ok()
            .and_then(|i| ALL.get(i).copied())
            .unwrap_or(Code::UnknownState)
    }

    /// The message of a code without arguments (those with arguments are formatted by the
    /// caller).
    fn message(self) -> &'static str {
        match self {
            Code::None => "",
            Code::UnknownState => "unknown parser state",
            Code::StreamInitFailed => "failed to initialize stream",
            Code::StreamReadOnly => "cannot write to a read-only stream or file",
            Code::InvalidAsdfHeader => "invalid ASDF header",
            Code::UnexpectedEof => "unexpected end of file",
            Code::InvalidBlockHeader => "invalid block header",
            Code::BlockMagicMismatch => "block magic mismatch",
            Code::YamlParserInitFailed => "YAML parser initialization failed",
            Code::YamlParseFailed => "YAML parsing failed",
            Code::OutOfMemory => "out of memory",
            Code::System => "system error",
            Code::InvalidArgument => "invalid argument",
            Code::UnknownCompression => "unknown compression type",
            Code::CompressionFailed => "compression error",
            Code::ExtensionNotFound => "no serializer registered for the extension",
            Code::OverLimit => "over limit",
        }
    }
}

/// The last error of a file (or of the thread).
#[derive(Debug, Default)]
pub(crate) struct ErrorState {
    code: Option<Code>,
    message: Option<CString>,
    errno: c_int,
}

impl ErrorState {
    /// Records an error: `message` (else the code's own, or the system's for an errno).
    pub(crate) fn set(&mut self, code: Code, message: Option<&str>, errno: c_int) {
        let text = match (message, code) {
            (Some(m), _) => m.to_owned(),
            (None, Code::System) => std::io::Error::from_raw_os_error(errno)
                .to_string()
                .split(" (os error")
                .next()
                .unwrap_or_default()
                .to_owned(),
            (None, c) => c.message().to_owned(),
        };
        self.code = Some(code);
        self.message = Some(crate::util::c_string(text.as_bytes()));
        self.errno = errno;
    }

    pub(crate) fn code(&self) -> c_int {
        self.code.map_or(0, |c| c as c_int)
    }

    pub(crate) fn message_ptr(&self) -> *const c_char {
        self.message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr())
    }
}

thread_local! {
    /// Errors of opens that gave no file (`asdf_error(NULL)`).
    pub(crate) static GLOBAL: RefCell<ErrorState> = RefCell::new(ErrorState::default());
}

/// Records an error on the calling thread (an open that returns NULL).
pub(crate) fn set_global(code: Code, message: Option<&str>, errno: c_int) {
    GLOBAL.with(|g| g.borrow_mut().set(code, message, errno));
}

/// For the C part's ASDF_ERROR_* functions: an error on `file`.
///
/// # Safety
/// `file` is NULL or a file of this library; `message` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_capi_file_error(file: *mut File, code: c_int, message: *const c_char, errnum: c_int) {
    guard((), || {
        // SAFETY: by the contract above.
        let message = unsafe { bytes(message) }.map(|m| String::from_utf8_lossy(m).into_owned());
        // SAFETY: by the contract above.
        match unsafe { file.as_mut() } {
            Some(f) => f.error.set(Code::from_raw(code), message.as_deref(), errnum),
            None => set_global(Code::from_raw(code), message.as_deref(), errnum),
        }
    });
}

/// For the C part's ASDF_ERROR_* functions: an error on the file of `value`.
///
/// # Safety
/// `value` is NULL or a value of this library whose file is open; `message` NULL or a C
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_capi_value_error(value: *mut Value, code: c_int, message: *const c_char, errnum: c_int) {
    // SAFETY: by the contract above.
    let file = unsafe { value.as_ref() }.map_or(std::ptr::null_mut(), |v| v.file);
    // SAFETY: `file` is NULL or the value's open file.
    unsafe { asdf_capi_file_error(file, code, message, errnum) };
}

/// `ASDF_ERROR_OOM(file)`.
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_file_error_oom(file: *mut File, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_file_error(file, Code::OutOfMemory as c_int, std::ptr::null(), 0) };
}

/// `ASDF_ERROR_OOM(value)`.
///
/// # Safety
/// As [`asdf_capi_value_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_error_oom(value: *mut Value, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_value_error(value, Code::OutOfMemory as c_int, std::ptr::null(), 0) };
}

/// `ASDF_ERROR_SYSTEM(file, errnum)`.
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_file_error_system(file: *mut File, errnum: c_int, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_file_error(file, Code::System as c_int, std::ptr::null(), errnum) };
}

/// `ASDF_ERROR_SYSTEM(value, errnum)`.
///
/// # Safety
/// As [`asdf_capi_value_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_error_system(value: *mut Value, errnum: c_int, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_value_error(value, Code::System as c_int, std::ptr::null(), errnum) };
}

/// The last error's message, or NULL (`file` NULL: the thread's last failed open).
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error(file: *mut File) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.message_ptr(),
            // (The thread's state lives as long as the thread; the pointer until its next
            // failed open.)
            None => GLOBAL.with(|g| g.borrow().message_ptr()),
        }
    })
}

/// The last error's code (`ASDF_ERR_NONE` when there is none).
///
/// # Safety
/// As [`asdf_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error_code(file: *mut File) -> c_int {
    guard(0, || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.code(),
            None => GLOBAL.with(|g| g.borrow().code()),
        }
    })
}

/// The errno of the last error (0 when it was not a system error).
///
/// # Safety
/// As [`asdf_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error_errno(file: *mut File) -> c_int {
    guard(0, || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.errno,
            None => GLOBAL.with(|g| g.borrow().errno),
        }
    })
}
