//! Writes a run's files: `result.json`, `timeseries.csv` and
//! `delivery.svg` into one folder (created if missing). The only file IO of
//! the library.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::SimError;
use crate::metrics::Sample;
use crate::plot;
use crate::sim::Outcome;

/// Name of the JSON result.
pub const RESULT_FILE: &str = "result.json";
/// Name of the time series.
pub const SERIES_FILE: &str = "timeseries.csv";
/// Name of the plot.
pub const PLOT_FILE: &str = "delivery.svg";

/// The time series as CSV, one header line and one row per sample.
pub fn series_csv(series: &[Sample]) -> String {
    let mut out = String::from(
        "time_ms,published,entitled_due,delivered,delivery_ratio,nodes_up,links_up,wire_bytes,payload_copies,messages_lost\n",
    );
    for s in series {
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{},{},{},{},{:.6},{},{},{},{},{}",
            s.time_ms,
            s.published,
            s.entitled_due,
            s.delivered,
            s.delivery_ratio,
            s.nodes_up,
            s.links_up,
            s.wire_bytes,
            s.payload_copies,
            s.messages_lost
        );
    }
    out
}

fn write(path: PathBuf, contents: &str) -> Result<PathBuf, SimError> {
    std::fs::write(&path, contents).map_err(|source| SimError::WriteOutput {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Writes the three files into `dir` and returns their paths.
pub fn write_all(dir: &Path, outcome: &Outcome) -> Result<Vec<PathBuf>, SimError> {
    std::fs::create_dir_all(dir).map_err(|source| SimError::WriteOutput {
        path: dir.to_owned(),
        source,
    })?;
    let mut json = outcome.report.to_json()?;
    json.push('\n');
    let svg_path = dir.join(PLOT_FILE);
    let svg = plot::delivery_svg(outcome).map_err(|detail| SimError::Plot {
        path: svg_path.clone(),
        detail,
    })?;
    Ok(vec![
        write(dir.join(RESULT_FILE), &json)?,
        write(dir.join(SERIES_FILE), &series_csv(&outcome.series))?,
        write(svg_path, &svg)?,
    ])
}
