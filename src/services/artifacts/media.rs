//! The canonical media types of section 2.8 and their signatures.
//!
//! Section 2.8 supports "PNG, JPEG, GIF, WebP, WAV, MPEG audio, FLAC, Opus, AAC, and MP4
//! audio" under a "canonical MIME". The canonical spelling of each is exactly one
//! lowercase string, without parameters:
//!
//! | format     | canonical MIME | signature checked at the start of the bytes            |
//! |------------|----------------|--------------------------------------------------------|
//! | PNG        | `image/png`    | `89 50 4E 47 0D 0A 1A 0A`                              |
//! | JPEG       | `image/jpeg`   | `FF D8 FF`                                             |
//! | GIF        | `image/gif`    | `GIF87a` or `GIF89a`                                   |
//! | WebP       | `image/webp`   | `RIFF`, 4 size bytes, `WEBP`                           |
//! | WAV        | `audio/wav`    | `RIFF`, 4 size bytes, `WAVE`                           |
//! | MPEG audio | `audio/mpeg`   | an ID3v2 tag, or an MPEG audio frame header            |
//! | FLAC       | `audio/flac`   | `fLaC`                                                 |
//! | Opus       | `audio/opus`   | an Ogg page whose first packet begins `OpusHead`       |
//! | AAC        | `audio/aac`    | an ADTS frame header                                   |
//! | MP4 audio  | `audio/mp4`    | an `ftyp` box with an audio-capable brand              |
//!
//! Anything else is rejected, aliases and other spellings included: `image/jpg`,
//! `audio/mp3`, `audio/x-wav`, `audio/ogg`, `image/PNG`, `image/png; x=1`.
//!
//! Details of the structured signatures:
//! - ID3v2: `ID3`, a major version and a revision other than `FF`, a flags byte and four
//!   sync-safe size bytes (each below `80`).
//! - MPEG audio frame header: an 11-bit frame sync (`FF E`), a version other than the
//!   reserved `01`, a layer of I, II or III (the reserved layer `00` is the one ADTS uses
//!   and is refused), a bitrate index other than the invalid `1111` and a sampling-rate
//!   index other than the reserved `11`.
//! - Ogg Opus: `OggS`, stream structure version 0, the beginning-of-stream flag set, at
//!   least one segment, and `OpusHead` right after the segment table.
//! - ADTS: a 12-bit sync (`FF F`), layer `00`, a sampling-frequency index of at most 12,
//!   and at least the 7 bytes of a header without CRC.
//! - MP4: a 32-bit box size of at least 16 and within the bytes, a multiple of 4 past the
//!   16-byte prefix; type `ftyp` at offset 4; and a major or compatible brand among
//!   `M4A `, `M4B `, `mp41`, `mp42`, `isom`, `iso2` to `iso6`, and `dash`. The brand says
//!   the container may hold audio; the tracks themselves are not parsed.

use std::fmt;

use crate::validate::MediaKind;

/// A supported media type (section 2.8), named by its canonical MIME type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/gif`.
    Gif,
    /// `image/webp`.
    Webp,
    /// `audio/wav`.
    Wav,
    /// `audio/mpeg`.
    Mpeg,
    /// `audio/flac`.
    Flac,
    /// `audio/opus`.
    Opus,
    /// `audio/aac`.
    Aac,
    /// `audio/mp4`.
    Mp4,
}

/// The brands of an `ftyp` box that mark an MP4 file that may carry audio.
const MP4_AUDIO_BRANDS: &[&[u8; 4]] = &[
    b"M4A ", b"M4B ", b"mp41", b"mp42", b"isom", b"iso2", b"iso3", b"iso4", b"iso5", b"iso6",
    b"dash",
];

impl MediaType {
    /// Every supported media type.
    pub const ALL: [MediaType; 10] = [
        MediaType::Png,
        MediaType::Jpeg,
        MediaType::Gif,
        MediaType::Webp,
        MediaType::Wav,
        MediaType::Mpeg,
        MediaType::Flac,
        MediaType::Opus,
        MediaType::Aac,
        MediaType::Mp4,
    ];

    /// The canonical MIME type.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Gif => "image/gif",
            MediaType::Webp => "image/webp",
            MediaType::Wav => "audio/wav",
            MediaType::Mpeg => "audio/mpeg",
            MediaType::Flac => "audio/flac",
            MediaType::Opus => "audio/opus",
            MediaType::Aac => "audio/aac",
            MediaType::Mp4 => "audio/mp4",
        }
    }

    /// The media type whose canonical MIME type is exactly `mime_type`; byte for byte,
    /// so aliases, other cases and parameters are `None`.
    pub fn from_canonical(mime_type: &str) -> Option<MediaType> {
        MediaType::ALL
            .into_iter()
            .find(|media_type| media_type.as_str() == mime_type)
    }

    /// Whether the type is an image or audio: the content part that may reference it.
    pub fn kind(self) -> MediaKind {
        match self {
            MediaType::Png | MediaType::Jpeg | MediaType::Gif | MediaType::Webp => MediaKind::Image,
            MediaType::Wav
            | MediaType::Mpeg
            | MediaType::Flac
            | MediaType::Opus
            | MediaType::Aac
            | MediaType::Mp4 => MediaKind::Audio,
        }
    }

    /// True when `bytes` begin with this type's signature (see the module docs).
    pub fn signature_matches(self, bytes: &[u8]) -> bool {
        match self {
            MediaType::Png => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            MediaType::Jpeg => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
            MediaType::Gif => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
            MediaType::Webp => riff(bytes, b"WEBP"),
            MediaType::Wav => riff(bytes, b"WAVE"),
            MediaType::Mpeg => id3v2(bytes) || mpeg_frame(bytes),
            MediaType::Flac => bytes.starts_with(b"fLaC"),
            MediaType::Opus => ogg_opus(bytes),
            MediaType::Aac => adts(bytes),
            MediaType::Mp4 => mp4_audio(bytes),
        }
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A RIFF container of `form` type.
fn riff(bytes: &[u8], form: &[u8; 4]) -> bool {
    bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == form
}

/// An ID3v2 tag header.
fn id3v2(bytes: &[u8]) -> bool {
    match bytes {
        [b'I', b'D', b'3', major, revision, _flags, size @ ..] if size.len() >= 4 => {
            *major != 0xFF && *revision != 0xFF && size[..4].iter().all(|b| *b < 0x80)
        }
        _ => false,
    }
}

/// An MPEG audio (layer I, II or III) frame header.
fn mpeg_frame(bytes: &[u8]) -> bool {
    let [b0, b1, b2, _b3, ..] = *bytes else {
        return false;
    };
    let version = (b1 >> 3) & 0b11;
    let layer = (b1 >> 1) & 0b11;
    let bitrate = b2 >> 4;
    let sampling = (b2 >> 2) & 0b11;
    b0 == 0xFF
        && b1 & 0xE0 == 0xE0
        && version != 0b01
        && layer != 0b00
        && bitrate != 0b1111
        && sampling != 0b11
}

/// An ADTS (AAC) frame header.
fn adts(bytes: &[u8]) -> bool {
    if bytes.len() < 7 {
        return false;
    }
    let layer = (bytes[1] >> 1) & 0b11;
    let sampling = (bytes[2] >> 2) & 0b1111;
    bytes[0] == 0xFF && bytes[1] & 0xF0 == 0xF0 && layer == 0 && sampling <= 12
}

/// An Ogg page opening an Opus stream.
fn ogg_opus(bytes: &[u8]) -> bool {
    const HEADER: usize = 27;
    if bytes.len() < HEADER || !bytes.starts_with(b"OggS") {
        return false;
    }
    let version = bytes[4];
    let beginning_of_stream = bytes[5] & 0x02 != 0;
    let segments = usize::from(bytes[26]);
    let packet = HEADER + segments;
    version == 0
        && beginning_of_stream
        && segments > 0
        && bytes
            .get(packet..packet + 8)
            .is_some_and(|head| head == b"OpusHead")
}

/// An MP4 `ftyp` box with an audio-capable brand.
fn mp4_audio(bytes: &[u8]) -> bool {
    if bytes.len() < 16 || &bytes[4..8] != b"ftyp" {
        return false;
    }
    let size = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let Ok(size) = usize::try_from(size) else {
        return false;
    };
    if size < 16 || size > bytes.len() || (size - 16) % 4 != 0 {
        return false;
    }
    let major = &bytes[8..12];
    let compatible = bytes[16..size].chunks_exact(4);
    std::iter::once(major)
        .chain(compatible)
        .any(|brand| MP4_AUDIO_BRANDS.iter().any(|known| brand == &known[..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal PNG: signature plus the start of an IHDR chunk.
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR";

    fn ogg_page(version: u8, flags: u8, lacing: &[u8], packet: &[u8]) -> Vec<u8> {
        let mut page = b"OggS".to_vec();
        page.push(version);
        page.push(flags);
        page.extend_from_slice(&[0; 20]); // Granule, serial, sequence, checksum.
        page.push(u8::try_from(lacing.len()).unwrap());
        page.extend_from_slice(lacing);
        page.extend_from_slice(packet);
        page
    }

    fn ftyp(major: &[u8; 4], compatible: &[&[u8; 4]]) -> Vec<u8> {
        let size = 16 + 4 * compatible.len();
        let mut bytes = u32::try_from(size).unwrap().to_be_bytes().to_vec();
        bytes.extend_from_slice(b"ftyp");
        bytes.extend_from_slice(major);
        bytes.extend_from_slice(&[0, 0, 2, 0]);
        for brand in compatible {
            bytes.extend_from_slice(&brand[..]);
        }
        bytes
    }

    #[test]
    fn canonical_names_round_trip_and_aliases_are_refused() {
        for media_type in MediaType::ALL {
            assert_eq!(
                MediaType::from_canonical(media_type.as_str()),
                Some(media_type)
            );
            let top = media_type.as_str().split('/').next().unwrap();
            assert_eq!(top, media_type.kind().as_str());
        }
        for alias in [
            "image/jpg",
            "image/PNG",
            "IMAGE/png",
            "image/png; x=1",
            " image/png",
            "audio/mp3",
            "audio/x-wav",
            "audio/wave",
            "audio/ogg",
            "audio/x-flac",
            "audio/m4a",
            "video/mp4",
            "",
        ] {
            assert_eq!(MediaType::from_canonical(alias), None, "{alias}");
        }
    }

    #[test]
    fn png_jpeg_gif() {
        assert!(MediaType::Png.signature_matches(PNG));
        assert!(!MediaType::Png.signature_matches(&PNG[..7]));
        assert!(!MediaType::Png.signature_matches(b"\x89PNG\r\n\x1a\x0b"));
        assert!(MediaType::Jpeg.signature_matches(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]));
        assert!(!MediaType::Jpeg.signature_matches(&[0xFF, 0xD8]));
        assert!(!MediaType::Jpeg.signature_matches(&[0xFF, 0xD9, 0xFF]));
        assert!(MediaType::Gif.signature_matches(b"GIF87a\x01\x00"));
        assert!(MediaType::Gif.signature_matches(b"GIF89a\x01\x00"));
        assert!(!MediaType::Gif.signature_matches(b"GIF88a\x01\x00"));
        assert!(!MediaType::Gif.signature_matches(b"gif89a"));
    }

    #[test]
    fn riff_forms() {
        let webp = b"RIFF\x24\x00\x00\x00WEBPVP8 ";
        let wav = b"RIFF\x24\x00\x00\x00WAVEfmt ";
        assert!(MediaType::Webp.signature_matches(webp));
        assert!(!MediaType::Webp.signature_matches(wav));
        assert!(MediaType::Wav.signature_matches(wav));
        assert!(!MediaType::Wav.signature_matches(webp));
        assert!(!MediaType::Wav.signature_matches(b"RIFX\x24\x00\x00\x00WAVE"));
        assert!(!MediaType::Webp.signature_matches(b"RIFF\x24\x00\x00\x00WEB"));
    }

    #[test]
    fn mpeg_audio() {
        assert!(MediaType::Mpeg.signature_matches(b"ID3\x04\x00\x00\x00\x00\x00\x21"));
        assert!(!MediaType::Mpeg.signature_matches(b"ID3\x04\x00\x00\x00\x00\x80\x21"));
        assert!(!MediaType::Mpeg.signature_matches(b"ID3\xff\x00\x00\x00\x00\x00\x21"));
        assert!(!MediaType::Mpeg.signature_matches(b"ID3\x04\x00\x00\x00"));
        // MPEG-1 layer III, 128 kbit/s, 44.1 kHz.
        assert!(MediaType::Mpeg.signature_matches(&[0xFF, 0xFB, 0x90, 0x64]));
        // MPEG-2 layer II and MPEG-1 layer I.
        assert!(MediaType::Mpeg.signature_matches(&[0xFF, 0xF5, 0x80, 0x00]));
        assert!(MediaType::Mpeg.signature_matches(&[0xFF, 0xFF, 0x10, 0x00]));
        // MPEG 2.5 (sync FFE) layer III.
        assert!(MediaType::Mpeg.signature_matches(&[0xFF, 0xE3, 0x50, 0x00]));
        // ADTS (layer 00) is not MPEG audio.
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xF1, 0x50, 0x80]));
        // Reserved version, bad bitrate, reserved sampling rate, short, no sync.
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xEB, 0x90, 0x64]));
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xFB, 0xF0, 0x64]));
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xFB, 0x9C, 0x64]));
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xFB, 0x90]));
        assert!(!MediaType::Mpeg.signature_matches(&[0xFF, 0xDB, 0x90, 0x64]));
    }

    #[test]
    fn flac() {
        assert!(MediaType::Flac.signature_matches(b"fLaC\x00\x00\x00\x22"));
        assert!(!MediaType::Flac.signature_matches(b"FLAC\x00\x00\x00\x22"));
        assert!(!MediaType::Flac.signature_matches(b"fLa"));
    }

    #[test]
    fn opus() {
        let head = b"OpusHead\x01\x02\x38\x01\x80\xbb\x00\x00\x00\x00\x00";
        assert!(MediaType::Opus.signature_matches(&ogg_page(0, 0x02, &[19], head)));
        assert!(MediaType::Opus.signature_matches(&ogg_page(0, 0x02, &[19, 0], &head[..])));
        // Vorbis in Ogg, a non-first page, a bad version, no segments, cut short.
        let vorbis = b"\x01vorbis\x00\x00\x00\x00\x02";
        assert!(!MediaType::Opus.signature_matches(&ogg_page(0, 0x02, &[12], vorbis)));
        assert!(!MediaType::Opus.signature_matches(&ogg_page(0, 0x00, &[19], head)));
        assert!(!MediaType::Opus.signature_matches(&ogg_page(1, 0x02, &[19], head)));
        assert!(!MediaType::Opus.signature_matches(&ogg_page(0, 0x02, &[], head)));
        assert!(!MediaType::Opus.signature_matches(&ogg_page(0, 0x02, &[19], b"OpusHea")));
    }

    #[test]
    fn aac() {
        // MPEG-4 AAC LC, 44.1 kHz, stereo, no CRC.
        let header = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC];
        assert!(MediaType::Aac.signature_matches(&header));
        // MPEG-2 ADTS with CRC.
        assert!(MediaType::Aac.signature_matches(&[0xFF, 0xF8, 0x50, 0x80, 0x02, 0x1F, 0xFC]));
        assert!(!MediaType::Aac.signature_matches(&header[..6]));
        // An MPEG audio layer III header is not ADTS.
        assert!(!MediaType::Aac.signature_matches(&[0xFF, 0xFB, 0x90, 0x64, 0, 0, 0]));
        // A 0xFFE sync (MPEG 2.5) is not ADTS, nor is a reserved sampling index.
        assert!(!MediaType::Aac.signature_matches(&[0xFF, 0xE1, 0x50, 0x80, 0, 0, 0]));
        assert!(!MediaType::Aac.signature_matches(&[0xFF, 0xF1, 0x74, 0x80, 0, 0, 0]));
    }

    #[test]
    fn mp4_audio_brands() {
        assert!(MediaType::Mp4.signature_matches(&ftyp(b"M4A ", &[b"M4A ", b"mp42"])));
        assert!(MediaType::Mp4.signature_matches(&ftyp(b"M4B ", &[])));
        assert!(MediaType::Mp4.signature_matches(&ftyp(b"qt  ", &[b"dash"])));
        assert!(MediaType::Mp4.signature_matches(&ftyp(b"isom", &[])));
        // Brands without an audio-capable member, a wrong box type, broken sizes.
        assert!(!MediaType::Mp4.signature_matches(&ftyp(b"qt  ", &[b"avc1"])));
        let mut moov = ftyp(b"M4A ", &[]);
        moov[4..8].copy_from_slice(b"moov");
        assert!(!MediaType::Mp4.signature_matches(&moov));
        let mut short = ftyp(b"M4A ", &[b"mp42"]);
        short.truncate(18);
        assert!(!MediaType::Mp4.signature_matches(&short));
        let mut ragged = ftyp(b"M4A ", &[]);
        ragged[3] = 18;
        ragged.extend_from_slice(&[0, 0]);
        assert!(!MediaType::Mp4.signature_matches(&ragged));
        let mut tiny = ftyp(b"M4A ", &[]);
        tiny[3] = 8;
        assert!(!MediaType::Mp4.signature_matches(&tiny));
    }

    #[test]
    fn every_signature_is_refused_for_every_other_type() {
        let samples: Vec<(MediaType, Vec<u8>)> = vec![
            (MediaType::Png, PNG.to_vec()),
            (MediaType::Jpeg, vec![0xFF, 0xD8, 0xFF, 0xDB, 0, 0, 0]),
            (MediaType::Gif, b"GIF89a\x01\x00\x01\x00".to_vec()),
            (MediaType::Webp, b"RIFF\x24\x00\x00\x00WEBPVP8 ".to_vec()),
            (MediaType::Wav, b"RIFF\x24\x00\x00\x00WAVEfmt ".to_vec()),
            (MediaType::Mpeg, vec![0xFF, 0xFB, 0x90, 0x64, 0, 0, 0]),
            (MediaType::Flac, b"fLaC\x00\x00\x00\x22".to_vec()),
            (
                MediaType::Opus,
                ogg_page(
                    0,
                    0x02,
                    &[19],
                    b"OpusHead\x01\x02\x38\x01\x80\xbb\x00\x00\x00\x00\x00",
                ),
            ),
            (
                MediaType::Aac,
                vec![0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC],
            ),
            (MediaType::Mp4, ftyp(b"M4A ", &[b"mp42"])),
        ];
        for (owner, bytes) in &samples {
            for media_type in MediaType::ALL {
                assert_eq!(
                    media_type.signature_matches(bytes),
                    media_type == *owner,
                    "{media_type} on a {owner} sample"
                );
            }
        }
    }
}
