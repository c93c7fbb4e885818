//! The backup file's encryption: a passphrase through Argon2id gives a key;
//! XChaCha20-Poly1305 in the STREAM construction (RustCrypto's `aead`
//! `stream`, big-endian 32-bit counter with a last-chunk flag) seals the
//! archive in [`CHUNK`]-byte pieces, so a file of any size streams through
//! bounded memory and a truncated, reordered, changed or lengthened file fails to open.
//!
//! Layout: [`MAGIC`], then the KDF's memory (KiB), passes and lanes (u32 LE
//! each), the 16-byte salt and the 19-byte nonce prefix; then the chunks,
//! each [`CHUNK`] bytes of archive plus a 16-byte tag, the last one shorter
//! (possibly empty) and sealed as last. The whole header is every chunk's
//! associated data, so changing a parameter fails like changing a byte.

use std::io::{self, Read, Write};

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::generic_array::GenericArray;
use chacha20poly1305::aead::stream::{DecryptorBE32, EncryptorBE32};
use chacha20poly1305::aead::{KeyInit as _, Payload};

/// First bytes of every backup (format 1): names the file in a hex dump.
pub const MAGIC: &[u8; 16] = b"PORFIRY-BACKUP1\n";
/// Archive bytes per sealed chunk: 64 KiB keeps memory small and the 16-byte
/// tag's overhead under 0.03 %.
pub const CHUNK: usize = 64 * 1024;
/// Poly1305's tag.
const TAG: usize = 16;
/// Salt bytes: 128 bits, RFC 9106's recommendation.
const SALT: usize = 16;
/// STREAM's nonce prefix for XChaCha20 (24-byte nonce less 5 counter bytes).
const NONCE_PREFIX: usize = 19;
/// The whole header's length.
pub const HEADER: usize = MAGIC.len() + 12 + SALT + NONCE_PREFIX;

/// Argon2id's cost for new backups: 64 MiB and 3 passes, one lane — RFC
/// 9106's second recommended setting (for machines without 2 GiB to spare);
/// about a second on a home server, per guess, for whoever stole the file.
pub const KDF_MEMORY_KIB: u32 = 64 * 1024;
/// Argon2id passes for new backups (see [`KDF_MEMORY_KIB`]).
pub const KDF_PASSES: u32 = 3;
/// Largest memory cost a backup file may ask for when opened: 1 GiB, so a
/// crafted header cannot make `restore` allocate without bound.
pub const MAX_KDF_MEMORY_KIB: u32 = 1024 * 1024;
/// Largest pass count a backup may ask for (the same reason).
pub const MAX_KDF_PASSES: u32 = 16;
/// Largest lane count a backup may ask for (the same reason).
pub const MAX_KDF_LANES: u32 = 16;

/// The key derivation's cost, as written in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfCost {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes over it.
    pub passes: u32,
    /// Lanes.
    pub lanes: u32,
}

impl Default for KdfCost {
    fn default() -> Self {
        Self {
            memory_kib: KDF_MEMORY_KIB,
            passes: KDF_PASSES,
            lanes: 1,
        }
    }
}

/// Why a backup could not be sealed or opened: each one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CryptError {
    /// Not a backup (or not one this version reads).
    #[error("not a porfiry backup (format 1)")]
    NotABackup,
    /// The file ends before its header does, or before its last chunk.
    #[error("the backup is truncated")]
    Truncated,
    /// A chunk fails authentication.
    #[error("wrong passphrase, or the backup is damaged or was changed")]
    Refused,
    /// The header asks for more than the `MAX_KDF_*` bounds.
    #[error("the backup asks for a key derivation beyond this node's bounds")]
    KdfTooCostly,
    /// Argon2 refused its parameters.
    #[error("key derivation: {0}")]
    Kdf(String),
}

impl From<CryptError> for io::Error {
    fn from(e: CryptError) -> Self {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// The [`CryptError`] inside an I/O error from [`Sealer`] or [`Opener`], if any.
pub fn crypt_error(e: &io::Error) -> Option<&CryptError> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<CryptError>())
}

/// Derives the 32-byte key.
fn derive(passphrase: &[u8], salt: &[u8], cost: KdfCost) -> Result<[u8; 32], CryptError> {
    let params = Params::new(cost.memory_kib, cost.passes, cost.lanes, Some(32))
        .map_err(|e| CryptError::Kdf(e.to_string()))?;
    let mut key = [0u8; 32];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase, salt, &mut key)
        .map_err(|e| CryptError::Kdf(e.to_string()))?;
    Ok(key)
}

/// Writes the header and seals everything written to it; [`Sealer::finish`]
/// seals the last chunk (without it the file is truncated).
pub struct Sealer<W: Write> {
    out: W,
    header: Vec<u8>,
    stream: Option<EncryptorBE32<XChaCha20Poly1305>>,
    buf: Vec<u8>,
}

impl<W: Write> Sealer<W> {
    /// Starts a backup with a fresh random salt and nonce prefix.
    pub fn new(mut out: W, passphrase: &[u8], cost: KdfCost) -> io::Result<Self> {
        let mut salt = [0u8; SALT];
        let mut prefix = [0u8; NONCE_PREFIX];
        getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
        getrandom::fill(&mut prefix).map_err(|e| io::Error::other(e.to_string()))?;
        let key = derive(passphrase, &salt, cost)?;
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        for n in [cost.memory_kib, cost.passes, cost.lanes] {
            header.extend_from_slice(&n.to_le_bytes());
        }
        header.extend_from_slice(&salt);
        header.extend_from_slice(&prefix);
        out.write_all(&header)?;
        let aead = XChaCha20Poly1305::new(GenericArray::from_slice(&key));
        let stream = EncryptorBE32::from_aead(aead, GenericArray::from_slice(&prefix));
        Ok(Self {
            out,
            header,
            stream: Some(stream),
            buf: Vec::with_capacity(CHUNK),
        })
    }

    /// Seals the last chunk and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if self.buf.len() == CHUNK {
            self.seal_full()?;
        }
        let stream = self
            .stream
            .take()
            .ok_or_else(|| io::Error::other("sealed twice"))?;
        let sealed = stream
            .encrypt_last(Payload {
                msg: &self.buf,
                aad: &self.header,
            })
            .map_err(|_| io::Error::other("sealing failed"))?;
        self.out.write_all(&sealed)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Sealer<W> {
    /// Seals the full buffer as a chunk that is not the last.
    fn seal_full(&mut self) -> io::Result<()> {
        let stream = self
            .stream
            .as_mut()
            .ok_or_else(|| io::Error::other("sealed"))?;
        let sealed = stream
            .encrypt_next(Payload {
                msg: &self.buf,
                aad: &self.header,
            })
            .map_err(|_| io::Error::other("sealing failed"))?;
        self.out.write_all(&sealed)?;
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write> Write for Sealer<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        // A full chunk is sealed only once more data comes, so the last
        // chunk is always shorter than CHUNK (and the reader can tell).
        if self.buf.len() == CHUNK {
            self.seal_full()?;
        }
        let take = data.len().min(CHUNK - self.buf.len());
        self.buf.extend_from_slice(&data[..take]);
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads a backup's header and opens its chunks; reads end at the last
/// chunk, and any failure is a [`CryptError`] inside the I/O error.
pub struct Opener<R: Read> {
    input: R,
    header: Vec<u8>,
    stream: Option<DecryptorBE32<XChaCha20Poly1305>>,
    plain: Vec<u8>,
    at: usize,
    done: bool,
}

impl<R: Read> Opener<R> {
    /// Reads and checks the header, derives the key.
    pub fn new(mut input: R, passphrase: &[u8]) -> io::Result<Self> {
        let mut header = vec![0u8; HEADER];
        if fill(&mut input, &mut header)? < HEADER {
            return Err(if header.starts_with(MAGIC) {
                CryptError::Truncated
            } else {
                CryptError::NotABackup
            }
            .into());
        }
        if &header[..MAGIC.len()] != MAGIC {
            return Err(CryptError::NotABackup.into());
        }
        let word = |i: usize| {
            let at = MAGIC.len() + 4 * i;
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let cost = KdfCost {
            memory_kib: word(0),
            passes: word(1),
            lanes: word(2),
        };
        if cost.memory_kib > MAX_KDF_MEMORY_KIB
            || cost.passes > MAX_KDF_PASSES
            || cost.lanes > MAX_KDF_LANES
        {
            return Err(CryptError::KdfTooCostly.into());
        }
        let salt = &header[MAGIC.len() + 12..MAGIC.len() + 12 + SALT];
        let prefix = &header[MAGIC.len() + 12 + SALT..];
        let key = derive(passphrase, salt, cost)?;
        let aead = XChaCha20Poly1305::new(GenericArray::from_slice(&key));
        let stream = DecryptorBE32::from_aead(aead, GenericArray::from_slice(prefix));
        Ok(Self {
            input,
            header,
            stream: Some(stream),
            plain: Vec::new(),
            at: 0,
            done: false,
        })
    }

    /// Opens the next chunk into `plain`.
    fn next_chunk(&mut self) -> io::Result<()> {
        let mut sealed = vec![0u8; CHUNK + TAG];
        let got = fill(&mut self.input, &mut sealed)?;
        if got < TAG {
            return Err(CryptError::Truncated.into());
        }
        let payload = Payload {
            msg: &sealed[..got],
            aad: &self.header,
        };
        self.plain = if got == CHUNK + TAG {
            let stream = self.stream.as_mut().ok_or(CryptError::Refused)?;
            stream
                .decrypt_next(payload)
                .map_err(|_| CryptError::Refused)?
        } else {
            let stream = self.stream.take().ok_or(CryptError::Refused)?;
            // Bytes appended after the end join this read, so it fails too.
            let plain = stream
                .decrypt_last(payload)
                .map_err(|_| CryptError::Refused)?;
            self.done = true;
            plain
        };
        self.at = 0;
        Ok(())
    }
}

impl<R: Read> Read for Opener<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.plain.len() {
            if self.done {
                return Ok(0);
            }
            self.next_chunk()?;
        }
        let n = out.len().min(self.plain.len() - self.at);
        out[..n].copy_from_slice(&self.plain[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
#[path = "crypt_tests.rs"]
mod tests;
