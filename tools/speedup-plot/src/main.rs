//! `sigecs-speedup-plot CURVES.csv [FUSED.csv] OUT.png`: the speedup over one core of the main
//! job's frame under global stages and under a task graph by store, as `sigecs simulate -o
//! CURVES.csv` computed them (`cores,stages_ns,graph_ns`), with the ideal line; log-2 core
//! axis. With `FUSED.csv` (the curves of a recording whose stages are fused), its stages'
//! curve too, as "fused stages".

use plotters::prelude::*;

/// One row of the curves: cores, and a frame's nanoseconds under each order.
#[derive(Debug, PartialEq)]
struct Point {
    cores: usize,
    stages_ns: f64,
    graph_ns: f64,
}

/// Reads `cores,stages_ns,graph_ns` lines after the header.
fn parse(text: &str) -> Result<Vec<Point>, String> {
    let mut lines = text.lines();
    if lines.next() != Some("cores,stages_ns,graph_ns") {
        return Err("expected the header cores,stages_ns,graph_ns".into());
    }
    lines
        .enumerate()
        .map(|(n, line)| {
            let bad = || {
                format!(
                    "line {}: expected cores,stages_ns,graph_ns: `{line}`",
                    n + 2
                )
            };
            let f: Vec<&str> = line.split(',').collect();
            let [c, s, g] = f.as_slice() else {
                return Err(bad());
            };
            let point = Point {
                cores: c.parse().map_err(|_| bad())?,
                stages_ns: s.parse().map_err(|_| bad())?,
                graph_ns: g.parse().map_err(|_| bad())?,
            };
            if point.cores == 0 || point.stages_ns <= 0.0 || point.graph_ns <= 0.0 {
                return Err(bad());
            }
            Ok(point)
        })
        .collect()
}

/// A sans-serif font: `PLOT_FONT`, else the first of a few usual places.
fn register_font() -> Result<(), String> {
    let candidates = [
        std::env::var("PLOT_FONT").unwrap_or_default(),
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/TTF/DejaVuSans.ttf".into(),
        "/usr/share/fonts/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf".into(),
    ];
    for path in candidates.iter().filter(|p| !p.is_empty()) {
        if let Ok(bytes) = std::fs::read(path) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(());
            }
        }
    }
    Err("no font found: install fonts-dejavu-core or set PLOT_FONT to a .ttf file".into())
}

/// The 1-core frame of the curves under global stages.
fn one_core(points: &[Point]) -> Result<f64, String> {
    points
        .iter()
        .find(|p| p.cores == 1)
        .map(|p| p.stages_ns)
        .ok_or_else(|| "the curves need a 1-core row".to_string())
}

/// The speedup of each point's `ns` over a frame of `base` nanoseconds.
fn speedups(points: &[Point], ns: fn(&Point) -> f64, base: f64) -> Vec<(usize, f64)> {
    points.iter().map(|p| (p.cores, base / ns(p))).collect()
}

fn draw(
    points: &[Point],
    fused: Option<&[Point]>,
    out: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // Every curve against the first file's 1-core frame under its stages, so that a fused
    // schedule's gain on one core shows too.
    let base = one_core(points)?;
    let (stages, graph) = if fused.is_some() {
        ("stages apart", "task graph by store, stages apart")
    } else {
        ("global stages", "task graph by store")
    };
    let mut series = vec![
        (
            stages,
            RGBColor(31, 119, 180),
            speedups(points, |p| p.stages_ns, base),
        ),
        (
            graph,
            RGBColor(214, 39, 40),
            speedups(points, |p| p.graph_ns, base),
        ),
    ];
    if let Some(fused) = fused {
        one_core(fused)?;
        series.push((
            "fused stages",
            RGBColor(44, 160, 44),
            speedups(fused, |p| p.stages_ns, base),
        ));
    }
    let max_cores = points.iter().map(|p| p.cores).max().unwrap_or(1) as f64;
    let log = |c: usize| (c as f64).log2();
    let root = BitMapBackend::new(out, (1000, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = series
        .iter()
        .flat_map(|(_, _, line)| line.iter().map(|&(_, s)| s))
        .fold(1.0f64, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            if fused.is_some() {
                "sigecs main job: simulated speedup of a frame over 1 core, stages apart"
            } else {
                "sigecs main job: simulated speedup of a frame over 1 core"
            },
            ("sans-serif", 24),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_cores.log2(), 0.0..(top * 1.25).max(2.0))?;
    chart
        .configure_mesh()
        .x_desc("cores")
        .y_desc("speedup over 1 core")
        .x_labels(max_cores.log2() as usize + 1)
        .x_label_formatter(&|x| format!("{:.0}", 2f64.powf(*x)))
        .label_style(("sans-serif", 16))
        .draw()?;
    let ideal_top = (top * 1.25).max(2.0);
    chart
        .draw_series(LineSeries::new(
            (0..=(max_cores.log2() * 8.0) as usize)
                .map(|i| i as f64 / 8.0)
                .map(|x| (x, 2f64.powf(x)))
                .filter(|&(_, y)| y <= ideal_top),
            ShapeStyle::from(&RGBColor(170, 170, 170)).stroke_width(1),
        ))?
        .label("ideal (cores)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RGBColor(170, 170, 170)));
    for (name, color, speedups) in series {
        let line: Vec<(f64, f64)> = speedups.iter().map(|&(c, s)| (log(c), s)).collect();
        chart
            .draw_series(LineSeries::new(
                line.clone(),
                ShapeStyle::from(&color).stroke_width(3),
            ))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(
                    [(x, y), (x + 20, y)],
                    ShapeStyle::from(&color).stroke_width(3),
                )
            });
        chart.draw_series(line.iter().map(|&p| Circle::new(p, 5, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 18))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (curves, fused, out) = match args.as_slice() {
        [curves, out] => (curves, None, out),
        [curves, fused, out] => (curves, Some(fused), out),
        _ => {
            eprintln!("usage: sigecs-speedup-plot CURVES.csv [FUSED.csv] OUT.png");
            return std::process::ExitCode::from(2);
        }
    };
    let read = |path: &String| {
        std::fs::read_to_string(path)
            .map_err(|e| format!("{path}: {e}"))
            .and_then(|text| parse(&text).map_err(|e| format!("{path}: {e}")))
    };
    let result = read(curves).and_then(|points| {
        let fused = fused.map(read).transpose()?;
        register_font()?;
        draw(&points, fused.as_deref(), out).map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_curves_and_refuses_bad_lines() {
        let points = parse("cores,stages_ns,graph_ns\n1,200,200\n2,110,105\n").unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(
            points[1],
            Point {
                cores: 2,
                stages_ns: 110.0,
                graph_ns: 105.0
            }
        );
        assert!(parse("cores\n").unwrap_err().contains("header"));
        assert_eq!(
            parse("cores,stages_ns,graph_ns\n1,200\n").unwrap_err(),
            "line 2: expected cores,stages_ns,graph_ns: `1,200`"
        );
        assert!(parse("cores,stages_ns,graph_ns\n0,1,1\n").is_err());
    }

    #[test]
    fn speedups_are_over_the_one_core_frame_under_stages() {
        let points = parse("cores,stages_ns,graph_ns\n1,200,300\n4,50,100\n").unwrap();
        let base = one_core(&points).unwrap();
        assert_eq!(base, 200.0);
        assert_eq!(
            speedups(&points, |p| p.stages_ns, base),
            [(1, 1.0), (4, 4.0)]
        );
        assert_eq!(
            speedups(&points, |p| p.graph_ns, base),
            [(1, 200.0 / 300.0), (4, 2.0)]
        );
        let no_one = parse("cores,stages_ns,graph_ns\n2,100,100\n").unwrap();
        assert!(one_core(&no_one).is_err());
    }
}
