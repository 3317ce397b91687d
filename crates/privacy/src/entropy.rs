//! Entropy: the randomness every release draws on, and the *public* randomness kept apart from it.
//!
//! A [`Noise`] holds two streams:
//! * the **release stream**, from which every mechanism draws its noise: the operating system's
//!   CSPRNG for every release a user makes ([`Noise::os`], [`Noise::os_with_public_seed`]), or a
//!   seeded ChaCha20 stream for tests and simulations ([`Noise::seeded`]), which makes the noise
//!   reproducible from the seed and so is **not private**: a ledger that records such a source
//!   says so ([`crate::Ledger::record_noise`]);
//! * the **public stream** ([`Noise::public_u64`], [`Noise::public_rng`]), a ChaCha20 stream for
//!   data-independent choices (row splits, random-feature bases, site partitions). A user's seed
//!   (`--seed`) keys only this stream, so a run's splits repeat while its noise does not. Nothing
//!   drawn from the release stream is ever handed out as public randomness.
//!
//! The OS source reads the kernel CSPRNG in blocks of [`OS_BLOCK`] bytes (one system call per
//! block instead of one per 64-bit word) and hands each byte out once. The exact samplers in
//! [`crate::samplers`] consume only uniform bits, so the same samplers run on either source.
//! See `docs/privacy.md` ("What `--seed` does") in the repository.

use rand::rngs::{ChaCha20Rng, SysRng};
use rand_core::{Rng, SeedableRng, UnwrapErr};
use serde::{Deserialize, Serialize};

/// Bytes read from the operating system per system call.
pub const OS_BLOCK: usize = 4096;

/// The ChaCha20 stream number of the public stream when it is keyed by the same seed as a
/// seeded release stream (stream 0): the two never overlap.
const PUBLIC_STREAM: u64 = 0x7075_626c_6963; // "public"

/// Where a run's release noise came from; recorded in its ledger and model file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseSource {
    /// The operating system's CSPRNG: private.
    Os,
    /// A seeded stream: reproducible from the seed, so **not private** (tests, simulations,
    /// `--insecure-seeded-noise`).
    Seeded,
    /// Not recorded (ledgers made outside a fit pipeline, and files written before dpfair
    /// recorded it).
    #[default]
    Unrecorded,
}

impl NoiseSource {
    /// Whether releases drawn from this source can be private.
    pub fn is_private(self) -> bool {
        self == NoiseSource::Os
    }
}

/// OS randomness, read a block at a time; every byte is used once.
struct OsBlock {
    os: UnwrapErr<SysRng>,
    buf: [u8; OS_BLOCK],
    pos: usize,
}

impl OsBlock {
    fn new() -> Box<Self> {
        Box::new(OsBlock {
            os: UnwrapErr(SysRng),
            buf: [0; OS_BLOCK],
            pos: OS_BLOCK,
        })
    }

    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        if self.pos + N > OS_BLOCK {
            self.os.fill_bytes(&mut self.buf);
            self.pos = 0;
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        out
    }
}

enum Source {
    Os(Box<OsBlock>),
    Seeded(Box<ChaCha20Rng>),
}

/// The random source every mechanism draws its noise from, with its separate public stream.
pub struct Noise {
    source: Source,
    public: Box<ChaCha20Rng>,
    seed: Option<u64>,
}

/// A public stream keyed by `seed`, on its own ChaCha20 stream number.
fn public_stream(seed: u64) -> Box<ChaCha20Rng> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(PUBLIC_STREAM);
    Box::new(rng)
}

/// A public stream keyed by fresh OS randomness.
fn os_public_stream() -> Box<ChaCha20Rng> {
    let mut key = [0u8; 32];
    UnwrapErr(SysRng).fill_bytes(&mut key);
    Box::new(ChaCha20Rng::from_seed(key))
}

impl Noise {
    /// Release noise from the operating system's CSPRNG; public randomness from a stream keyed
    /// by fresh OS randomness. The default for every fit.
    pub fn os() -> Self {
        Noise {
            source: Source::Os(OsBlock::new()),
            public: os_public_stream(),
            seed: None,
        }
    }

    /// Release noise from the operating system's CSPRNG; public randomness (splits, bases)
    /// reproducible from `seed`. This is what a user's `--seed` means.
    pub fn os_with_public_seed(seed: u64) -> Self {
        Noise {
            source: Source::Os(OsBlock::new()),
            public: public_stream(seed),
            seed: None,
        }
    }

    /// Release noise *and* public randomness reproducible from a 64-bit seed (two separate
    /// ChaCha20 streams). For tests and simulations only: noise that can be recomputed from the
    /// seed protects nothing, and a ledger that records this source says "not private".
    pub fn seeded(seed: u64) -> Self {
        Noise {
            source: Source::Seeded(Box::new(ChaCha20Rng::seed_from_u64(seed))),
            public: public_stream(seed),
            seed: Some(seed),
        }
    }

    /// The seed of the release stream, when it is reproducible.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// Where the release noise comes from.
    pub fn source(&self) -> NoiseSource {
        match self.source {
            Source::Os(_) => NoiseSource::Os,
            Source::Seeded(_) => NoiseSource::Seeded,
        }
    }

    /// 64 bits of public randomness (never from the release stream), e.g. a split seed.
    pub fn public_u64(&mut self) -> u64 {
        self.public.next_u64()
    }

    /// The public stream itself, for data-independent shuffles and draws.
    pub fn public_rng(&mut self) -> &mut ChaCha20Rng {
        &mut self.public
    }

    /// A new independent source derived from this one, of the same kind (seeded: fresh ChaCha20
    /// streams keyed by the next 64 bits of this release stream and of this public stream; OS:
    /// another OS handle, with a public stream keyed from this one's). Used to hand sub-tasks
    /// their own streams.
    pub fn fork(&mut self) -> Noise {
        let public = public_stream(self.public.next_u64());
        match &mut self.source {
            Source::Os(_) => Noise {
                source: Source::Os(OsBlock::new()),
                public,
                seed: None,
            },
            Source::Seeded(rng) => {
                let s = rng.next_u64();
                Noise {
                    source: Source::Seeded(Box::new(ChaCha20Rng::seed_from_u64(s))),
                    public,
                    seed: Some(s),
                }
            }
        }
    }
}

impl rand_core::TryRng for Noise {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(match &mut self.source {
            Source::Os(r) => u32::from_le_bytes(r.take::<4>()),
            Source::Seeded(r) => r.next_u32(),
        })
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(match &mut self.source {
            Source::Os(r) => u64::from_le_bytes(r.take::<8>()),
            Source::Seeded(r) => r.next_u64(),
        })
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        match &mut self.source {
            Source::Os(r) => r.os.fill_bytes(dst),
            Source::Seeded(r) => r.fill_bytes(dst),
        }
        Ok(())
    }
}

impl rand_core::TryCryptoRng for Noise {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_streams_repeat_and_differ_by_seed() {
        let a: Vec<u64> = (0..4).map(|_| Noise::seeded(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Noise::seeded(7).next_u64(), Noise::seeded(8).next_u64());
    }

    #[test]
    fn public_stream_is_separate_from_the_release_stream() {
        // Same seed: the public stream repeats, and it is not the release stream.
        let mut a = Noise::seeded(7);
        let mut b = Noise::seeded(7);
        let public: Vec<u64> = (0..4).map(|_| a.public_u64()).collect();
        assert_eq!(public, (0..4).map(|_| b.public_u64()).collect::<Vec<_>>());
        let mut c = Noise::seeded(7);
        let release: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_ne!(public, release);
        // A user's seed keys the public stream only: two OS sources with the same public seed
        // agree on public draws and differ on release draws.
        let mut x = Noise::os_with_public_seed(7);
        let mut y = Noise::os_with_public_seed(7);
        assert_eq!(x.public_u64(), y.public_u64());
        assert_ne!(
            (0..4).map(|_| x.next_u64()).collect::<Vec<_>>(),
            (0..4).map(|_| y.next_u64()).collect::<Vec<_>>()
        );
        assert_eq!(x.source(), NoiseSource::Os);
        assert_eq!(a.source(), NoiseSource::Seeded);
        assert_eq!(x.fork().source(), NoiseSource::Os);
        assert_eq!(a.fork().source(), NoiseSource::Seeded);
    }

    #[test]
    fn os_source_produces_varied_output() {
        let mut n = Noise::os();
        let xs: Vec<u64> = (0..8).map(|_| n.next_u64()).collect();
        assert!(xs.windows(2).any(|w| w[0] != w[1]));
    }
}
