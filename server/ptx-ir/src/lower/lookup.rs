//! The lookups the pass makes for every statement: the source line of an offset (a
//! cursor moving forward) and the id of a register name (a dense table keyed by the
//! name's prefix and number, a map for the rest).

use super::*;

/// Counts lines forward through the source; rewinds (rarely) when asked for an earlier
/// offset.
pub(super) struct LineCursor<'s> {
    pub(super) src: &'s [u8],
    pub(super) pos: usize,
    pub(super) line: u32,
}

/// Number of `\n` bytes in `bytes`, eight at a time: the gaps between instructions are
/// a few dozen bytes, where a byte loop cost about 3 instructions per byte.
pub(super) fn count_newlines(bytes: &[u8]) -> usize {
    const LO: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NL: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut chunks = bytes.chunks_exact(8);
    let mut n = 0usize;
    for chunk in &mut chunks {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(chunk);
        // Exact zero-byte test of `w ^ NL` (no false positives from borrows): a byte's
        // high bit ends up set iff the byte was `\n`.
        let t = u64::from_le_bytes(buf) ^ NL;
        let hits = !(((t & LO) + LO) | t | LO);
        n += hits.count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&b| b == b'\n').count()
}

impl LineCursor<'_> {
    #[inline]
    pub(super) fn line_of(&mut self, offset: u32) -> u32 {
        let offset = (offset as usize).min(self.src.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        let n = count_newlines(&self.src[self.pos..offset]);
        self.line += n as u32;
        self.pos = offset;
        self.line
    }
}

/// No register has this id (an empty slot of a dense table).
pub(super) const NO_REG: RegId = RegId::MAX;

/// Dense register numbers are used below this bound; larger numbers (compilers number
/// registers from 0 up to the count they declare) go to the hash map, so a name such as
/// `%r99999` cannot make the table allocate much.
pub(super) const DENSE_LIMIT: usize = 1 << 14;

/// Register name → id for one function. Compiler-generated names are a short prefix and a
/// decimal number (`%r17`, `%rd3`, `%fd120`, `%p2`), so they are found by comparing the
/// prefix (packed into one integer) against the few the function uses and indexing a
/// vector by the number. Other names (`%tid.x`, `%r01`, long prefixes, user names) use a
/// hash map. Ids are assigned by the caller in first-use order, so they are the ones a
/// single map would give.
#[derive(Default)]
pub(super) struct RegTable<'a> {
    pub(super) prefixes: Vec<(u64, Vec<RegId>)>,
    pub(super) names: FxMap<&'a str, RegId>,
}

/// Splits `%rd12` into (`%rd` packed as an integer, 12). `None` when there is no number
/// or no prefix, when the prefix is longer than 7 bytes, when the number has a leading
/// zero (`%r01` and `%r1` are different registers), or when it is at least
/// [`DENSE_LIMIT`].
#[inline]
pub(super) fn split_reg(name: &str) -> Option<(u64, usize)> {
    let b = name.as_bytes();
    if b.len() < 2 || b.len() > 12 {
        return None;
    }
    let mut i = b.len();
    let mut n = 0usize;
    let mut scale = 1usize;
    while i > 0 {
        let d = b[i - 1].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        n += usize::from(d) * scale;
        scale *= 10;
        i -= 1;
    }
    let digits = b.len() - i;
    if i == 0 || i > 7 || digits == 0 || digits > 5 || (digits > 1 && b[i] == b'0') {
        return None;
    }
    if n >= DENSE_LIMIT {
        return None;
    }
    // Length in the top byte, bytes below: distinct prefixes get distinct keys.
    let mut key = (i as u64) << 56;
    for (k, &c) in b[..i].iter().enumerate() {
        key |= u64::from(c) << (8 * k);
    }
    Some((key, n))
}

impl<'a> RegTable<'a> {
    pub(super) fn clear(&mut self) {
        self.prefixes.clear();
        self.names.clear();
    }

    /// The id of `name`, whose [`split_reg`] is `split`.
    #[inline]
    pub(super) fn get(&self, split: Option<(u64, usize)>, name: &str) -> Option<RegId> {
        match split {
            Some((prefix, n)) => {
                let (_, ids) = self.prefixes.iter().find(|(p, _)| *p == prefix)?;
                ids.get(n).copied().filter(|&id| id != NO_REG)
            }
            None => self.names.get(name).copied(),
        }
    }

    pub(super) fn insert(&mut self, split: Option<(u64, usize)>, name: &'a str, id: RegId) {
        match split {
            Some((prefix, n)) => {
                let at = match self.prefixes.iter().position(|(p, _)| *p == prefix) {
                    Some(at) => at,
                    None => {
                        self.prefixes.push((prefix, Vec::new()));
                        self.prefixes.len() - 1
                    }
                };
                let ids = &mut self.prefixes[at].1;
                if ids.len() <= n {
                    ids.resize((n + 1).max(ids.len() * 2), NO_REG);
                }
                ids[n] = id;
            }
            None => {
                self.names.insert(name, id);
            }
        }
    }
}

/// Interns a register of the current function: its id, creating it on first use.
#[inline]
pub(super) fn intern_reg<'a>(regs: &mut RegTable<'a>, func: &mut Function, name: &'a str) -> RegId {
    let split = split_reg(name);
    if let Some(id) = regs.get(split, name) {
        return id;
    }
    let id = func.registers.len() as RegId;
    func.registers.push(Register {
        name: name.to_string(),
        ty: None,
        special: SpecialReg::from_name(name),
    });
    func.defs.push(SmallVec::new());
    regs.insert(split, name, id);
    id
}
