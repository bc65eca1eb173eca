//! Block compression: the 4-byte labels, the [`Codec`] trait and a registry users can extend.
//!
//! Built in: `zlib`, `bzp2`, `lz4` (Python asdf's chunked framing); with cargo features
//! `zstd`, `lz4f`, `blsc` (blosc1 chunk) and `bls2` (blosc2 chunk or frame). A codec decodes into a buffer of exactly the block's `data_size`, so a
//! stream that decodes to more or fewer bytes is an error, and no decoder allocates by what the
//! compressed bytes claim.

#[cfg(any(feature = "blsc", feature = "bls2"))]
mod blosc;
mod bzp2;
mod codec;
pub mod exec;
mod lz4;
#[cfg(feature = "lz4f")]
mod lz4f;
mod registry;
mod stream;
mod zlib;
#[cfg(feature = "zstd")]
mod zstd;

#[cfg(feature = "blsc")]
pub use blosc::Blosc1;
#[cfg(any(feature = "blsc", feature = "bls2"))]
pub use blosc::BloscError;
#[cfg(feature = "bls2")]
pub use blosc::{AbacusBlosc2, Blosc2, Blosc2Codec, Blosc2Filter, FrameMeta, b2nd_array_bytes, frame_metalayers};
pub use bzp2::Bzp2;
pub use lz4::Lz4;
#[cfg(feature = "lz4f")]
pub use lz4f::Lz4Frame;
pub use zlib::Zlib;
#[cfg(feature = "zstd")]
pub use zstd::Zstd;

pub use codec::{Codec, CodecError, Label, PIECE, decode_range_by_pieces, zeroed};
pub use exec::{threads, with_threads};
pub use registry::Registry;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::par_ordered;

    #[test]
    fn labels() {
        assert_eq!(Label::from_name("lz4"), Some(Label::LZ4));
        assert_eq!(Label::from_name("none"), Some(Label::NONE));
        assert_eq!(Label::from_name("zlibx"), None);
        assert_eq!(Label::LZ4.to_string(), "lz4");
        assert_eq!(Label(*b"x\xffy\0").to_string(), "x\\xffy");
        let r = Registry::default();
        for label in r.labels() {
            assert_eq!(r.get(label).unwrap().label(), label);
        }
        assert!(r.get(Label::ZLIB).is_some());
        assert!(r.get(Label(*b"xxxx")).is_none());
    }

    /// Results come in order however the workers finish; an error of `emit` stops the rest;
    /// a panic in `f` reaches the caller (no result is dropped silently, no worker waits forever).
    #[test]
    fn par_ordered_keeps_order_and_stops() {
        for n in [0usize, 1, 2, 7, 100] {
            let mut got = Vec::new();
            par_ordered(
                n,
                3,
                |k| {
                    // Uneven work so that results arrive out of order.
                    std::thread::sleep(std::time::Duration::from_micros(((k * 7919) % 13) as u64 * 50));
                    k * 2
                },
                &mut |v| {
                    got.push(v);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, (0..n).map(|k| k * 2).collect::<Vec<_>>());
        }
        let mut seen = 0;
        let e = par_ordered(1000, 2, |k| k, &mut |v| {
            seen += 1;
            if v == 5 {
                Err(CodecError::Framing { at: 5 })
            } else {
                Ok(())
            }
        });
        assert!(matches!(e, Err(CodecError::Framing { at: 5 })));
        assert_eq!(seen, 6);
        let caught = std::panic::catch_unwind(|| {
            par_ordered(50, 2, |k| if k == 17 { panic!("bug in f") } else { k }, &mut |_| Ok(()))
        });
        assert!(caught.is_err());
        let caught = std::panic::catch_unwind(|| {
            par_ordered(50, 2, |k| k, &mut |v| {
                if v == 3 { panic!("bug in emit") } else { Ok(()) }
            })
        });
        assert!(caught.is_err());
    }

    /// Every built-in codec round-trips, including empty input, and rejects a wrong size.
    #[test]
    fn round_trip_all() {
        let r = Registry::default();
        let mut data = Vec::new();
        for i in 0u32..50_000 {
            data.extend_from_slice(&((i % 1000) ^ (i >> 7)).to_le_bytes());
        }
        for label in r.labels() {
            let c = r.get(label).unwrap();
            for input in [&data[..], &data[..1], &[][..]] {
                let mut enc = Vec::new();
                c.encode(input, &mut enc).unwrap();
                let mut out = vec![0u8; input.len()];
                c.decode(&enc, &mut out).unwrap();
                assert_eq!(out, input, "{label}");
                let mut short = vec![0u8; input.len() + 1];
                assert!(c.decode(&enc, &mut short).is_err(), "{label}: too little");
                if !input.is_empty() {
                    let mut long = vec![0u8; input.len() - 1];
                    assert!(c.decode(&enc, &mut long).is_err(), "{label}: too much");
                }
            }
            let mut garbage = vec![0u8; 100];
            assert!(c.decode(b"\x01\x02garbage", &mut garbage).is_err(), "{label}");
        }
    }
}
