//! The rules a backup passphrase follows, wherever it comes from (the
//! terminal, `--passphrase-file`, the family page): not empty, and at least
//! [`MIN_NEW_PASSPHRASE_CHARS`] characters for a new backup.

/// Longest passphrase taken: 4 KiB. A passphrase is a line; anything longer
/// is the wrong file (the CLI) or not a passphrase at all (the API).
pub const MAX_PASSPHRASE_BYTES: u64 = 4096;
/// Shortest passphrase a new backup takes: 8 characters. The file may be
/// stolen, and Argon2 slows each guess but cannot save a 4-letter word.
pub const MIN_NEW_PASSPHRASE_CHARS: usize = 8;

/// What the passphrase is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Sealing a new backup: at least the minimum length.
    Seal,
    /// Opening a backup.
    Open,
}

/// Why a passphrase will not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PassphraseError {
    /// Nothing was given.
    #[error("the passphrase is empty")]
    Empty,
    /// A new backup's passphrase under [`MIN_NEW_PASSPHRASE_CHARS`].
    #[error("the passphrase is shorter than {MIN_NEW_PASSPHRASE_CHARS} characters")]
    TooShort,
}

/// Whether `pass` will do for `purpose`.
pub fn check(pass: &str, purpose: Purpose) -> Result<(), PassphraseError> {
    if pass.is_empty() {
        return Err(PassphraseError::Empty);
    }
    if purpose == Purpose::Seal && pass.chars().count() < MIN_NEW_PASSPHRASE_CHARS {
        return Err(PassphraseError::TooShort);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_backup_needs_a_passphrase_of_the_minimum_length() {
        assert_eq!(check("", Purpose::Open), Err(PassphraseError::Empty));
        assert!(check("short", Purpose::Open).is_ok());
        assert_eq!(
            check("short", Purpose::Seal),
            Err(PassphraseError::TooShort)
        );
        assert_eq!(
            PassphraseError::TooShort.to_string(),
            "the passphrase is shorter than 8 characters"
        );
        // Characters, not bytes: seven Cyrillic letters are 14 bytes.
        assert!(check("пароль7", Purpose::Seal).is_err());
        assert!(check("eight ch", Purpose::Seal).is_ok());
    }
}
