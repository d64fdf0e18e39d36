//! sigecs proc macros.
