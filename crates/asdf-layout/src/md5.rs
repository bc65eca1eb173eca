//! MD5, the checksum of every block header.
//!
//! With the `fast-md5` feature (on targets other than wasm32), MD5 is AWS-LC's: the
//! hand-scheduled x86-64 and AArch64 assembly that OpenSSL also uses, about 1.25x the speed
//! of the `md-5` crate on the machines here (its `asm` feature included; the numbers are in
//! docs/ARCHITECTURE.md). AWS-LC is already built for the TLS of remote reads, so the feature
//! costs no new C build where remote reads are on. Without the feature, the `md-5` crate.

/// An MD5 computation: bytes added with [`Md5::update`], the digest from [`Md5::finalize`].
pub struct Md5(Inner);

#[cfg(all(feature = "fast-md5", not(target_arch = "wasm32")))]
type Inner = aws::Ctx;
#[cfg(not(all(feature = "fast-md5", not(target_arch = "wasm32"))))]
type Inner = ::md5::Md5;

impl Default for Md5 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Md5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Md5")
    }
}

impl Md5 {
    /// A new computation.
    #[must_use]
    pub fn new() -> Self {
        #[cfg(all(feature = "fast-md5", not(target_arch = "wasm32")))]
        {
            Self(aws::Ctx::new())
        }
        #[cfg(not(all(feature = "fast-md5", not(target_arch = "wasm32"))))]
        {
            use ::md5::Digest as _;
            Self(::md5::Md5::new())
        }
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        #[cfg(all(feature = "fast-md5", not(target_arch = "wasm32")))]
        self.0.update(bytes);
        #[cfg(not(all(feature = "fast-md5", not(target_arch = "wasm32"))))]
        ::md5::Digest::update(&mut self.0, bytes);
    }

    /// The digest of every byte added.
    #[must_use]
    pub fn finalize(self) -> [u8; 16] {
        #[cfg(all(feature = "fast-md5", not(target_arch = "wasm32")))]
        {
            self.0.finalize()
        }
        #[cfg(not(all(feature = "fast-md5", not(target_arch = "wasm32"))))]
        {
            ::md5::Digest::finalize(self.0).into()
        }
    }
}

/// MD5 of `bytes`.
#[must_use]
pub fn md5_of(bytes: &[u8]) -> [u8; 16] {
    let mut m = Md5::new();
    m.update(bytes);
    m.finalize()
}

#[cfg(all(feature = "fast-md5", not(target_arch = "wasm32")))]
mod aws {
    use aws_lc_sys::{MD5_CTX, MD5_Final, MD5_Init, MD5_Update};

    /// AWS-LC's MD5 state (plain data: no pointers, nothing to free).
    pub(super) struct Ctx(MD5_CTX);

    // SAFETY: MD5_CTX is plain integers and a byte buffer, owned by this value alone.
    unsafe impl Send for Ctx {}

    impl Ctx {
        pub(super) fn new() -> Self {
            let mut ctx = std::mem::MaybeUninit::<MD5_CTX>::zeroed();
            // SAFETY: MD5_Init writes the initial state into the (zeroed, properly sized and
            // aligned) context; it cannot fail (it returns 1).
            unsafe {
                MD5_Init(ctx.as_mut_ptr());
                Self(ctx.assume_init())
            }
        }

        pub(super) fn update(&mut self, bytes: &[u8]) {
            // SAFETY: the context was initialised by MD5_Init; `bytes` is a valid slice of
            // `bytes.len()` bytes for the call's duration.
            unsafe {
                MD5_Update(&mut self.0, bytes.as_ptr().cast(), bytes.len());
            }
        }

        pub(super) fn finalize(mut self) -> [u8; 16] {
            let mut out = [0u8; 16];
            // SAFETY: `out` holds the 16 bytes MD5_Final writes; the context is initialised.
            unsafe {
                MD5_Final(out.as_mut_ptr(), &mut self.0);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_whole_and_in_pieces() {
        // RFC 1321's test suite.
        let cases: [(&[u8], &str); 3] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        for (input, want) in cases {
            assert_eq!(hex(md5_of(input)), want);
            let mut m = Md5::new();
            for piece in input.chunks(7) {
                m.update(piece);
            }
            assert_eq!(hex(m.finalize()), want);
        }
        // The two implementations agree on a long, odd-sized input.
        let long: Vec<u8> = (0..1_000_003u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0])
            .collect();
        use ::md5::Digest as _;
        let reference: [u8; 16] = ::md5::Md5::digest(&long).into();
        assert_eq!(md5_of(&long), reference);
    }
}
