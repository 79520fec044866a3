//! `initialize`: building the request for each API version and validating the response
//! (section 1.1).
