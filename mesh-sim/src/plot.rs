//! The SVG plot of a run: delivery ratio and the share of nodes up over
//! virtual time, with partition windows shaded. Drawn into a string with
//! plotters' SVG backend; no file IO here.

use plotters::prelude::*;

use crate::sim::Outcome;

/// Plot size in pixels: wide enough for a long run, small enough to embed.
const SIZE: (u32, u32) = (960, 480);

/// The plot as SVG text, or plotters' error as text.
pub fn delivery_svg(outcome: &Outcome) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, outcome).map_err(|e| e.to_string())?;
    Ok(svg)
}

fn draw<'a>(svg: &'a mut String, outcome: &Outcome) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let r = &outcome.report;
    let nodes = r.setup.nodes.max(1) as f64;
    let x_max = (r.setup.duration_ms as f64 / 1000.0).max(1.0);
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!("{} — seed {} — {} nodes", r.scenario, r.seed, r.setup.nodes);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..x_max, 0f64..1.05f64)?;
    chart
        .configure_mesh()
        .x_desc("virtual time (s)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("share")
        .draw()?;
    let shade = RGBColor(255, 215, 215).filled();
    chart.draw_series(outcome.partitions.iter().map(|w| {
        Rectangle::new(
            [
                (w.start_ms as f64 / 1000.0, 0.0),
                (w.end_ms as f64 / 1000.0, 1.05),
            ],
            shade,
        )
    }))?;
    let heal = r.setup.heal_ms as f64 / 1000.0;
    chart.draw_series(LineSeries::new(
        [(heal, 0.0), (heal, 1.05)],
        BLACK.mix(0.4).stroke_width(1),
    ))?;
    chart
        .draw_series(LineSeries::new(
            outcome
                .series
                .iter()
                .map(|s| (s.time_ms as f64 / 1000.0, s.delivery_ratio)),
            BLUE.stroke_width(2),
        ))?
        .label("delivery ratio (entitled pairs of published items)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            outcome
                .series
                .iter()
                .map(|s| (s.time_ms as f64 / 1000.0, s.nodes_up as f64 / nodes)),
            GREEN.stroke_width(1),
        ))?
        .label("nodes up")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREEN));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .draw()?;
    root.present()?;
    Ok(())
}
