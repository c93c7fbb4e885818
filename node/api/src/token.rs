//! The API's bearer token: 32 random bytes from the OS, hex-encoded, kept in
//! `<data-dir>/api-token`. Created on the first start with mode 0600 (unix),
//! read on later starts; a file others can read, or one that does not hold a
//! token, is a clear error rather than a silently weaker or new secret.
//! Requests are checked in constant time ([`ApiToken::matches`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq as _;

use porfiry_mesh::data_dir::DataDir;

/// The token file's name inside the data dir.
pub const TOKEN_FILE: &str = "api-token";

/// Random bytes in a token: 32 bytes (256 bits) cannot be guessed over a
/// network, and their 64 hex characters fit any client's API-key field.
pub const TOKEN_BYTES: usize = 32;

/// Why the token could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Reading, creating or writing the file failed.
    #[error("cannot use the API token file {path}: {source}")]
    Io {
        /// The token file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Group or others may read the file: the token must stay the owner's.
    #[error(
        "the API token file {path} has mode {mode:o}; others could read it. \
         Run `chmod 600 {path}` (or delete it to get a new token) and start again"
    )]
    OpenPermissions {
        /// The token file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The file does not hold 64 hex characters.
    #[error(
        "the API token file {path} does not hold a token ({TOKEN_BYTES} bytes as hex); \
         delete it to get a new one"
    )]
    Garbage {
        /// The token file.
        path: String,
    },
    /// The OS random source failed.
    #[error("cannot get random bytes for the API token: {0}")]
    Random(String),
}

/// The secret every API request must present as `Authorization: Bearer …`.
#[derive(Clone)]
pub struct ApiToken {
    hex: String,
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiToken(<redacted>)")
    }
}

impl ApiToken {
    /// A token with the given text (tests, embedders with their own secret).
    pub fn from_secret(hex: impl Into<String>) -> Self {
        Self { hex: hex.into() }
    }

    /// The token's text, for printing to the owner and for clients.
    pub fn expose(&self) -> &str {
        &self.hex
    }

    /// Whether `presented` is this token, compared in constant time (the
    /// time taken does not depend on where the first wrong byte is).
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.hex.as_bytes().ct_eq(presented).into()
    }

    /// Reads the token of the node in `dir`, creating it on the first start.
    pub fn load_or_create(dir: &DataDir) -> Result<Self, TokenError> {
        let path = token_path(dir);
        match read(&path) {
            Err(TokenError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                match create(&path) {
                    // Another process created it between the two calls.
                    Err(TokenError::Io { source, .. })
                        if source.kind() == std::io::ErrorKind::AlreadyExists =>
                    {
                        read(&path)
                    }
                    other => other,
                }
            }
            other => other,
        }
    }
}

/// Where the token of the node in `dir` lives.
pub fn token_path(dir: &DataDir) -> PathBuf {
    dir.root().join(TOKEN_FILE)
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> TokenError + '_ {
    move |source| TokenError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn read(path: &Path) -> Result<ApiToken, TokenError> {
    let file = std::fs::File::open(path).map_err(io_error(path))?;
    check_permissions(path, &file)?;
    let mut text = String::new();
    // A token is 64 bytes; reading stops soon after so a huge file costs nothing.
    std::io::Read::read_to_string(
        &mut std::io::Read::take(&file, (TOKEN_BYTES * 2 + 16) as u64),
        &mut text,
    )
    .map_err(|_| TokenError::Garbage {
        path: path.display().to_string(),
    })?;
    let hex = text.trim();
    let valid = hex.len() == TOKEN_BYTES * 2 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(TokenError::Garbage {
            path: path.display().to_string(),
        });
    }
    Ok(ApiToken::from_secret(hex.to_ascii_lowercase()))
}

#[cfg(unix)]
fn check_permissions(path: &Path, file: &std::fs::File) -> Result<(), TokenError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = file
        .metadata()
        .map_err(io_error(path))?
        .permissions()
        .mode()
        & 0o777;
    if mode & 0o077 != 0 {
        return Err(TokenError::OpenPermissions {
            path: path.display().to_string(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_permissions(_path: &Path, _file: &std::fs::File) -> Result<(), TokenError> {
    Ok(())
}

fn create(path: &Path) -> Result<ApiToken, TokenError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    let token = ApiToken::from_secret(hex::encode(bytes));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_error(path))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io_error(path))?;
    writeln!(file, "{}", token.expose()).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, DataDir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        (tmp, dir)
    }

    #[test]
    fn the_first_start_creates_a_private_token_and_later_starts_read_it() {
        let (_tmp, dir) = dir();
        let first = ApiToken::load_or_create(&dir).unwrap();
        assert_eq!(first.expose().len(), 64);
        assert!(first.expose().bytes().all(|b| b.is_ascii_hexdigit()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(token_path(&dir))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = ApiToken::load_or_create(&dir).unwrap();
        assert_eq!(again.expose(), first.expose());
        let (_tmp2, other) = self::dir();
        assert_ne!(
            ApiToken::load_or_create(&other).unwrap().expose(),
            first.expose()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_read_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt as _;
        let (_tmp, dir) = dir();
        ApiToken::load_or_create(&dir).unwrap();
        let path = token_path(&dir);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = ApiToken::load_or_create(&dir).unwrap_err();
        assert!(
            matches!(err, TokenError::OpenPermissions { mode: 0o644, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }

    #[test]
    fn a_token_file_without_a_token_is_refused_not_replaced() {
        let (_tmp, dir) = dir();
        ApiToken::load_or_create(&dir).unwrap();
        let path = token_path(&dir);
        std::fs::write(&path, "not a token\n").unwrap();
        let err = ApiToken::load_or_create(&dir).unwrap_err();
        assert!(matches!(err, TokenError::Garbage { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a token\n");
    }

    #[test]
    fn only_the_exact_token_matches_and_debug_hides_it() {
        let token = ApiToken::from_secret("ab".repeat(32));
        assert!(token.matches("ab".repeat(32).as_bytes()));
        assert!(!token.matches("ab".repeat(31).as_bytes()));
        assert!(!token.matches(format!("{}ac", "ab".repeat(31)).as_bytes()));
        assert!(!token.matches(b""));
        assert!(!format!("{token:?}").contains("abab"));
    }
}
