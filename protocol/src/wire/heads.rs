//! Counts the data items of a CBOR frame in one pass over its bytes, without
//! building them, so that [`super::decode`] can refuse a frame of many tiny
//! items before `ciborium` turns each into a `Value` of 32 bytes or more: a
//! 1 MiB frame of one-byte integers made it hold 32 MiB (issue 46: an input
//! written for the `wire_frame` fuzz target broke its heap bound).
//!
//! Every item head counts once (a break byte does not); the content of a
//! definite-length byte or text string is skipped. Malformed or truncated
//! input simply ends the count: the parser that runs next says what is wrong.

/// The data items in `frame` (heads, nested ones included).
pub(super) fn count(frame: &[u8]) -> usize {
    let mut at = 0usize;
    let mut items = 0usize;
    while let Some(&head) = frame.get(at) {
        at += 1;
        if head == 0xff {
            continue;
        }
        items += 1;
        let (major, info) = (head >> 5, head & 0x1f);
        let arg_len = match info {
            0..=23 | 31 => 0,
            24 => 1,
            25 => 2,
            26 => 4,
            27 => 8,
            _ => break,
        };
        let Some(arg) = frame.get(at..at + arg_len) else {
            break;
        };
        at += arg_len;
        if (major == 2 || major == 3) && info != 31 {
            let len = if info < 24 {
                u64::from(info)
            } else {
                arg.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b))
            };
            match usize::try_from(len)
                .ok()
                .and_then(|len| at.checked_add(len))
            {
                Some(end) => at = end,
                None => break,
            }
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn heads_are_counted_and_string_contents_skipped() {
        // [3, null, [[1, h'0000']]]
        assert_eq!(count(&[0x83, 0x03, 0xf6, 0x81, 0x82, 0x01, 0x42, 0, 0]), 7);
        // "ab" as an indefinite text of two chunks: the head and two chunks.
        assert_eq!(count(&[0x7f, 0x61, b'a', 0x61, b'b', 0xff]), 3);
        // A float64 and a 2-byte length.
        assert_eq!(count(&[0xfb, 0, 0, 0, 0, 0, 0, 0, 0]), 1);
        assert_eq!(count(&[0x59, 0, 2, 9, 9, 0x01]), 2);
        // Truncated or malformed: what was read so far.
        assert_eq!(count(&[0x82, 0x5b, 0xff]), 2);
        assert_eq!(count(&[0x82, 0x1c]), 2);
        assert_eq!(count(&[]), 0);
    }
}
