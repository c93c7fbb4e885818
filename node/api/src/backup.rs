//! The node's backup for `POST /api/backup`: `porfiry_backup` makes the
//! same sealed file `porfiry backup` writes, on a blocking thread (SQLite's
//! online backup and the 64 MiB Argon2id key derivation would stall the
//! async runtime for seconds), into an unnamed temporary file in the data
//! dir. The route streams that file back; it has no name, so nothing is
//! left behind however the request or the process ends.

use std::path::PathBuf;

use porfiry_backup::{BackupError, KdfCost, Source, backup_to_temp_file};
use porfiry_mesh::data_dir::DataDir;

use super::backend::{BackupDownload, NodeApiError, NodeResult};

/// What the manifest says made a backup when the binary named nothing
/// else ([`crate::adapters::NodeAdapter::with_backup_settings`]).
pub const DEFAULT_MADE_BY: &str = concat!("porfiry-api ", env!("CARGO_PKG_VERSION"));

/// Seals the backup of the node in `data_dir` (with the `settings` file,
/// if any) with `passphrase`, on a blocking thread.
pub async fn make(
    data_dir: PathBuf,
    settings: Option<PathBuf>,
    made_by: String,
    passphrase: String,
) -> NodeResult<BackupDownload> {
    let task = tokio::task::spawn_blocking(move || {
        let dir = DataDir::new(&data_dir);
        let source = Source {
            dir: &dir,
            settings: settings.as_deref(),
            made_by: &made_by,
        };
        backup_to_temp_file(
            &source,
            &data_dir,
            passphrase.as_bytes(),
            KdfCost::default(),
        )
        .map_err(refusal)
    });
    let (file, written) = task
        .await
        .map_err(|e| NodeApiError::Internal(format!("the backup task failed: {e}")))??;
    tracing::info!(
        bytes = written.bytes,
        "a backup was made for download from the API"
    );
    Ok(BackupDownload {
        file,
        bytes: written.bytes,
        peer_id: written.manifest.peer_id,
        made_ms: written.manifest.made_ms,
    })
}

/// A backup failure as the API says it: a full disk (the data dir's, or
/// the scratch folder's; the reason names which) → 507, else 500.
fn refusal(error: BackupError) -> NodeApiError {
    if error.is_disk_full() {
        NodeApiError::DiskFull(format!("the backup failed, the disk is full: {error}"))
    } else {
        NodeApiError::Internal(format!("the backup failed: {error}"))
    }
}
