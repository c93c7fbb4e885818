//! Tests of the backup encryption: round trips at the chunk edges, and
//! every way a file can be wrong (passphrase, truncation, changed bytes,
//! reordered chunks, appended bytes, a costly header) refused.

use super::*;

/// A cheap KDF for tests (Argon2's floor is 8 KiB per lane).
const CHEAP: KdfCost = KdfCost {
    memory_kib: 64,
    passes: 1,
    lanes: 1,
};

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn seal(plain: &[u8], pass: &[u8]) -> Vec<u8> {
    let mut sealer = Sealer::new(Vec::new(), pass, CHEAP).unwrap();
    // Uneven writes, as tar makes them.
    for piece in plain.chunks(5000) {
        sealer.write_all(piece).unwrap();
    }
    sealer.finish().unwrap()
}

fn open(file: &[u8], pass: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    Opener::new(file, pass)
        .and_then(|mut o| o.read_to_end(&mut out))
        .map_err(|e| {
            crypt_error(&e)
                .map(|c| c.to_string())
                .unwrap_or(e.to_string())
        })?;
    Ok(out)
}

#[test]
fn round_trips_at_every_chunk_edge() {
    for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 17] {
        let plain = data(len);
        let file = seal(&plain, b"correct horse");
        let chunks = len / CHUNK + 1;
        assert_eq!(file.len(), HEADER + len + chunks * TAG, "len {len}");
        assert_eq!(open(&file, b"correct horse").unwrap(), plain, "len {len}");
    }
}

#[test]
fn the_same_backup_twice_is_two_different_files() {
    let plain = data(100);
    assert_ne!(seal(&plain, b"pass"), seal(&plain, b"pass"));
}

#[test]
fn a_wrong_passphrase_is_refused() {
    let file = seal(&data(10), b"right");
    assert_eq!(
        open(&file, b"wrong").unwrap_err(),
        CryptError::Refused.to_string()
    );
}

#[test]
fn a_truncated_file_is_refused_wherever_it_is_cut() {
    let file = seal(&data(2 * CHUNK + 100), b"p");
    let boundary = HEADER + CHUNK + TAG;
    for cut in [
        0,
        5,
        HEADER - 1,
        HEADER,
        HEADER + 10,
        boundary,
        boundary + 3,
        file.len() - 1,
    ] {
        let err = open(&file[..cut], b"p").unwrap_err();
        assert!(
            [
                CryptError::Truncated.to_string(),
                CryptError::Refused.to_string(),
                CryptError::NotABackup.to_string()
            ]
            .contains(&err),
            "cut {cut}: {err}"
        );
        assert_ne!(err, "", "cut {cut}");
    }
    assert_eq!(
        open(&file[..boundary], b"p").unwrap_err(),
        CryptError::Truncated.to_string()
    );
    assert_eq!(
        open(&file[..HEADER - 1], b"p").unwrap_err(),
        CryptError::Truncated.to_string()
    );
}

#[test]
fn any_changed_byte_is_refused() {
    let file = seal(&data(CHUNK + 50), b"p");
    for at in [
        MAGIC.len() + 4,
        MAGIC.len() + 12,
        HEADER - 1,
        HEADER,
        HEADER + CHUNK,
        file.len() - 1,
    ] {
        let mut changed = file.clone();
        changed[at] ^= 0x01;
        assert!(open(&changed, b"p").is_err(), "byte {at}");
    }
    let mut magic = file.clone();
    magic[0] = b'X';
    assert_eq!(
        open(&magic, b"p").unwrap_err(),
        CryptError::NotABackup.to_string()
    );
}

#[test]
fn reordered_chunks_and_trailing_bytes_are_refused() {
    let file = seal(&data(3 * CHUNK), b"p");
    let c = CHUNK + TAG;
    let mut swapped = file[..HEADER].to_vec();
    swapped.extend_from_slice(&file[HEADER + c..HEADER + 2 * c]);
    swapped.extend_from_slice(&file[HEADER..HEADER + c]);
    swapped.extend_from_slice(&file[HEADER + 2 * c..]);
    assert_eq!(
        open(&swapped, b"p").unwrap_err(),
        CryptError::Refused.to_string()
    );
    // Bytes after the end join the last chunk's read, which then fails.
    for extra in [1, TAG, CHUNK + TAG, 3 * CHUNK] {
        let mut longer = file.clone();
        longer.extend(std::iter::repeat_n(0, extra));
        assert_eq!(
            open(&longer, b"p").unwrap_err(),
            CryptError::Refused.to_string(),
            "{extra}"
        );
    }
}

#[test]
fn a_header_asking_for_too_much_memory_is_refused_before_deriving() {
    let mut file = seal(&data(1), b"p");
    let at = MAGIC.len();
    file[at..at + 4].copy_from_slice(&(MAX_KDF_MEMORY_KIB + 1).to_le_bytes());
    assert_eq!(
        open(&file, b"p").unwrap_err(),
        CryptError::KdfTooCostly.to_string()
    );
}

#[test]
fn new_backups_use_the_named_cost() {
    let mut sealer = Sealer::new(Vec::new(), b"p", KdfCost::default()).unwrap();
    sealer.write_all(b"x").unwrap();
    let file = sealer.finish().unwrap();
    let at = MAGIC.len();
    assert_eq!(file[at..at + 4], KDF_MEMORY_KIB.to_le_bytes());
    assert_eq!(file[at + 4..at + 8], KDF_PASSES.to_le_bytes());
    assert_eq!(open(&file, b"p").unwrap(), b"x");
}
