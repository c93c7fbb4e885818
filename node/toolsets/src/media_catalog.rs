//! The media catalogue file behind the `media` toolset: a JSON array of
//! `{"id","title","year","description"}` read from `--media-catalog FILE`,
//! or the built-in sample. Every problem is reported naming the file and what
//! is wrong with it; the search itself is [`super::media::MediaToolset`].

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::media::MediaEntry;

/// A catalogue file larger than this is refused before parsing: 16 MiB holds
/// about 50,000 films at ~300 bytes each, far beyond a home library, and a
/// bigger file is more likely a wrong path (a video) than a catalogue.
pub const MAX_CATALOG_BYTES: u64 = 16 * 1024 * 1024;

/// The built-in sample catalogue used when no `--media-catalog` is given.
pub const SAMPLE_CATALOG_JSON: &str = include_str!("media_sample.json");

/// The name the built-in sample is reported under in errors.
pub const SAMPLE_CATALOG_NAME: &str = "built-in sample catalogue";

/// Characters a film id must not end with: the `TOOL_CALL` argument grammar
/// drops them from one-word arguments, so such an id could never be found.
const ID_TRAILING_PUNCTUATION: [char; 5] = ['.', ',', ';', '!', '?'];

/// Why a catalogue could not be used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be opened or read.
    #[error("media catalogue {file}: cannot read it: {source}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file exceeds [`MAX_CATALOG_BYTES`].
    #[error("media catalogue {file}: {bytes} bytes is over the {MAX_CATALOG_BYTES}-byte limit")]
    TooLarge {
        /// The file.
        file: String,
        /// Its size.
        bytes: u64,
    },
    /// Not UTF-8 text.
    #[error("media catalogue {file}: not UTF-8 text")]
    NotUtf8 {
        /// The file.
        file: String,
    },
    /// Not JSON, or not an array of film objects.
    #[error(
        "media catalogue {file}: {detail} (expected a JSON array of \
         {{\"id\",\"title\",\"year\",\"description\"}} objects)"
    )]
    Json {
        /// The file.
        file: String,
        /// serde_json's message, with line and column.
        detail: String,
    },
    /// An empty array.
    #[error("media catalogue {file}: lists no films")]
    Empty {
        /// The file.
        file: String,
    },
    /// An id that tools could never look up.
    #[error(
        "media catalogue {file}: film #{index} has id {id:?}: ids must be non-empty, \
         without spaces or '|', and not end in . , ; ! ?"
    )]
    BadId {
        /// The file.
        file: String,
        /// 1-based position in the array.
        index: usize,
        /// The id.
        id: String,
    },
    /// A blank title.
    #[error("media catalogue {file}: film #{index} (id {id:?}) has an empty title")]
    EmptyTitle {
        /// The file.
        file: String,
        /// 1-based position in the array.
        index: usize,
        /// Its id.
        id: String,
    },
    /// Two films with one id (ids match without regard to case).
    #[error("media catalogue {file}: films #{first} and #{second} share the id {id:?}")]
    DuplicateId {
        /// The file.
        file: String,
        /// The id.
        id: String,
        /// 1-based position of the first.
        first: usize,
        /// 1-based position of the second.
        second: usize,
    },
}

/// Where a catalogue comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CatalogSource {
    /// The built-in sample ([`SAMPLE_CATALOG_JSON`]).
    #[default]
    Sample,
    /// A JSON file.
    File(PathBuf),
}

impl CatalogSource {
    /// Loads and checks the catalogue.
    pub fn load(&self) -> Result<Vec<MediaEntry>, CatalogError> {
        match self {
            CatalogSource::Sample => parse_catalog(SAMPLE_CATALOG_JSON, SAMPLE_CATALOG_NAME),
            CatalogSource::File(path) => load_catalog(path),
        }
    }
}

/// Reads and checks the catalogue file at `path`.
pub fn load_catalog(path: &Path) -> Result<Vec<MediaEntry>, CatalogError> {
    let file = path.display().to_string();
    let io = |source| CatalogError::Io {
        file: file.clone(),
        source,
    };
    let handle = fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells "over" from "exactly at" without
    // trusting metadata that may change under us.
    handle
        .take(MAX_CATALOG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_CATALOG_BYTES {
        let bytes = fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(CatalogError::TooLarge { file, bytes });
    }
    let text =
        String::from_utf8(bytes).map_err(|_| CatalogError::NotUtf8 { file: file.clone() })?;
    parse_catalog(&text, &file)
}

/// Parses and checks catalogue JSON; `file` names it in errors.
pub fn parse_catalog(text: &str, file: &str) -> Result<Vec<MediaEntry>, CatalogError> {
    // A leading BOM is common in files saved by Windows editors.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let entries: Vec<MediaEntry> = serde_json::from_str(text).map_err(|e| CatalogError::Json {
        file: file.to_owned(),
        detail: e.to_string(),
    })?;
    check(&entries, file)?;
    Ok(entries)
}

/// Ids usable by the tools, titles present, ids unique.
fn check(entries: &[MediaEntry], file: &str) -> Result<(), CatalogError> {
    if entries.is_empty() {
        return Err(CatalogError::Empty {
            file: file.to_owned(),
        });
    }
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let index = i + 1;
        if !is_usable_id(&entry.id) {
            return Err(CatalogError::BadId {
                file: file.to_owned(),
                index,
                id: entry.id.clone(),
            });
        }
        if entry.title.trim().is_empty() {
            return Err(CatalogError::EmptyTitle {
                file: file.to_owned(),
                index,
                id: entry.id.clone(),
            });
        }
        if let Some(first) = seen.insert(entry.id.to_ascii_lowercase(), index) {
            return Err(CatalogError::DuplicateId {
                file: file.to_owned(),
                id: entry.id.clone(),
                first,
                second: index,
            });
        }
    }
    Ok(())
}

/// Whether `media_info|id` could reach this id through the argument grammar.
fn is_usable_id(id: &str) -> bool {
    !id.is_empty()
        && !id.chars().any(|c| c.is_whitespace() || c == '|')
        && !id.ends_with(ID_TRAILING_PUNCTUATION)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        parse_catalog(json, "films.json").unwrap_err().to_string()
    }

    #[test]
    fn the_sample_parses_and_holds_the_seed_films() {
        let films = CatalogSource::Sample.load().unwrap();
        assert!(films.len() >= 10);
        assert!(films.iter().any(|f| f.title.contains("Lara Croft")));
        assert!(
            films
                .iter()
                .all(|f| f.year.is_some() && !f.description.is_empty())
        );
    }

    #[test]
    fn year_and_description_are_optional_and_a_bom_is_skipped() {
        let films = parse_catalog("\u{feff}[{\"id\":\"a1\",\"title\":\"A\"}]", "f").unwrap();
        assert_eq!(films[0].year, None);
        assert_eq!(films[0].description, "");
    }

    #[test]
    fn json_errors_name_the_file_and_the_place() {
        let e = err("[{\"id\": \"a\", \"title\": \"A\",}]");
        assert!(e.starts_with("media catalogue films.json: "), "{e}");
        assert!(e.contains("line 1"), "{e}");
        let e = err("{\"id\": \"a\"}");
        assert!(e.contains("expected a JSON array"), "{e}");
        let e = err("[{\"id\": \"a\"}]");
        assert!(e.contains("missing field `title`"), "{e}");
        let e = err("[{\"id\": \"a\", \"title\": \"A\", \"year\": \"1999\"}]");
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn content_errors_say_which_film() {
        assert!(err("[]").contains("lists no films"));
        let e = err(r#"[{"id":"a","title":"A"},{"id":"b c","title":"B"}]"#);
        assert!(e.contains("film #2") && e.contains("\"b c\""), "{e}");
        for id in ["", "x|y", "tt1.", "a\tb"] {
            let json = serde_json::json!([{"id": id, "title": "T"}]).to_string();
            assert!(err(&json).contains("ids must be non-empty"), "{id:?}");
        }
        let e = err(r#"[{"id":"a","title":"  "}]"#);
        assert!(e.contains("film #1 (id \"a\") has an empty title"), "{e}");
        let e = err(r#"[{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"A","title":"C"}]"#);
        assert!(e.contains("films #1 and #3 share the id \"A\""), "{e}");
    }

    #[test]
    fn files_are_read_with_their_path_in_every_error() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("films.json");
        fs::write(
            &good,
            r#"[{"id":"x1","title":"X","year":2000,"description":"d"}]"#,
        )
        .unwrap();
        assert_eq!(CatalogSource::File(good).load().unwrap()[0].id, "x1");

        let missing = dir.path().join("nope.json");
        let e = load_catalog(&missing).unwrap_err();
        assert!(matches!(e, CatalogError::Io { .. }));
        assert!(e.to_string().contains("nope.json"), "{e}");

        let binary = dir.path().join("video.mkv");
        fs::write(&binary, [0xff, 0xfe, 0x00, 0x5b]).unwrap();
        let e = load_catalog(&binary).unwrap_err();
        assert!(matches!(e, CatalogError::NotUtf8 { .. }), "{e}");
        assert!(e.to_string().contains("video.mkv"), "{e}");

        let e = load_catalog(dir.path()).unwrap_err();
        assert!(e.to_string().contains("cannot read it"), "a directory: {e}");
    }

    #[test]
    fn an_oversized_file_is_refused_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        let f = fs::File::create(&big).unwrap();
        f.set_len(MAX_CATALOG_BYTES + 1).unwrap();
        let e = load_catalog(&big).unwrap_err();
        assert!(
            matches!(e, CatalogError::TooLarge { bytes, .. } if bytes == MAX_CATALOG_BYTES + 1)
        );
        assert!(e.to_string().contains("big.json"), "{e}");
    }
}
