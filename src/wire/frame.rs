//! Splitting a byte stream into LF-terminated frames, with a bound on frame size.
//!
//! Frames end at LF (0x0A) only: CR, U+2028 and U+2029 are ordinary bytes here. A
//! frame whose size, LF included, exceeds the limit is discarded up to the next LF and
//! reported as [`Split::Oversized`]; the frames before and after it are delivered
//! unchanged (issue 2, "Wire"). Memory use is bounded by the limit.

use super::mapped::MappedBuf;
use super::salvage::SALVAGE_HEAD_BYTES;

/// Largest incomplete frame kept in an ordinary `Vec`; a longer one moves to a
/// [`MappedBuf`] of its own, returned to the kernel when the frame is done (see
/// [`super::mapped`] for why).
pub const HEAP_PARTIAL_BYTES: usize = 64 * 1024;

/// One item produced by [`FrameSplitter::push`].
#[derive(Debug, PartialEq, Eq)]
pub enum Split<'a> {
    /// A complete frame, without its LF.
    Frame(&'a [u8]),
    /// A frame that exceeded the limit and was discarded.
    Oversized {
        /// Its size including the LF.
        bytes: usize,
        /// Its first bytes (at most [`SALVAGE_HEAD_BYTES`]), kept so the host can still
        /// read which request it answers ([`crate::wire::salvage`]).
        head: &'a [u8],
    },
}

/// Incremental LF frame splitter with a size bound.
#[derive(Debug)]
pub struct FrameSplitter {
    /// Bytes of an incomplete frame carried over from earlier reads, while they are at
    /// most [`HEAP_PARTIAL_BYTES`].
    partial: Vec<u8>,
    /// The bytes of an incomplete frame longer than that.
    large: Option<MappedBuf>,
    /// Largest frame accepted, LF included.
    limit: usize,
    /// While discarding an oversized frame: bytes dropped so far.
    discarding: Option<usize>,
    /// The first bytes of the frame being discarded.
    head: Vec<u8>,
}

impl FrameSplitter {
    /// A splitter accepting frames of at most `limit` bytes, LF included.
    ///
    /// # Panics
    /// If `limit` is zero: no frame, not even an empty one, would fit.
    pub fn new(limit: usize) -> FrameSplitter {
        assert!(limit > 0, "a frame limit must leave room for the LF");
        FrameSplitter {
            partial: Vec::new(),
            large: None,
            limit,
            discarding: None,
            head: Vec::new(),
        }
    }

    /// The limit this splitter enforces, LF included.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Changes the limit; takes effect from the next frame boundary onwards.
    pub fn set_limit(&mut self, limit: usize) {
        assert!(limit > 0, "a frame limit must leave room for the LF");
        self.limit = limit;
    }

    /// Feeds `data` and calls `sink` for every frame it completes, in order.
    pub fn push(&mut self, mut data: &[u8], mut sink: impl FnMut(Split<'_>)) {
        let max_content = self.limit - 1;
        while !data.is_empty() {
            let newline = memchr::memchr(b'\n', data);
            if let Some(dropped) = self.discarding {
                match newline {
                    Some(at) => {
                        self.discarding = None;
                        sink(Split::Oversized {
                            bytes: dropped + at + 1,
                            head: &self.head,
                        });
                        self.head.clear();
                        data = &data[at + 1..];
                    }
                    None => {
                        self.discarding = Some(dropped + data.len());
                        return;
                    }
                }
                continue;
            }
            match newline {
                Some(at) => {
                    let content = &data[..at];
                    if self.pending() + content.len() > max_content {
                        let bytes = self.pending() + at + 1;
                        self.keep_head(content);
                        self.clear_partial();
                        sink(Split::Oversized {
                            bytes,
                            head: &self.head,
                        });
                        self.head.clear();
                    } else if self.pending() == 0 {
                        sink(Split::Frame(content));
                    } else {
                        self.append(content, max_content);
                        sink(Split::Frame(self.partial_bytes()));
                        self.clear_partial();
                    }
                    data = &data[at + 1..];
                }
                None => {
                    if self.pending() + data.len() > max_content {
                        self.discarding = Some(self.pending() + data.len());
                        self.keep_head(data);
                        self.clear_partial();
                        self.partial = Vec::new();
                    } else {
                        self.append(data, max_content);
                    }
                    return;
                }
            }
        }
    }

    /// Bytes of the incomplete frame held.
    fn pending(&self) -> usize {
        self.large
            .as_ref()
            .map_or(self.partial.len(), MappedBuf::len)
    }

    /// The incomplete frame held.
    fn partial_bytes(&self) -> &[u8] {
        match &self.large {
            Some(large) => large.as_slice(),
            None => &self.partial,
        }
    }

    /// Appends `more` (which fits in `max_content` with what is held) to the incomplete
    /// frame, moving it to a mapping of its own once it outgrows [`HEAP_PARTIAL_BYTES`].
    fn append(&mut self, more: &[u8], max_content: usize) {
        if let Some(large) = &mut self.large {
            large.extend_from_slice(more);
        } else if self.partial.len() + more.len() > HEAP_PARTIAL_BYTES {
            let mut large = MappedBuf::with_capacity(max_content);
            large.extend_from_slice(&self.partial);
            large.extend_from_slice(more);
            self.large = Some(large);
            // The heap part is at most HEAP_PARTIAL_BYTES; it is kept for the next frame.
            self.partial.clear();
        } else {
            self.partial.extend_from_slice(more);
        }
    }

    /// Forgets the incomplete frame; a mapping is returned to the kernel.
    fn clear_partial(&mut self) {
        self.partial.clear();
        self.large = None;
    }

    /// Keeps the first bytes of the partial frame followed by `more` as the head of an
    /// oversized frame.
    fn keep_head(&mut self, more: &[u8]) {
        self.head.clear();
        let from_partial = self.pending().min(SALVAGE_HEAD_BYTES);
        let head = self.partial_bytes()[..from_partial].to_vec();
        self.head.extend_from_slice(&head);
        let rest = SALVAGE_HEAD_BYTES - from_partial;
        self.head.extend_from_slice(&more[..more.len().min(rest)]);
    }

    /// Ends the stream: returns how many bytes of an unterminated last frame were
    /// dropped, if any. The splitter is then empty.
    pub fn finish(&mut self) -> Option<usize> {
        let pending = match self.discarding.take() {
            Some(dropped) => dropped,
            None => self.pending(),
        };
        self.partial = Vec::new();
        self.large = None;
        self.head = Vec::new();
        (pending > 0).then_some(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_frame_spanning_reads_arrives_whole_and_its_mapping_goes_with_it() {
        let limit = 1024 * 1024;
        let mut frame = b"{\"text\":\"".to_vec();
        frame.extend(vec![b'y'; 300 * 1024]);
        frame.extend_from_slice(b"\"}\n{\"small\":1}\n");
        let chunks: Vec<&[u8]> = frame.chunks(64 * 1024).collect();
        let out = split_all(limit, &chunks);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].as_ref().unwrap().len(), 300 * 1024 + 11);
        assert_eq!(out[1], Ok(b"{\"small\":1}".to_vec()));
        let mut splitter = FrameSplitter::new(limit);
        splitter.push(&frame[..200 * 1024], |_| {});
        assert!(splitter.large.is_some(), "held in a mapping of its own");
        splitter.push(&frame[200 * 1024..], |_| {});
        assert!(splitter.large.is_none(), "unmapped once the frame is done");
        // Past the limit it is discarded, its head kept, as before.
        let mut over = vec![b'z'; 2 * limit];
        over.push(b'\n');
        let chunks: Vec<&[u8]> = over.chunks(64 * 1024).collect();
        assert_eq!(split_all(limit, &chunks), [Err(2 * limit + 1)]);
    }

    fn split_all(limit: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, usize>> {
        let mut splitter = FrameSplitter::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, |item| match item {
                Split::Frame(f) => out.push(Ok(f.to_vec())),
                Split::Oversized { bytes, .. } => out.push(Err(bytes)),
            });
        }
        out
    }

    #[test]
    fn splits_on_lf_only() {
        let out = split_all(64, &["a\r\nb\u{2028}c\n\n".as_bytes()]);
        assert_eq!(
            out,
            vec![
                Ok(b"a\r".to_vec()),
                Ok("b\u{2028}c".as_bytes().to_vec()),
                Ok(vec![])
            ]
        );
    }

    #[test]
    fn joins_frames_across_reads() {
        let out = split_all(64, &[b"{\"a\"", b":1}\n{", b"}\n"]);
        assert_eq!(out, vec![Ok(b"{\"a\":1}".to_vec()), Ok(b"{}".to_vec())]);
    }

    #[test]
    fn limit_counts_the_lf() {
        // limit 4: "abc\n" fits, "abcd\n" does not.
        let out = split_all(4, &[b"abc\nabcd\nxy\n"]);
        assert_eq!(out, vec![Ok(b"abc".to_vec()), Err(5), Ok(b"xy".to_vec())]);
    }

    #[test]
    fn oversized_frame_spanning_reads_is_discarded_and_resyncs() {
        let out = split_all(8, &[b"ok\n12345", b"67890", b"abc\nnext\n"]);
        assert_eq!(out, vec![Ok(b"ok".to_vec()), Err(14), Ok(b"next".to_vec())]);
    }

    #[test]
    fn oversized_frames_keep_their_head() {
        let mut s = FrameSplitter::new(8);
        let mut heads = Vec::new();
        let mut record = |item: Split<'_>| {
            if let Split::Oversized { bytes, head } = item {
                heads.push((bytes, head.to_vec()));
            }
        };
        s.push(
            b"abcdefghij
abc",
            &mut record,
        );
        s.push(b"defghij", &mut record);
        s.push(
            b"klm
ok
",
            &mut record,
        );
        assert_eq!(
            heads,
            vec![(11, b"abcdefghij".to_vec()), (14, b"abcdefghij".to_vec())]
        );
        let long = vec![b'x'; 3 * SALVAGE_HEAD_BYTES];
        let mut s = FrameSplitter::new(8);
        s.push(&long, |_| {});
        s.push(b"
", |item| {
            assert!(matches!(item, Split::Oversized { head, .. } if head.len() == SALVAGE_HEAD_BYTES))
        });
    }

    #[test]
    fn finish_reports_unterminated_tail() {
        let mut s = FrameSplitter::new(16);
        s.push(b"done\npart", |_| {});
        assert_eq!(s.finish(), Some(4));
        assert_eq!(s.finish(), None);
    }
}
