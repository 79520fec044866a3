//! Overwriting secret bytes before their memory is freed or reused.

use std::ptr;
use std::sync::atomic::{compiler_fence, Ordering};

#[doc(hidden)]
/// Overwrites `bytes` with zeros in a way the compiler may not elide.
pub fn wipe_bytes(bytes: &mut [u8]) {
    for byte in bytes.iter_mut() {
        // SAFETY: `byte` is a valid, aligned, exclusive reference to one `u8`.
        unsafe { ptr::write_volatile(byte, 0) };
    }
    compiler_fence(Ordering::SeqCst);
}
