//! Factorizing text: a code per value and the distinct values in order of first appearance,
//! what `pandas.factorize` gives ([`crate::frame::Values::Factor`] takes columns in this form).
//!
//! [`TextIndex`] is an open-addressing table over a hash of each value's length and first 16
//! bytes (read as two words) and, past 16 bytes, the rest. A match is confirmed on the length and
//! the first 16 bytes, and on every byte of longer values, so two different values never share a
//! code, whatever their hashes. On short category names it costs a few nanoseconds a value,
//! about a third of `pandas.factorize` (BENCHMARKS.md, "Python overhead").

/// The first 16 bytes of the value at `data[start..start + len]` as two little-endian words,
/// zero past its end: with the length, the whole value when it has at most 16 bytes.
#[inline(always)]
fn prefix(data: &[u8], start: usize, len: usize) -> [u64; 2] {
    let mask = |bytes: usize| match bytes {
        8.. => u64::MAX,
        b => (1u64 << (8 * b)) - 1,
    };
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let (w0, w1) = match data.get(start..start + 16) {
        // 16 bytes readable: read them and clear the bytes past the value.
        Some(chunk) => (word(&chunk[..8]), word(&chunk[8..])),
        // Near the end of the buffer: copy the value's bytes.
        None => {
            let mut bytes = [0u8; 16];
            let m = len.min(16);
            bytes[..m].copy_from_slice(&data[start..start + m]);
            (word(&bytes[..8]), word(&bytes[8..]))
        }
    };
    [
        w0 & mask(len.min(8)),
        w1 & mask(len.saturating_sub(8).min(8)),
    ]
}

/// A distinct value: its bytes, length, prefix and hash.
struct Distinct<'d> {
    text: &'d [u8],
    prefix: [u64; 2],
    hash: u64,
}

/// The distinct values of a column seen so far, in order of first appearance, found by an
/// open-addressing table over a hash of each value's length, prefix (and, past 16 bytes, the
/// rest). A match is confirmed on the length and prefix, and on the whole bytes past 16: two
/// different values never share a code, whatever their hashes.
pub struct TextIndex<'d> {
    distinct: Vec<Distinct<'d>>,
    /// 1 + the index in `distinct`, or 0 for an empty slot; a power-of-two length.
    slots: Vec<u32>,
}

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl<'d> TextIndex<'d> {
    /// The code of `text`, a new one if it was not seen before.
    pub fn code(&mut self, text: &'d [u8]) -> i64 {
        self.code_at(text, 0, text.len())
    }

    /// The distinct values, in order of first appearance (value k has code k).
    pub fn distinct(&self) -> impl ExactSizeIterator<Item = &'d [u8]> + '_ {
        self.distinct.iter().map(|d| d.text)
    }

    /// An index with no values yet.
    pub fn new() -> Self {
        TextIndex {
            distinct: Vec::new(),
            slots: vec![0; 64],
        }
    }

    fn hash(text: &[u8], prefix: [u64; 2]) -> u64 {
        let mut h = (prefix[0].wrapping_mul(MIX) ^ prefix[1]).wrapping_mul(MIX) ^ text.len() as u64;
        if text.len() > 16 {
            for chunk in text[16..].chunks(8) {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                h = (h ^ u64::from_le_bytes(word))
                    .wrapping_mul(MIX)
                    .rotate_left(23);
            }
        }
        h.wrapping_mul(MIX)
    }

    fn slot(&self, hash: u64) -> usize {
        // The hash's high bits (the best mixed), as many as the table needs.
        (hash >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// The code of `data[start..start + len]`, a new one if it was not seen before. (Reading
    /// the value inside its buffer lets the prefix be read as two words.) Panics if the range
    /// is outside `data`.
    #[inline(always)]
    pub fn code_at(&mut self, data: &'d [u8], start: usize, len: usize) -> i64 {
        let text = &data[start..start + len];
        let prefix = prefix(data, start, len);
        let hash = Self::hash(text, prefix);
        let mask = self.slots.len() - 1;
        let mut at = self.slot(hash);
        loop {
            match self.slots[at] {
                0 => break,
                k => {
                    let d = &self.distinct[k as usize - 1];
                    if d.hash == hash
                        && d.prefix == prefix
                        && d.text.len() == len
                        && (len <= 16 || d.text == text)
                    {
                        return i64::from(k) - 1;
                    }
                    at = (at + 1) & mask;
                }
            }
        }
        self.distinct.push(Distinct { text, prefix, hash });
        let code = self.distinct.len();
        self.slots[at] = code as u32;
        if 2 * code > self.slots.len() {
            self.grow();
        }
        code as i64 - 1
    }

    /// Doubles the table and places every distinct value again.
    fn grow(&mut self) {
        self.slots = vec![0; 2 * self.slots.len()];
        let mask = self.slots.len() - 1;
        for (k, d) in self.distinct.iter().enumerate() {
            let mut at = self.slot(d.hash);
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = k as u32 + 1;
        }
    }
}

impl Default for TextIndex<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Codes and distinct values of `values`, distinct values in order of first appearance (as
/// `pandas.factorize`), for [`crate::frame::Values::Factor`].
///
/// ```
/// let values: Vec<String> = ["b", "a", "b", "c"].map(String::from).to_vec();
/// let (codes, uniques) = dpfair_data::factorize::factorize(&values);
/// assert_eq!(codes, [0, 1, 0, 2]);
/// assert_eq!(uniques, ["b", "a", "c"]);
/// ```
pub fn factorize(values: &[String]) -> (Vec<i64>, Vec<String>) {
    let mut index = TextIndex::new();
    let codes = values.iter().map(|v| index.code(v.as_bytes())).collect();
    let uniques = index
        .distinct()
        .map(|d| String::from_utf8(d.to_vec()).expect("the bytes of a String"))
        .collect();
    (codes, uniques)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_sharing_a_prefix_or_a_hash_bucket_keep_their_own_codes() {
        // Lengths 0 to 40 over a small alphabet: many values share their first 16 or 24 bytes,
        // and 3 · 41 values overflow the first table (64 slots) several times.
        let mut values = Vec::new();
        for len in 0..=40 {
            for c in ['x', 'y', 'z'] {
                values.push(format!("{}{c}", "p".repeat(len)));
            }
        }
        let mut repeated = values.clone();
        repeated.extend(values.iter().rev().cloned());
        let (codes, uniques) = factorize(&repeated);
        assert_eq!(uniques, values, "first-appearance order, nothing merged");
        for (value, &code) in repeated.iter().zip(&codes) {
            assert_eq!(&uniques[code as usize], value);
        }
    }

    #[test]
    fn a_value_read_inside_its_buffer_is_the_value_alone() {
        // `code_at` reads 16 bytes where it can: bytes after the value must not change its code.
        let data = b"abcXYZabcdefghijklmnopqrstuvwxyz";
        let mut index = TextIndex::new();
        let a = index.code_at(data, 0, 3);
        assert_eq!(index.code(b"abc"), a);
        assert_eq!(index.code_at(data, 6, 3), a);
        let long = index.code_at(data, 6, 20);
        assert_ne!(long, a);
        assert_eq!(index.code(&data[6..26]), long);
        assert_eq!(index.code(b""), index.code_at(data, 31, 0));
    }
}
