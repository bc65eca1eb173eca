//! The command line's open path laid out together (see `build-support/symbol_order.rs`).

#[path = "build-support/symbol_order.rs"]
mod symbol_order;

fn main() {
    symbol_order::link("open-path.order");
}
