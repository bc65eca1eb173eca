//! Errors as libasdf reports them: a code, a message and an errno on the file (and, for a
//! file that failed to open, on the calling thread: `asdf_error(NULL)`).

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};

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
    pub(crate) fn from_raw(c: c_int) -> Code {
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

/// The libasdf code nearest to an engine error (the message says the rest).
pub(crate) fn code_of(e: &asdf::Error) -> Code {
    let text = e.to_string().to_ascii_lowercase();
    let has = |w: &[&str]| w.iter().any(|x| text.contains(x));
    match e.kind() {
        asdf::ErrorKind::Io => Code::System,
        asdf::ErrorKind::Yaml => Code::YamlParseFailed,
        _ if has(&["unknown compression", "codec", "compression label", "unknown label"]) => Code::UnknownCompression,
        _ if has(&["decompress", "compress"]) => Code::CompressionFailed,
        _ if has(&["end of file", "truncated", "too short", "unexpected end", "empty"]) => Code::UnexpectedEof,
        _ if has(&["header", "#asdf", "not an asdf"]) => Code::InvalidAsdfHeader,
        _ if has(&["magic"]) => Code::BlockMagicMismatch,
        _ if has(&["block"]) => Code::InvalidBlockHeader,
        asdf::ErrorKind::Format => Code::InvalidAsdfHeader,
        _ => Code::UnknownState,
    }
}

/// The last error of a file (or of the thread).
#[derive(Debug, Default)]
pub(crate) struct ErrorState {
    code: Option<Code>,
    message: Option<CString>,
    pub(crate) errno: c_int,
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
