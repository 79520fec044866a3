//! A byte buffer of fixed capacity in an anonymous memory mapping of its own, for the
//! large frames a generation's reader holds (issue 48).
//!
//! Why not a `Vec`: each generation's reader runs on a thread of its own, and glibc
//! gives each thread its own malloc arena. Once a large block has been freed, glibc
//! raises its mmap threshold to that size and its trim threshold to twice it, so later
//! megabyte buffers come from the arenas and every arena keeps up to that much free
//! memory at its top, which `malloc_trim` does not return for thread arenas: a host
//! whose extensions restart while they send large results grows by a few MiB per arena
//! (benches/README.md, "Memory over generation churn"). A mapping is returned to the
//! kernel by `munmap` the moment the buffer is dropped, whatever the allocator does.
//!
//! Only the pages written are ever resident: a mapping of the frame limit costs address
//! space, not memory. Where no mapping can be made (or off Unix), the buffer is a
//! `Vec` of the same capacity.

/// A buffer of at most `capacity` bytes, in a mapping of its own on Unix.
pub struct MappedBuf {
    storage: Storage,
    len: usize,
}

enum Storage {
    #[cfg(unix)]
    Mapped {
        ptr: std::ptr::NonNull<u8>,
        capacity: usize,
    },
    Heap(Vec<u8>),
}

// The mapping is owned by the buffer alone, like a `Vec`'s allocation.
unsafe impl Send for MappedBuf {}
unsafe impl Sync for MappedBuf {}

impl MappedBuf {
    /// An empty buffer that can hold `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> MappedBuf {
        MappedBuf {
            storage: Storage::new(capacity.max(1)),
            len: 0,
        }
    }

    /// A buffer holding a copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> MappedBuf {
        let mut buf = MappedBuf::with_capacity(bytes.len());
        buf.extend_from_slice(bytes);
        buf
    }

    /// The bytes it holds.
    pub fn as_slice(&self) -> &[u8] {
        match &self.storage {
            #[cfg(unix)]
            // SAFETY: the first `len` bytes of the mapping were written by
            // `extend_from_slice`, and the mapping lives as long as `self`.
            Storage::Mapped { ptr, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), self.len)
            },
            Storage::Heap(vec) => &vec[..self.len],
        }
    }

    /// How many bytes it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many bytes it can hold.
    pub fn capacity(&self) -> usize {
        match &self.storage {
            #[cfg(unix)]
            Storage::Mapped { capacity, .. } => *capacity,
            Storage::Heap(vec) => vec.len(),
        }
    }

    /// Appends `bytes`.
    ///
    /// # Panics
    /// If they do not fit in the capacity.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        assert!(end <= self.capacity(), "a mapped buffer never grows");
        match &mut self.storage {
            #[cfg(unix)]
            // SAFETY: `end` is within the mapping, which `self` owns exclusively.
            Storage::Mapped { ptr, .. } => unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    ptr.as_ptr().add(self.len),
                    bytes.len(),
                );
            },
            Storage::Heap(vec) => vec[self.len..end].copy_from_slice(bytes),
        }
        self.len = end;
    }
}

impl Storage {
    fn new(capacity: usize) -> Storage {
        #[cfg(unix)]
        {
            // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    capacity,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if ptr != libc::MAP_FAILED {
                if let Some(ptr) = std::ptr::NonNull::new(ptr.cast::<u8>()) {
                    return Storage::Mapped { ptr, capacity };
                }
            }
        }
        Storage::Heap(vec![0; capacity])
    }
}

impl Drop for MappedBuf {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Storage::Mapped { ptr, capacity } = self.storage {
            // SAFETY: the mapping was made by `Storage::new` with this length and is
            // not used after this.
            unsafe {
                libc::munmap(ptr.as_ptr().cast(), capacity);
            }
        }
    }
}

impl std::fmt::Debug for MappedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedBuf")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_was_appended_up_to_its_capacity() {
        let mut buf = MappedBuf::with_capacity(1 << 20);
        assert!(buf.is_empty());
        buf.extend_from_slice(b"{\"a\":");
        buf.extend_from_slice(&[b'1'; 1000]);
        assert_eq!(buf.len(), 1005);
        assert_eq!(&buf.as_slice()[..5], b"{\"a\":");
        assert_eq!(buf.capacity(), 1 << 20);
        let copy = MappedBuf::copy_of(buf.as_slice());
        assert_eq!(copy.as_slice(), buf.as_slice());
        let moved = std::thread::spawn(move || copy.len()).join().unwrap();
        assert_eq!(moved, 1005);
    }
}
