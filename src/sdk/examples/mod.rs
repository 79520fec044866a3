//! Example extensions bundled in the `octet-host` binary (run with
//! `octet-host __extension <name>`), and the kitchen-sink fixture used by tests.
