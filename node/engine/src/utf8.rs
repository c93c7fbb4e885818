//! Joins token pieces into text: a token may end inside a UTF-8 character
//! (emoji, Cyrillic in byte-level vocabularies), so bytes wait until the
//! character is whole and only whole characters are streamed.

/// Bytes of an unfinished character, carried to the next piece.
#[derive(Debug, Default)]
pub(crate) struct Utf8Joiner {
    pending: Vec<u8>,
}

/// The longest a UTF-8 character is: a longer invalid tail is not waiting
/// for more bytes, it is broken, and is replaced rather than held forever.
const MAX_CHAR_BYTES: usize = 4;

impl Utf8Joiner {
    /// Adds `piece`; returns the text that is now whole.
    pub(crate) fn push(&mut self, piece: &[u8]) -> String {
        self.pending.extend_from_slice(piece);
        match std::str::from_utf8(&self.pending) {
            Ok(text) => {
                let text = text.to_owned();
                self.pending.clear();
                text
            }
            Err(e) => {
                let valid = e.valid_up_to();
                let tail = self.pending.len() - valid;
                if e.error_len().is_none() && tail < MAX_CHAR_BYTES {
                    let text = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
                    self.pending.drain(..valid);
                    text
                } else {
                    self.finish()
                }
            }
        }
    }

    /// What is left at the end, invalid bytes replaced.
    pub(crate) fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_pieces_comes_out_whole() {
        let mut j = Utf8Joiner::default();
        let bytes = "жи".as_bytes();
        assert_eq!(j.push(&bytes[..1]), "");
        assert_eq!(j.push(&bytes[1..3]), "ж");
        assert_eq!(j.push(&bytes[3..]), "и");
        assert_eq!(j.finish(), "");
    }

    #[test]
    fn broken_bytes_are_replaced_not_held() {
        let mut j = Utf8Joiner::default();
        assert_eq!(j.push(&[b'a', 0xff, b'b']), "a\u{fffd}b");
        assert_eq!(j.push(&[0xe2, 0x82]), "");
        assert_eq!(j.finish(), "\u{fffd}");
    }
}
