//! Reads criterion's estimates of the comparison benchmarks
//! (`target/criterion/<workload>/<implementation>/new/estimates.json`, the median) and writes
//! `results.md` (times and ratios to the one-`Vec`-per-field floor, the notes, the machine, the
//! versions) and `results.png` (the ratios per workload, one bar per implementation, log
//! scale). The same tables replace what stands between the markers `<!-- results:begin -->`
//! and `<!-- results:end -->` in `docs/comparison.md` of the repository, whose prose describes
//! the run.
//!
//! A workload criterion has no estimates for (not run in this `target/`, e.g. after
//! `run.sh save_restore` in a fresh checkout) keeps its columns from the previous `results.md`,
//! cell for cell, and the report lists it as kept.
//!
//! `cargo run --release --bin report` (after `cargo bench --bench compare`; `run.sh` does both).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sigecs_compare::{runs, FLOOR, IMPLS, NOTES, WORKLOADS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates whose versions the report lists.
const VERSIONED: &[&str] = &[
    "sigecs",
    "hecs",
    "bevy_ecs",
    "legion",
    "shipyard",
    "specs",
    "sparsey",
    "gecs",
    "zero_ecs",
    "glam",
    "rayon",
    "criterion",
];

const BEGIN: &str = "<!-- results:begin -->";
const END: &str = "<!-- results:end -->";

fn main() {
    if let Err(e) = run() {
        eprintln!("report: {e}");
        std::process::exit(1);
    }
}

type Medians = BTreeMap<(&'static str, &'static str), f64>;

fn run() -> Result<(), String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("target"));
    let criterion = target.join("criterion");
    let medians = read_medians(&criterion)?;
    if medians.is_empty() {
        return Err(format!(
            "no estimates under {}: run `cargo bench --bench compare` first",
            criterion.display()
        ));
    }

    let previous = std::fs::read_to_string(dir.join("results.md")).unwrap_or_default();
    let results = Results {
        medians,
        kept: previous_cells(&previous),
    };
    let tables = tables(&results);
    let info = machine_and_versions(dir);
    let md = format!(
        "# sigecs beside its peers: results\n\n\
         Written by `cargo run --release --bin report` from criterion's medians of one run of \
         `cargo bench --bench compare` ({}).\n\n{tables}\n![ratio to the floor per workload]\
         (results.png)\n\n{info}",
        today()
    );
    write(&dir.join("results.md"), &md)?;

    let doc = dir.join("../docs/comparison.md");
    let text =
        std::fs::read_to_string(&doc).map_err(|e| format!("cannot read {}: {e}", doc.display()))?;
    match (text.find(BEGIN), text.find(END)) {
        (Some(b), Some(e)) if b < e => {
            let updated = format!("{}{BEGIN}\n\n{tables}\n{info}\n{}", &text[..b], &text[e..]);
            write(&doc, &updated)?;
            println!("updated {}", doc.display());
        }
        _ => {
            return Err(format!(
                "{} has no `{BEGIN}` … `{END}` markers",
                doc.display()
            ))
        }
    }

    match chart(&dir.join("results.png"), &results) {
        Ok(()) => println!("wrote {}", dir.join("results.png").display()),
        Err(e) => eprintln!("report: no chart: {e}"),
    }
    println!("wrote {}", dir.join("results.md").display());
    print!("{tables}");
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Median time in nanoseconds of every (workload, implementation) criterion measured.
fn read_medians(criterion: &Path) -> Result<Medians, String> {
    let mut out = Medians::new();
    for w in WORKLOADS {
        for &imp in IMPLS {
            let path = criterion
                .join(w.group)
                .join(imp)
                .join("new")
                .join("estimates.json");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let json: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let median = json["median"]["point_estimate"]
                .as_f64()
                .ok_or_else(|| format!("{}: no median.point_estimate", path.display()))?;
            out.insert((w.group, imp), median);
        }
    }
    Ok(out)
}

/// The two tables of a report: ratios to the floor, then times.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    Ratios,
    Times,
}

/// Cells of the previous report: (table, implementation, workload) → the cell's text.
type Kept = BTreeMap<(Table, String, String), String>;

/// This run's medians, and the previous report's cells for the workloads it did not run.
struct Results {
    medians: Medians,
    kept: Kept,
}

impl Results {
    /// Did this run measure workload `w` (criterion has estimates for it)?
    fn measured(&self, w: &str) -> bool {
        self.medians.keys().any(|&(group, _)| group == w)
    }

    /// The workloads whose columns come from the previous report.
    fn kept_workloads(&self) -> Vec<&'static str> {
        WORKLOADS
            .iter()
            .map(|w| w.group)
            .filter(|&w| {
                !self.measured(w)
                    && self
                        .kept
                        .keys()
                        .any(|(t, _, group)| *t == Table::Times && group == w)
            })
            .collect()
    }

    fn kept_cell(&self, table: Table, w: &str, imp: &str) -> Option<&str> {
        self.kept
            .get(&(table, imp.to_string(), w.to_string()))
            .map(String::as_str)
            .filter(|c| *c != "—")
    }

    /// `imp`'s time over the floor's for workload `w`: this run's, or the previous report's.
    fn ratio(&self, w: &'static str, imp: &'static str) -> Option<f64> {
        if self.measured(w) {
            return Some(self.medians.get(&(w, imp))? / self.medians.get(&(w, FLOOR))?);
        }
        let cell = self.kept_cell(Table::Ratios, w, imp)?;
        cell.trim_matches('*').trim_end_matches('×').parse().ok()
    }
}

/// The cells of the ratio and time tables of a report written by [`tables`].
fn previous_cells(md: &str) -> Kept {
    let split = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut kept = Kept::new();
    let mut tables = [Table::Ratios, Table::Times].into_iter();
    let mut current: Option<(Table, Vec<String>)> = None;
    for line in md.lines() {
        if line.starts_with("| implementation |") {
            current = tables.next().map(|t| (t, split(line)));
        } else if !line.starts_with('|') {
            current = None;
        } else if let Some((table, header)) = &current {
            let cells = split(line);
            if cells[0].starts_with("---") {
                continue;
            }
            for (w, cell) in header.iter().zip(&cells).skip(1) {
                kept.insert((*table, cells[0].clone(), w.clone()), cell.clone());
            }
        }
    }
    kept
}

fn format_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn format_ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

/// A table cell: `n/a` where the implementation does not run the workload, the previous
/// report's cell where this run did not measure the workload, `—` where it did but criterion
/// has no estimate for the implementation.
fn cell(
    results: &Results,
    table: Table,
    w: &'static str,
    imp: &'static str,
    show: impl Fn(f64) -> String,
) -> String {
    if !runs(imp, w) {
        return "n/a".into();
    }
    if !results.measured(w) {
        return results
            .kept_cell(table, w, imp)
            .map_or("—".into(), str::to_string);
    }
    results
        .medians
        .get(&(w, imp))
        .map_or("—".into(), |&t| show(t))
}

/// The fastest library (floors aside) of a workload.
fn fastest(medians: &Medians, w: &'static str) -> Option<&'static str> {
    IMPLS
        .iter()
        .filter(|&&l| !l.starts_with("floor"))
        .filter_map(|&l| medians.get(&(w, l)).map(|&t| (l, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(l, _)| l)
}

/// The ratio table, the time table, the workloads and the notes, in Markdown: one row per
/// implementation, one column per workload.
fn tables(results: &Results) -> String {
    let medians = &results.medians;
    let mut s = String::new();
    let header = |s: &mut String| {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.group).collect();
        let _ = writeln!(s, "| implementation | {} |", names.join(" | "));
        let _ = writeln!(s, "|---|{}", "---:|".repeat(names.len()));
    };
    let _ = writeln!(
        s,
        "Median time of one iteration divided by the median of `{FLOOR}` (one `Vec` per field, \
         written by hand; for frag_iter one `Vec` of all 520 values) in the same run; lower is \
         better. **Bold**: the fastest library (floors aside). n/a: the implementation does not \
         run that workload (see the notes).\n"
    );
    let kept = results.kept_workloads();
    if !kept.is_empty() {
        let _ = writeln!(
            s,
            "Not run this time, their columns kept from the previous report: {}.\n",
            kept.join(", ")
        );
    }
    header(&mut s);
    for &imp in IMPLS.iter().filter(|&&i| i != FLOOR) {
        let cells: Vec<String> = WORKLOADS
            .iter()
            .map(|w| {
                let bold = fastest(medians, w.group) == Some(imp);
                cell(results, Table::Ratios, w.group, imp, |t| {
                    let r = format_ratio(
                        t / medians.get(&(w.group, FLOOR)).copied().unwrap_or(f64::NAN),
                    );
                    if bold {
                        format!("**{r}**")
                    } else {
                        r
                    }
                })
            })
            .collect();
        let _ = writeln!(s, "| {imp} | {} |", cells.join(" | "));
    }
    let _ = writeln!(s, "\nMedian time of one iteration:\n");
    header(&mut s);
    for &imp in IMPLS {
        let cells: Vec<String> = WORKLOADS
            .iter()
            .map(|w| cell(results, Table::Times, w.group, imp, format_time))
            .collect();
        let _ = writeln!(s, "| {imp} | {} |", cells.join(" | "));
    }
    let _ = writeln!(s, "\nWhat each workload does (threads: one = inside a one-thread rayon pool for every implementation; all = each library's default parallelism):\n");
    let _ = writeln!(s, "| workload | threads | what one iteration does |");
    let _ = writeln!(s, "|---|---|---|");
    for w in WORKLOADS {
        let threads = if w.parallel { "all" } else { "one" };
        let _ = writeln!(s, "| {} | {threads} | {} |", w.group, w.what);
    }
    let _ = writeln!(s, "\nNotes:\n");
    for n in NOTES {
        let scope = n.workload.unwrap_or("other workloads");
        let _ = writeln!(s, "- {} ({scope}): {}", n.implementation, n.text);
    }
    s
}

fn command(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn today() -> String {
    command("date", &["-u", "+%Y-%m-%d"], Path::new(".")).unwrap_or_else(|| "date unknown".into())
}

/// The machine (cores, CPU model, memory, kernel, rustc) and the versions of the crates
/// compared, from `Cargo.lock` and git.
fn machine_and_versions(dir: &Path) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |text: &str, key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
    };
    let cpu = field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".into());
    let cache = field(&cpuinfo, "cache size");
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = field(&meminfo, "MemTotal")
        .and_then(|kb| kb.trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or("unknown".into(), |kb| {
            format!("{:.0} GiB", kb / 1024.0 / 1024.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or("unknown".into(), |s| s.trim().to_string());
    let rustc = command("rustc", &["--version"], dir).unwrap_or_else(|| "unknown".into());

    let mut s = String::new();
    let _ = writeln!(s, "Machine:\n");
    let _ = writeln!(
        s,
        "- {cores} vCPUs (`nproc`), CPU `{cpu}` (`model name` in `/proc/cpuinfo`){}",
        cache.map_or(String::new(), |c| format!(", cache {c}"))
    );
    let _ = writeln!(s, "- {memory} memory, Linux {kernel}");
    let _ = writeln!(s, "- {rustc}, release profile (`cargo bench`)");
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        let _ = writeln!(
            s,
            "- load average when the report was written (1, 5, 15 min): {} — other work \
             sharing the cores shows up as noise in the medians",
            load.join(", ")
        );
    }

    let lock = std::fs::read_to_string(dir.join("Cargo.lock")).unwrap_or_default();
    let versions = lock_versions(&lock);
    // Uncommitted changes to what was measured (sigecs itself, its fixture worlds, the suite).
    let dirty = command(
        "git",
        &[
            "status",
            "--porcelain",
            "--",
            "../ecs-core",
            "../ecs-build",
            "../ecs-derive",
            "../ecs-decl",
            "../ecs-rules",
            "../fixtures",
            ".",
        ],
        dir,
    )
    .is_some_and(|s| {
        s.lines()
            .any(|l| !l.ends_with("results.md") && !l.ends_with("results.png"))
    });
    let _ = writeln!(s, "\nVersions (from `compare/Cargo.lock`):\n");
    for &name in VERSIONED {
        let v = versions
            .get(name)
            .map_or("unknown".to_string(), |v| v.join(", "));
        let extra = if name == "sigecs" {
            format!(
                " (sigecs: `sigecs`, `sigecs-build` and the `fixtures` worlds of this repository \
                 at the commit of this document{})",
                if dirty {
                    ", with uncommitted changes when the suite ran"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        };
        let _ = writeln!(s, "- {name} {v}{extra}");
    }
    s
}

/// Package name → versions, from a `Cargo.lock`.
fn lock_versions(lock: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("version = ") {
            if let Some(n) = name.take() {
                out.entry(n)
                    .or_default()
                    .push(v.trim_matches('"').to_string());
            }
        }
    }
    out
}

/// A sans-serif font for the chart: `COMPARE_FONT`, else the first of a few usual places.
fn register_font() -> Result<(), String> {
    let candidates = [
        std::env::var("COMPARE_FONT").unwrap_or_default(),
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/TTF/DejaVuSans.ttf".into(),
        "/usr/share/fonts/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf".into(),
        "/usr/share/fonts/liberation/LiberationSans-Regular.ttf".into(),
    ];
    for path in candidates.iter().filter(|p| !p.is_empty()) {
        if let Ok(bytes) = std::fs::read(path) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(());
            }
        }
    }
    Err("no font found: install fonts-dejavu-core or set COMPARE_FONT to a .ttf file".into())
}

fn color(imp: &str) -> RGBColor {
    match imp {
        "floor_rows" => RGBColor(150, 150, 150),
        "sigecs" => RGBColor(214, 39, 40),
        "hecs" => RGBColor(31, 119, 180),
        "bevy_ecs" => RGBColor(148, 103, 189),
        "legion" => RGBColor(44, 160, 44),
        "shipyard" => RGBColor(255, 127, 14),
        "specs" => RGBColor(140, 86, 75),
        "floor_per_set" => RGBColor(200, 200, 200),
        "sigecs_batch" => RGBColor(240, 90, 60),
        "sigecs_dynamic" => RGBColor(250, 150, 150),
        "sigecs_sparse" => RGBColor(140, 20, 20),
        "sparsey" => RGBColor(23, 190, 207),
        "gecs" => RGBColor(188, 189, 34),
        "zero_ecs" => RGBColor(227, 119, 194),
        _ => RGBColor(0, 0, 0),
    }
}

/// Ratio to the floor per workload, one bar per implementation, log scale.
fn chart(path: &Path, results: &Results) -> Result<(), String> {
    let ratio = |w, imp| results.ratio(w, imp);
    register_font()?;
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let bars: Vec<&'static str> = IMPLS.iter().copied().filter(|&i| i != FLOOR).collect();
    let ratios: Vec<f64> = WORKLOADS
        .iter()
        .flat_map(|w| bars.iter().filter_map(|&b| ratio(w.group, b)))
        .collect();
    let lo = ratios.iter().copied().fold(1.0f64, f64::min) / 1.6;
    // Headroom above the tallest bar for the legend in the upper left corner.
    let hi = ratios.iter().copied().fold(1.0f64, f64::max) * 3.0;
    let n = WORKLOADS.len();

    // Each workload's bars side by side: only the implementations that ran it.
    let present = |w: &'static str| -> Vec<&'static str> {
        bars.iter()
            .copied()
            .filter(|&b| ratio(w, b).is_some())
            .collect()
    };
    let widest = WORKLOADS
        .iter()
        .map(|w| present(w.group).len())
        .max()
        .unwrap_or(1)
        .max(1);

    let root = BitMapBackend::new(path, (1800, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Time per iteration / hand-written floor (one Vec per field; frag_iter: one Vec of all values): lower is better",
            ("sans-serif", 28),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale())
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                WORKLOADS[i as usize].group.to_string()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 20))
        .y_desc("ratio to the floor (log scale)")
        .y_label_formatter(&|y| {
            if *y >= 1.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.2}")
            }
        })
        .y_label_style(("sans-serif", 18))
        .axis_desc_style(("sans-serif", 20))
        .draw()
        .map_err(|x| e(&x))?;

    let group_width = 0.88;
    let bar_width = group_width / widest as f64;
    let value_style = ("sans-serif", 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for &imp in &bars {
        let c = color(imp);
        let mut rects = Vec::new();
        let mut labels = Vec::new();
        for (i, w) in WORKLOADS.iter().enumerate() {
            let Some(r) = ratio(w.group, imp) else {
                continue;
            };
            let here = present(w.group);
            let k = here.iter().position(|&b| b == imp).unwrap_or(0);
            let width = here.len() as f64 * bar_width;
            let x0 = i as f64 - width / 2.0 + k as f64 * bar_width;
            let x1 = x0 + bar_width * 0.88;
            rects.push(Rectangle::new([(x0, lo), (x1, r)], c.filled()));
            let text = if r >= 10.0 {
                format!("{r:.0}")
            } else {
                format!("{r:.1}")
            };
            labels.push(Text::new(
                text,
                ((x0 + x1) / 2.0, r * 1.04),
                value_style.clone(),
            ));
        }
        chart
            .draw_series(rects)
            .map_err(|x| e(&x))?
            .label(imp)
            .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 14, y + 7)], c.filled()));
        chart.draw_series(labels).map_err(|x| e(&x))?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
            BLACK.stroke_width(2),
        )))
        .map_err(|x| e(&x))?
        .label("floor_vecs = 1")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 18))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as [`tables`] writes it, for two workloads of [`WORKLOADS`].
    const REPORT: &str = "\
Median time of one iteration divided by the median of `floor_vecs`.

| implementation | frag_iter | add_remove |
|---|---:|---:|
| sigecs | 4.35× | 12× |
| sigecs_sparse | **2.07×** | **8.43×** |

Median time of one iteration:

| implementation | frag_iter | add_remove |
|---|---:|---:|
| floor_vecs | 44 ns | 18.4 µs |
| sigecs | 193 ns | — |

| workload | threads | what one iteration does |
|---|---|---|
| frag_iter | one | not a cell |
";

    fn kept(table: Table, imp: &str, w: &str) -> Option<String> {
        previous_cells(REPORT)
            .get(&(table, imp.to_string(), w.to_string()))
            .cloned()
    }

    #[test]
    fn previous_cells_reads_both_tables_verbatim_and_nothing_else() {
        assert_eq!(
            kept(Table::Ratios, "sigecs_sparse", "frag_iter").as_deref(),
            Some("**2.07×**")
        );
        assert_eq!(
            kept(Table::Ratios, "sigecs", "add_remove").as_deref(),
            Some("12×")
        );
        assert_eq!(
            kept(Table::Times, "floor_vecs", "add_remove").as_deref(),
            Some("18.4 µs")
        );
        assert_eq!(
            kept(Table::Times, "sigecs", "frag_iter").as_deref(),
            Some("193 ns")
        );
        assert_eq!(kept(Table::Ratios, "floor_vecs", "frag_iter"), None);
        assert_eq!(kept(Table::Times, "frag_iter", "threads"), None);
        assert_eq!(previous_cells(REPORT).len(), 8);
        assert!(previous_cells("").is_empty());
    }

    #[test]
    fn unmeasured_workloads_keep_their_cells_and_measured_ones_do_not() {
        let mut medians = Medians::new();
        medians.insert(("frag_iter", "floor_vecs"), 50.0);
        medians.insert(("frag_iter", "sigecs"), 100.0);
        let results = Results {
            medians,
            kept: previous_cells(REPORT),
        };
        assert_eq!(results.kept_workloads(), vec!["add_remove"]);
        // Measured: this run's ratio, not the kept cell.
        assert_eq!(results.ratio("frag_iter", "sigecs"), Some(2.0));
        assert_eq!(results.ratio("frag_iter", "sigecs_sparse"), None);
        // Kept: parsed from the cell, bold or not; a dash is no value.
        assert_eq!(results.ratio("add_remove", "sigecs_sparse"), Some(8.43));
        assert_eq!(results.ratio("add_remove", "sigecs"), Some(12.0));
        let show = |t: f64| format!("{t}");
        assert_eq!(
            cell(&results, Table::Times, "add_remove", "floor_vecs", show),
            "18.4 µs"
        );
        assert_eq!(
            cell(&results, Table::Times, "add_remove", "sigecs", show),
            "—"
        );
        assert_eq!(
            cell(&results, Table::Times, "frag_iter", "sigecs", show),
            "100"
        );
        assert_eq!(
            cell(&results, Table::Times, "frag_iter", "floor_rows", show),
            "—"
        );
        // n/a wins over everything.
        assert_eq!(
            cell(&results, Table::Times, "add_remove", "floor_per_set", show),
            "n/a"
        );
        let text = tables(&results);
        assert!(text.contains("their columns kept from the previous report: add_remove."));
        assert!(
            text.contains("| sigecs_sparse | n/a | n/a | n/a | — | n/a | n/a | **8.43×** | n/a |"),
            "{text}"
        );
    }
}
