//! Plots of the HTTP load benchmark: reads `target/bench-results/http-*.json` (written by
//! `cargo bench --bench http_load`, one file per calendar size) and draws, per request of the
//! query mix, latency (p50 and p99) and throughput against the calendar size:
//!
//!     cargo bench --bench plot      # writes docs/latency.png and docs/throughput.png
//!
//! Text is drawn with DejaVu Sans (`/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf`, Debian
//! package fonts-dejavu-core; `ALMANAC_PLOT_FONT` names another TTF file).

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use serde_json::Value;
use std::error::Error;
use std::path::Path;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const P50: RGBColor = RGBColor(31, 119, 180);
const P99: RGBColor = RGBColor(214, 39, 40);

/// One benchmark file: the calendar size and its results.
struct Run {
    events: f64,
    results: Vec<Value>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let font_path = std::env::var("ALMANAC_PLOT_FONT").unwrap_or_else(|_| FONT.into());
    let font: &'static [u8] = Box::leak(std::fs::read(&font_path)?.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, font).map_err(|_| "invalid font file")?;

    let dir = Path::new(MANIFEST_DIR).join("target/bench-results");
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.starts_with("http-") && name.ends_with(".json")) {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        runs.push(Run {
            events: v["events"].as_f64().ok_or("events")?,
            results: v["results"].as_array().cloned().unwrap_or_default(),
        });
        eprintln!("read {}", path.display());
    }
    if runs.is_empty() {
        return Err(format!("no http-*.json in {}", dir.display()).into());
    }
    runs.sort_by(|a, b| a.events.total_cmp(&b.events));

    // The queries in benchmark order (the largest run's, which has them all).
    let mut queries: Vec<(String, String)> = Vec::new();
    for r in &runs.last().unwrap().results {
        let key = r["query"].as_str().unwrap_or("?").to_string();
        if !queries.iter().any(|(k, _)| *k == key) {
            let label = title(&key).map(str::to_string).unwrap_or_else(|| {
                format!(
                    "{} {}",
                    r["method"].as_str().unwrap_or(""),
                    short(r["path"].as_str().unwrap_or(""))
                )
            });
            queries.push((key, label));
        }
    }

    let out = Path::new(MANIFEST_DIR).join("docs");
    std::fs::create_dir_all(&out)?;
    let sizes: Vec<String> = runs.iter().map(|r| events_label(r.events)).collect();
    grid(
        &out.join("latency.png"),
        &format!(
            "HTTP latency against calendar size (wrk on loopback; sizes {}), ms, log scales",
            sizes.join(", ")
        ),
        &runs,
        &queries,
        &[
            ("p50_us", 1, P50, "p50, 1 connection"),
            ("p99_us", 1, P99, "p99, 1 connection"),
            ("p50_us", 4, P50, "p50, 4 connections"),
            ("p99_us", 4, P99, "p99, 4 connections"),
        ],
        |us| us / 1000.0,
    )?;
    grid(
        &out.join("throughput.png"),
        "HTTP throughput against calendar size (wrk on loopback), requests/s, log scales",
        &runs,
        &queries,
        &[
            ("rps", 1, P50, "1 connection"),
            ("rps", 4, P99, "4 connections"),
        ],
        |v| v,
    )?;
    println!(
        "wrote {} and {}",
        out.join("latency.png").display(),
        out.join("throughput.png").display()
    );
    Ok(())
}

/// One panel per query, 4 columns. A series is (metric, connections, colour, label); series at
/// 4 connections are drawn with triangles and thinner lines, at 1 connection with circles.
fn grid(
    path: &Path,
    title: &str,
    runs: &[Run],
    queries: &[(String, String)],
    series: &[(&str, u64, RGBColor, &str)],
    scale: fn(f64) -> f64,
) -> Result<(), Box<dyn Error>> {
    let columns = 4;
    let rows = queries.len().div_ceil(columns);
    let root = BitMapBackend::new(path, (1800, 40 + 330 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 26))?;
    let panels = root.split_evenly((rows, columns));
    let (x_min, x_max) = (
        runs.first().unwrap().events / 2.0,
        runs.last().unwrap().events * 2.0,
    );
    for (i, ((key, label), area)) in queries.iter().zip(panels.iter()).enumerate() {
        let lines: Vec<Vec<(f64, f64)>> = series
            .iter()
            .map(|(metric, connections, _, _)| {
                runs.iter()
                    .filter_map(|run| {
                        let r = run.results.iter().find(|r| {
                            r["query"].as_str() == Some(key.as_str())
                                && r["connections"].as_u64() == Some(*connections)
                        })?;
                        Some((run.events, scale(r[*metric].as_f64()?)))
                    })
                    .filter(|(_, y)| *y > 0.0)
                    .collect()
            })
            .collect();
        let values = lines.iter().flatten().map(|(_, y)| *y);
        let y_min = values.clone().fold(f64::INFINITY, f64::min);
        let y_max = values.fold(0.0, f64::max);
        if !y_min.is_finite() {
            continue;
        }
        let mut chart = ChartBuilder::on(area)
            .caption(label, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(58)
            .build_cartesian_2d(
                (x_min..x_max).log_scale(),
                (y_min / 1.6..y_max * 1.6).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| events_label(*x))
            .y_label_formatter(&|y| number_label(*y))
            .x_desc("events")
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 13))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for ((_, connections, colour, name), points) in series.iter().zip(&lines) {
            let colour = *colour;
            let one = *connections == 1;
            let style = if one {
                colour.stroke_width(2)
            } else {
                colour.mix(0.55).stroke_width(1)
            };
            chart
                .draw_series(LineSeries::new(points.clone(), style))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            if one {
                chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, colour.filled())))?;
            } else {
                chart.draw_series(
                    points
                        .iter()
                        .map(|p| TriangleMarker::new(*p, 5, colour.mix(0.55).filled())),
                )?;
            }
        }
        if i == 0 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font(("sans-serif", 12))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

/// Panel titles of the query mix (the paths carry parameters that differ per size).
fn title(query: &str) -> Option<&'static str> {
    Some(match query {
        "default" => "GET /events (default: upcoming, 10)",
        "per_page_50" => "GET /events?per_page=50",
        "search_common_word" => "GET /events?search=<common word>",
        "search_two_words" => "GET /events?search=<two words>",
        "one_month_window" => "GET /events, one-month window",
        "window_category_search" => "6-month window + category + search",
        "featured" => "GET /events?featured=true",
        "geoloc_radius" => "GET /events, geoloc radius 25 mi",
        "get_event_by_id" => "GET /events/{id}",
        "get_event_by_slug" => "GET /events/by-slug/{slug}",
        "venues_search" => "GET /venues?search=<word>",
        "create_event" => "POST /events (administrator)",
        _ => return None,
    })
}

/// The request path without the namespace, long query strings shortened.
fn short(path: &str) -> String {
    let path = path.strip_prefix("/cal/events/v1").unwrap_or(path);
    if path.chars().count() > 58 {
        format!("{}…", path.chars().take(57).collect::<String>())
    } else {
        path.to_string()
    }
}

fn events_label(x: f64) -> String {
    if x >= 999_999.0 {
        format!("{}M", x / 1e6)
    } else if x >= 999.0 {
        format!("{}k", x / 1e3)
    } else {
        format!("{x}")
    }
}

fn number_label(y: f64) -> String {
    if y >= 100.0 {
        format!("{y:.0}")
    } else if y >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.2}")
    }
}
