//! Transform hierarchy (seed part 3). Work in progress.
