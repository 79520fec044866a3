//! Lifecycle state machine, restart backoff, reload and shutdown sequencing (section 5).
