//! sigecs.
