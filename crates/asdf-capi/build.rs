//! Gives the shared library libasdf's soname: programs built against libasdf load this
//! library unchanged.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libasdf.so.0.0.0");
    }
}
