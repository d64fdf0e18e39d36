//! The main job's jobs, per frame: what each stage's pass spent on each store, outside its
//! stores, on its commands, and what the respawns took, recorded on one thread
//! (`--record FILE`, with the `record` feature), written to a file with the schedule's stages
//! and the real frame times of the same run, and read back by `sigecs simulate`.
//!
//! The file is CSV: `#` lines first (`# stage,K,parallel|one-thread,STORE STORE ...` for each
//! stage, `# real,THREADS,NS_PER_FRAME` for each real run), then the header
//! `frame,stage,job,store,rows,ns` and one line per job (`stage` is `-` for the respawns, `job`
//! one of `store`, `rest`, `commands`, `respawn`).

use crate::simulate::{Job, Kind, StageInfo};
use std::fmt::Write as _;
use std::path::Path;

/// A recorded run: the stages, each frame's jobs (with their rows: a store's, else 0) and
/// the real frame times (threads, nanoseconds per frame).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Recording {
    pub(crate) stages: Vec<(StageInfo, Vec<String>)>,
    pub(crate) frames: Vec<Vec<(Job, usize)>>,
    pub(crate) real: Vec<(usize, f64)>,
}

impl Recording {
    /// The stages as the simulation takes them.
    pub(crate) fn stage_infos(&self) -> Vec<StageInfo> {
        self.stages.iter().map(|(s, _)| s.clone()).collect()
    }

    /// The work of all frames together, in nanoseconds.
    pub(crate) fn total_ns(&self) -> u64 {
        self.frames.iter().flatten().map(|(job, _)| job.ns).sum()
    }

    /// Each frame's jobs, without their rows.
    pub(crate) fn jobs(&self) -> Vec<Vec<Job>> {
        self.frames
            .iter()
            .map(|f| f.iter().map(|(j, _)| j.clone()).collect())
            .collect()
    }

    /// The file's text.
    pub(crate) fn to_csv(&self, about: &str) -> String {
        let mut out = String::new();
        for line in about.lines() {
            let _ = writeln!(out, "# {line}");
        }
        for (k, (stage, stores)) in self.stages.iter().enumerate() {
            let kind = if stage.parallel {
                "parallel"
            } else {
                "one-thread"
            };
            let _ = writeln!(out, "# stage,{k},{kind},{}", stores.join(" "));
        }
        for (threads, ns) in &self.real {
            let _ = writeln!(out, "# real,{threads},{ns:.0}");
        }
        out.push_str("frame,stage,job,store,rows,ns\n");
        for (f, jobs) in self.frames.iter().enumerate() {
            for (job, rows) in jobs {
                let stage = job.stage.map_or("-".to_string(), |k| k.to_string());
                let (kind, store) = match &job.kind {
                    Kind::Store(s) => ("store", s.as_str()),
                    Kind::Rest => ("rest", ""),
                    Kind::Commands => ("commands", ""),
                    Kind::Respawn => ("respawn", ""),
                };
                let _ = writeln!(out, "{f},{stage},{kind},{store},{rows},{}", job.ns);
            }
        }
        out
    }

    /// Reads a file written by [`Recording::to_csv`].
    pub(crate) fn parse(text: &str) -> Result<Recording, String> {
        let mut rec = Recording {
            stages: Vec::new(),
            frames: Vec::new(),
            real: Vec::new(),
        };
        let mut header = false;
        for (n, line) in text.lines().enumerate() {
            let bad = |what: &str| format!("line {}: {what}: `{line}`", n + 1);
            if let Some(comment) = line.strip_prefix('#') {
                let fields: Vec<&str> = comment.trim().split(',').collect();
                match fields.as_slice() {
                    ["stage", k, kind, stores] => {
                        if k.parse::<usize>().ok() != Some(rec.stages.len()) {
                            return Err(bad("stages must be numbered 0, 1, ... in order"));
                        }
                        let parallel = match *kind {
                            "parallel" => true,
                            "one-thread" => false,
                            _ => return Err(bad("a stage is parallel or one-thread")),
                        };
                        let stores = stores.split_whitespace().map(String::from).collect();
                        rec.stages.push((StageInfo { parallel }, stores));
                    }
                    ["real", threads, ns] => {
                        let threads = threads.parse().map_err(|_| bad("bad thread count"))?;
                        let ns = ns.parse().map_err(|_| bad("bad time"))?;
                        rec.real.push((threads, ns));
                    }
                    _ => {}
                }
                continue;
            }
            if !header {
                if line != "frame,stage,job,store,rows,ns" {
                    return Err(bad("expected the header frame,stage,job,store,rows,ns"));
                }
                header = true;
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            let [frame, stage, kind, store, rows, ns] = fields.as_slice() else {
                return Err(bad("expected 6 fields"));
            };
            let frame: usize = frame.parse().map_err(|_| bad("bad frame"))?;
            if frame + 1 != rec.frames.len() {
                if frame != rec.frames.len() {
                    return Err(bad("frames must come in order from 0"));
                }
                rec.frames.push(Vec::new());
            }
            let stage = match *stage {
                "-" => None,
                k => match k.parse::<usize>() {
                    Ok(k) if k < rec.stages.len() => Some(k),
                    _ => return Err(bad("no such stage")),
                },
            };
            let kind = match (*kind, stage) {
                ("store", Some(_)) if !store.is_empty() => Kind::Store(store.to_string()),
                ("rest", Some(_)) => Kind::Rest,
                ("commands", Some(_)) => Kind::Commands,
                ("respawn", None) => Kind::Respawn,
                _ => {
                    return Err(bad(
                        "a store (named), rest or commands of a stage, or respawn",
                    ))
                }
            };
            let rows = rows.parse().map_err(|_| bad("bad rows"))?;
            let ns = ns.parse().map_err(|_| bad("bad time"))?;
            rec.frames
                .last_mut()
                .expect("a frame was pushed")
                .push((Job { stage, kind, ns }, rows));
        }
        if !header {
            return Err("no header line frame,stage,job,store,rows,ns".into());
        }
        Ok(rec)
    }

    /// Reads the file at `path`.
    pub(crate) fn read(path: &Path) -> Result<Recording, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Recording::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Recording {
        let job = |stage, kind, ns| Job { stage, kind, ns };
        Recording {
            stages: vec![
                (
                    StageInfo { parallel: true },
                    vec!["Body".into(), "Ship".into()],
                ),
                (StageInfo { parallel: false }, vec![]),
            ],
            frames: vec![
                vec![
                    (job(Some(0), Kind::Store("Body".into()), 1_200), 30),
                    (job(Some(0), Kind::Store("Ship".into()), 0), 0),
                    (job(Some(0), Kind::Rest, 40), 0),
                    (job(Some(1), Kind::Rest, 7), 0),
                    (job(Some(1), Kind::Commands, 90), 0),
                    (job(None, Kind::Respawn, 300), 0),
                ],
                vec![(job(None, Kind::Respawn, 1), 0)],
            ],
            real: vec![(1, 1_600.0), (2, 1_000.0)],
        }
    }

    #[test]
    fn a_recording_reads_back_as_written() {
        let rec = sample();
        let text = rec.to_csv("the main job\nsecond line");
        assert!(text.starts_with("# the main job\n# second line\n# stage,0,parallel,Body Ship\n"));
        assert!(
            text.contains("\n0,0,store,Body,30,1200\n0,0,store,Ship,0,0\n"),
            "{text}"
        );
        assert!(
            text.contains("\n0,-,respawn,,0,300\n1,-,respawn,,0,1\n"),
            "{text}"
        );
        assert_eq!(Recording::parse(&text), Ok(rec));
    }

    #[test]
    fn a_bad_file_is_an_error_with_its_line() {
        let text = sample().to_csv("");
        let bad = |from: &str, to: &str| Recording::parse(&text.replacen(from, to, 1));
        assert_eq!(
            bad("0,0,store,Body,30", "0,9,store,Body,30").unwrap_err(),
            "line 6: no such stage: `0,9,store,Body,30,1200`"
        );
        assert!(bad("1,-,respawn", "3,-,respawn")
            .unwrap_err()
            .contains("frames must come in order from 0"));
        assert!(bad("0,0,rest,,0,40", "0,0,rest,,0")
            .unwrap_err()
            .contains("expected 6 fields"));
        assert!(bad("0,0,store,Ship,", "0,0,store,,")
            .unwrap_err()
            .contains("a store (named)"));
        assert!(bad("frame,stage", "frames,stage")
            .unwrap_err()
            .contains("expected the header"));
        assert!(bad("# stage,0,parallel", "# stage,1,parallel")
            .unwrap_err()
            .contains("numbered 0, 1"));
        assert_eq!(
            Recording::parse("# nothing\n").unwrap_err(),
            "no header line frame,stage,job,store,rows,ns"
        );
    }
}
