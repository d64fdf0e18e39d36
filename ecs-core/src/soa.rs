//! SoA component managers (seed part 2). Work in progress.
